"""The embedded Agent Service: API.md served by FastAPI over SQLite."""

from agentform.service.app import BASE_PATH, create_app
from agentform.service.seed import DEMO_ADMIN_KEY, DEMO_SEED, Seed, SeedError, read_seed

__all__ = [
    "BASE_PATH",
    "DEMO_ADMIN_KEY",
    "DEMO_SEED",
    "Seed",
    "SeedError",
    "create_app",
    "read_seed",
]
