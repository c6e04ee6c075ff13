"""A small airline-style workflow manifest shared by the agent tests."""

from __future__ import annotations

AIRLINE_MANIFEST = """\
entry: triage
agents:
  - name: triage
    purpose: Understands what the traveller wants and hands over to the right agent.
  - name: booking
    purpose: Looks up, changes and cancels bookings.
  - name: baggage
    purpose: Answers baggage allowance questions.
tools:
  - name: lookup_booking
    description: Find a booking by its reference.
    parameters:
      type: object
      properties:
        reference: {type: string}
      required: [reference]
  - name: cancel_booking
    description: Cancel a booking.
    parameters:
      type: object
      properties:
        reference: {type: string}
      required: [reference]
  - name: baggage_allowance
    description: The allowance of a fare class.
allowed:
  - {agent: triage, tool: lookup_booking}
  - {agent: booking, tool: lookup_booking}
  - {agent: booking, tool: cancel_booking}
  - {agent: baggage, tool: baggage_allowance}
restricted:
  - {agent: triage, tool: cancel_booking}
delegations:
  - {from: triage, to: booking}
  - {from: triage, to: baggage}
"""
