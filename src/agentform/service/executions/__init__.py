"""Executions of the embedded service: the status machine, agent scripts and their programs."""
