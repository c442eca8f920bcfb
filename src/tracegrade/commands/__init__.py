"""One module per CLI command; see tracegrade.cli."""
