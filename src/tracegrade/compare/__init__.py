"""Comparing two runs and the regression gate."""
