"""order-desk-agent: a reference tool-using agent over a music store database shaped like Chinook."""
