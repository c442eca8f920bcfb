"""Running a dataset: evaluate() (the front door), a case's journey, recording into the run store, executors."""
