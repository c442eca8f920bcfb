"""Running a dataset: the runner (concurrency, repeats, flaky re-runs, budget),
recording into the run store, executors, and the evaluate() front door."""
