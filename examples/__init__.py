"""Example agents that show how to grade an agent with tracegrade (not part of the package)."""
