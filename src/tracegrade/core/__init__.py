"""Types at the bottom: the trace contract, results, errors, redaction. Imports nothing above it."""
