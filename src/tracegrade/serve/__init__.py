"""What every HTTP server of tracegrade shares: hardening, the token gate, the model server."""
