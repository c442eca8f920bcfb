"""tracegrade: evaluate tool-using LLM agents by what they did, not only by what they said."""

__version__ = "0.1.0"
