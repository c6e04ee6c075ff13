# bddgen: spec=a-league-season-s-champions-and-standings-0f1e06 source=hand-written hash=7c6610724ea3
@spec @hand-written
Feature: A league season's champions and standings
  Hand-written example: run it with `bddgen run`.

  Rule: A league season's champions and standings
    Given a fan wants to know how a Velorian Premier Division season ended
    When the fan asks about the champions, their coach and the gaps between clubs
    Then the assistant reports points and positions exactly as the season's final table gives them
    And the assistant names coaches and award winners only as the season article records them

    @conversation @conv:season-2023 @docs:tables/standings_2023,text/2023-velorian-premier-division-season @chain-length:2
    Scenario: The 2023 Velorian Premier Division
      # turn 1 | SINGLE-DOC | docs: tables/standings_2023 | exact: lookup tables/standings_2023
      When the user asks "Who won the 2023 Velorian Premier Division, and with how many points?"
      Then the answer should agree with "Eastquay Olympic, with 72 points."
      And the answer should contain "72"
      # turn 2 | SINGLE-DOC | docs: text/2023-velorian-premier-division-season
      When the user asks "Who was their coach that season?"
      Then the answer should agree with "Soren Vey, who was named Velorian Coach of the Year."
      # turn 3 | MULTI-DOC | docs: tables/standings_2023, text/2023-velorian-premier-division-season | exact: compare tables/standings_2023
      When the user asks "How many points behind them did Harbour City FC finish?"
      Then the answer should agree with "14 points: Harbour City FC finished third on 58 points."
      And the answer should contain "14"
      # turn 4 | SINGLE-DOC | docs: text/2023-velorian-premier-division-season
      When the user asks "Who was the league's top scorer that season?"
      Then the answer should agree with "Mateo Varga of Redmarsh Rovers, with 26 goals; he won the Velorian Golden Boot."
      # turn 5 | UNANSWERABLE
      When the user asks "How many yellow cards did Eastquay Olympic receive that season?"
      Then the assistant should say it cannot answer
      Then the conversation should satisfy the spec
