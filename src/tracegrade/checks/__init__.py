"""The checks: plain code over a case's trace, and the verdict that joins them with the judge."""
