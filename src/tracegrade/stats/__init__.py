"""Numbers over results: summaries, aggregates, paired tests, safety."""
