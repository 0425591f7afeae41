"""Execution batches (docs/service/contract.md#execution-batches): wire models and the
scheduler that runs them on the clock."""
