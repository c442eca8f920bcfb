"""The run store (SQLite / Postgres) and run references."""
