"""The agent side of a case: targets, conversations, the simulated user, replay and capture."""
