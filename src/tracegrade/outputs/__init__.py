"""A run's own files, written as its results are read: results.json, junit.xml, summary.md."""
