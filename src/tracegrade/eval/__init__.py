"""Running a dataset against a target: dataset, targets, checks, runner, verdict, recording."""
