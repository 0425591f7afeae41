"""The one HTTP client of the provisioner; the only code that touches httpx errors."""

from .client import ApiClient, RetryPolicy

__all__ = ["ApiClient", "RetryPolicy"]
