"""The checks: plain code over a case's trace, free, and they never drift."""
