"""`tracegrade monitor`: a dashboard over the production traces in the local span store."""
