"""The one HTTP client of the provisioner (`client.ApiClient`); the only code that
touches httpx errors. Importing this package imports nothing else, so modules that
need only its plain parts (rates, the concurrency ceiling) stay light."""
