"""The embedded Agent Service: the contract (docs/service/contract.md) served by FastAPI
over SQLite.

Its layout, bottom up (a package imports only those below it):

- `models/`: the wire models, one module per resource; only pydantic, core/
  and rules/ (the contract both halves enforce) below them.
- `errors.py`: `ServiceError`, the one exception every layer raises, and its
  translation into the error body; a root module because every layer uses it.
- `store/`: SQLite. `store/database.py` (connections, transactions, the
  default path), the migrations, one module per table family. The only place
  SQL is written or executed (tests/service/test_layers.py checks it).
- `clock.py`: the injected clock, the only wall-clock reader (also checked).
- `runtime/`: time-driven work: the runner, its job handlers.
- `executions/`, `batches/`, `delivery/`: the behaviour of each of them.
- `startup/`: what is written before serving: the seed file, the presets.
- `http/`: how the service meets HTTP: auth and the gate, paging, the rate
  limit, the OpenAPI document, the server and the in-process transport.
- `routes/`: the operations, one module per resource, found automatically.
- `app.py`: `create_app`, the one place all of it is put together.

The names below are imported on first use, so that a command that only needs
a constant of the service (the database's default path) does not load FastAPI.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentform.service.app import BASE_PATH, create_app
    from agentform.service.startup.seed import (
        DEMO_ADMIN_KEY,
        DEMO_SEED,
        Seed,
        SeedError,
        read_seed,
    )

__all__ = [
    "BASE_PATH",
    "DEMO_ADMIN_KEY",
    "DEMO_SEED",
    "Seed",
    "SeedError",
    "create_app",
    "read_seed",
]


def __getattr__(name: str) -> Any:
    if name in ("BASE_PATH", "create_app"):
        return getattr(import_module("agentform.service.app"), name)
    if name in __all__:
        return getattr(import_module("agentform.service.startup.seed"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
