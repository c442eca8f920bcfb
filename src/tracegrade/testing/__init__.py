"""Test tools that ship with tracegrade: servers that misbehave on purpose."""
