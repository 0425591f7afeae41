"""The one HTTP client of the provisioner (`client.ApiClient`); the only code that
touches httpx errors. Importing this package imports nothing else, so modules that
need only its plain parts (rates, the concurrency ceiling) stay light."""

DEFAULT_PARALLELISM = 16
"""The ceiling of requests in flight (`--parallelism`), for `apply` and for the apply
`agentform test` makes: here, so the command line's options read it without the
event loop's modules that concurrency.py, which enforces it, imports."""
