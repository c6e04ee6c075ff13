# bddgen: spec=delayed-and-cancelled-flights-08826e source=hand-written hash=eedcbb08d5eb
@spec @hand-written
Feature: Delayed and cancelled flights
  Hand-written example: run it with `bddgen run`.

  Rule: Delayed and cancelled flights
    Given a passenger's Aurelian Skyways flight is delayed or cancelled
    When the passenger asks about the flight's status and what they are entitled to
    Then the assistant reports the status and delay from the flight schedule
    And the assistant explains care, compensation and rebooking only as the delays and cancellation policies state them

    @conversation @conv:xv217-delay @docs:tables/flights,policies/delays_and_compensation @chain-length:2
    Scenario: A long delay on the Copenhagen to Boston flight
      # turn 1 | SINGLE-DOC | docs: tables/flights | exact: lookup tables/flights
      When the user asks "What is the status of flight XV217?"
      Then the answer should agree with "XV217 from Copenhagen to Boston on 12 June 2025 is delayed by 210 minutes."
      And the answer should contain "210"
      # turn 2 | SINGLE-DOC | docs: policies/delays_and_compensation
      When the user asks "On a flight of more than 3,500 km, when are meal vouchers handed out and what are they worth?"
      Then the answer should agree with "Once the expected departure delay reaches 4 hours (240 minutes); the vouchers are worth 35 EUR per passenger."
      # turn 3 | SINGLE-DOC | docs: policies/delays_and_compensation
      When the user asks "If I reach my destination 3 hours late or more on such a flight, how much compensation is paid?"
      Then the answer should agree with "600 EUR per passenger for flights over 3,500 km."
      # turn 4 | SINGLE-DOC | docs: policies/delays_and_compensation
      When the user asks "Would that still apply if the delay were caused by an air traffic control strike?"
      Then the answer should agree with "No. Strikes by air traffic control staff are extraordinary circumstances, so no compensation is due, although care still applies."
      # turn 5 | UNANSWERABLE
      When the user asks "What is the name of the captain flying XV217?"
      Then the assistant should say it cannot answer
      Then the conversation should satisfy the spec

    @conversation @conv:xv215-cancelled @docs:tables/flights,policies/cancellation_and_refunds @chain-length:2
    Scenario: A cancelled flight to Dublin
      # turn 1 | SINGLE-DOC | docs: tables/flights | exact: lookup tables/flights
      When the user asks "Is flight XV215 to Dublin operating today?"
      Then the answer should agree with "No, XV215 from Copenhagen to Dublin on 12 June 2025 is cancelled."
      And the answer should contain "cancelled"
      # turn 2 | SINGLE-DOC | docs: policies/cancellation_and_refunds
      When the user asks "What are my options now that it is cancelled?"
      Then the answer should agree with "A full refund of the unused ticket, free rebooking on the next Aurelian Skyways flight with available seats, or rebooking on a later date of your choice without a fee or fare difference."
      # turn 3 | SINGLE-DOC | docs: policies/cancellation_and_refunds
      When the user asks "Does that also apply to a Saver ticket?"
      Then the answer should agree with "Yes, these choices apply to all fare classes, including Saver and Award."
      # turn 4 | UNANSWERABLE
      When the user asks "Why was the flight cancelled?"
      Then the assistant should say it cannot answer
      Then the conversation should satisfy the spec
