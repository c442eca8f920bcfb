"""OpenTelemetry spans: a run's own, their exporters and the local span store."""
