"""Report formats, one small module each: console, markdown, json, junit."""
