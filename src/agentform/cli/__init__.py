"""The command line: one module per command, all registered on `main`."""
