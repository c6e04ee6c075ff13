# bddgen: spec=travelling-with-a-pet-2341d0 source=hand-written hash=f073301b63c9
@spec @hand-written
Feature: Travelling with a pet
  Hand-written example: run it with `bddgen run`.

  Rule: Travelling with a pet
    Given a passenger wants to bring a cat or a dog on an Aurelian Skyways flight
    When the passenger asks whether and how the pet can travel
    Then the assistant gives the pet policy's limits, fees, routes and deadlines
    And the assistant does not invent services the policy does not describe

    @conversation @conv:cat-in-cabin @docs:policies/pets @chain-length:1
    Scenario: A cat in the cabin
      # turn 1 | SINGLE-DOC | docs: policies/pets
      When the user asks "Can I bring my cat in the cabin?"
      Then the answer should agree with "Yes, if the cat and its carrier together weigh no more than 8 kg and the flight is up to 3,500 km; the fee is 55 EUR per pet per flight."
      # turn 2 | SINGLE-DOC | docs: policies/pets
      When the user asks "Can it fly with me to Reykjavik?"
      Then the answer should agree with "No. Aurelian Skyways does not carry pets, other than recognised assistance dogs, on flights to or from Reykjavik (KEF)."
      # turn 3 | SINGLE-DOC | docs: policies/pets
      When the user asks "How far ahead do I have to add the cat to my booking for another destination?"
      Then the answer should agree with "At least 48 hours before departure, through the contact centre; a pet cannot be added at the airport."
      # turn 4 | UNANSWERABLE
      When the user asks "Which brand of cat food is served on board?"
      Then the assistant should say it cannot answer
      Then the conversation should satisfy the spec
