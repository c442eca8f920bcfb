"""`tracegrade view`: the local web UI over the run store and the span store (one module per page)."""
