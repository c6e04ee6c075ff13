# bddgen: spec=varen-cup-finals-and-their-venue-6b146c source=hand-written hash=e6fde1463f46
@spec @hand-written
Feature: Varen Cup finals and their venue
  Hand-written example: run it with `bddgen run`.

  Rule: Varen Cup finals and their venue
    Given a fan is curious about a Varen Cup final
    When the fan asks about the result, the scorers, the Hallam Medal and the stadium
    Then the assistant gives scores, attendances and award winners exactly as the finals table and articles record them
    And the assistant says plainly when the documents do not contain the answer

    @conversation @conv:final-2023 @docs:tables/varen_cup_finals,text/2023-varen-cup-final,text/hallam-medal @chain-length:3
    Scenario: The 2023 Varen Cup final
      # turn 1 | SINGLE-DOC | docs: tables/varen_cup_finals | exact: lookup tables/varen_cup_finals
      When the user asks "Who won the 2023 Varen Cup final?"
      Then the answer should agree with "Harbour City FC, who beat Eastquay Olympic 3-2 after extra time."
      And the answer should contain "3-2"
      # turn 2 | SINGLE-DOC | docs: text/2023-varen-cup-final
      When the user asks "Who scored the winning goal?"
      Then the answer should agree with "Elias Marwood, in the 117th minute."
      # turn 3 | MULTI-DOC | docs: text/2023-varen-cup-final, tables/varen_cup_finals
      When the user asks "Had he won the Hallam Medal before?"
      Then the answer should agree with "Yes. The 2023 medal was his second, after the 2018 final against Eastquay Olympic."
      # turn 4 | SINGLE-DOC | docs: tables/varen_cup_finals | exact: lookup tables/varen_cup_finals
      When the user asks "How many spectators watched that final?"
      Then the answer should agree with "61,811 spectators."
      And the answer should contain "61811"
      # turn 5 | UNANSWERABLE
      When the user asks "Who refereed that final?"
      Then the assistant should say it cannot answer
      Then the conversation should satisfy the spec

    @conversation @conv:crownfield @docs:text/crownfield-stadium,tables/varen_cup_finals @chain-length:2
    Scenario: The home of the Varen Cup final
      # turn 1 | SINGLE-DOC | docs: text/crownfield-stadium
      When the user asks "At which stadium is the Varen Cup final played?"
      Then the answer should agree with "At Crownfield Stadium, the national stadium of Veloria on the northern edge of Harbour City."
      # turn 2 | SINGLE-DOC | docs: text/crownfield-stadium
      When the user asks "What is its record attendance?"
      Then the answer should agree with "61,955, set at the final of the 2012 Meridian Nations Cup."
      # turn 3 | SINGLE-DOC | docs: tables/varen_cup_finals | exact: lookup tables/varen_cup_finals
      When the user asks "Which final since 1999 was not played there?"
      Then the answer should agree with "The 2020 final, which roof works moved to Redmarsh Stadium."
      And the answer should contain "Redmarsh Stadium"
      # turn 4 | UNANSWERABLE
      When the user asks "How much did those roof works cost?"
      Then the assistant should say it cannot answer
      Then the conversation should satisfy the spec
