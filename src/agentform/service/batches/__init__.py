"""Execution batches (API.md §10): wire models and the scheduler that runs them on the clock."""
