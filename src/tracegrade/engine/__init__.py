"""The run engine's machinery: what makes a large run fast, each piece behind a small interface."""
