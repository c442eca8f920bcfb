"""OpenTelemetry spans, the span store and the monitoring dashboard."""
