# bddgen: spec=baggage-allowance-by-fare-class-4bb787 source=hand-written hash=c9e20898f71e
@spec @hand-written
Feature: Baggage allowance by fare class
  Hand-written example: run it with `bddgen run`.

  Rule: Baggage allowance by fare class
    Given a passenger holds an Aurelian Skyways ticket in one fare class
    When the passenger asks what baggage the fare includes and what extra bags cost
    Then the assistant states the included bags, weight limits and fees exactly as the fare table and the baggage policy give them
    And the assistant says it cannot answer questions the documents do not cover

    @conversation @conv:standard-plus-bags @docs:tables/fare_classes,policies/baggage,policies/loyalty_programme @chain-length:3
    Scenario: Checked bags on a Standard Plus ticket for a Gold member
      # turn 1 | SINGLE-DOC | docs: tables/fare_classes | exact: lookup tables/fare_classes
      When the user asks "How many checked bags are included in a Standard Plus ticket?"
      Then the answer should agree with "Two checked bags, each up to 23 kg in the economy cabin."
      And the answer should contain "2"
      # turn 2 | SINGLE-DOC | docs: policies/baggage
      When the user asks "How much does an extra checked bag cost if I add it in Manage Booking two days before departure?"
      Then the answer should agree with "35 EUR per bag per flight, because it is added at least 24 hours before departure."
      # turn 3 | MULTI-DOC | docs: tables/fare_classes, policies/baggage, policies/loyalty_programme
      When the user asks "I am a Gold member of Aurelian Horizons. How many checked bags do I get on that fare?"
      Then the answer should agree with "Four: the two bags included in the Standard Plus fare plus two extra bags for Gold members, each up to 23 kg."
      # turn 4 | UNANSWERABLE
      When the user asks "How many bags did Aurelian Skyways passengers check in last year?"
      Then the assistant should say it cannot answer
      # turn 5 | SYNTHESIS | docs: policies/baggage
      When the user asks "So what is the heaviest bag I can check in economy without paying extra?"
      Then the answer should agree with "23 kg; a bag between 23 and 32 kg costs an overweight charge of 50 EUR per bag per flight."
      Then the conversation should satisfy the spec
