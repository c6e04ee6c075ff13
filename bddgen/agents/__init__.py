"""Tool-using agents: the structural coverage of a suite over a workflow manifest, its realisation as scenarios,
trajectory metrics, and a manifest extracted from an Agents SDK app."""
