"""`bddgen probe`: the agent-testing agent — weaknesses planned from code, interview and known failure modes,
probed by personas whose difficulty adapts, judged by a rubric, kept as failing Scenarios."""
