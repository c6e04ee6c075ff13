"""The one evaluation core that run, probe, intents and agent realisation share: the `Assistant` protocol and the one
way to ask it (`guard.ask`), the conversation driver (`dialogue`), the runner of samples (`runner`), the scorers (the
judge, its claims and reference checks) returning one `Judgement`, and the results log (`store`)."""
