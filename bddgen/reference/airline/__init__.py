"""airline-agent: a reference tool-using agent over the airline demo corpus (triage, booking, baggage)."""
