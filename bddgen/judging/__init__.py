"""Qualifying the judge on the project's own verified turns (`bddgen judge check`); its record is
`bddgen.run.judge_check`."""
