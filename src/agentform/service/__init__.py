"""The embedded Agent Service: the contract (docs/service/contract.md) served by FastAPI
over SQLite.

Its layout, bottom up (a package imports only those below it; tests/
test_layering.py's SERVICE_LAYERS checks it, imports in functions included):

- `models/`: the wire models, one module per resource; only pydantic, core/
  and rules/ (the contract both halves enforce) below them.
- `errors.py`: `ServiceError`, the one exception every layer raises, and its
  translation into the error body; `start_errors.py`: what stops the start.
- `settings.py`: `ServiceSettings`, every setting, typed, with its default.
- `clock.py`: the injected clock, the only wall-clock reader (also checked).
- `store/`: SQLite. `store/database.py` (connections, transactions, the
  default path), the migrations, one module per table family, typed rows out.
  The only place SQL is written or executed (tests/service/test_layers.py).
- `runtime/`: time-driven work: the runner, its context, the handler forms.
- `delivery/`, `executions/`, `batches/`, `upkeep/` (retention): the
  behaviour of each of them.
- `startup/`: what is written before serving: the seed file, the presets.
- `http/`: how the service meets HTTP: auth and the gate, paging, the read
  timeouts, the rate limit, the OpenAPI document, the in-process transport.
- `routes/`: the operations, one module per resource, found automatically.
- `job_handlers.py`: every job kind's handler, in one place.
- `app.py`: `create_app`, the one place all of it is put together.
- `openapi_export.py`, `server.py`: what runs an app (`make schemas`, uvicorn).

The names below are imported on first use, so that a command that only needs
a constant of the service (the database's default path) does not load FastAPI.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentform.service.app import BASE_PATH, create_app
    from agentform.service.startup.seed_file import (
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
        return getattr(import_module("agentform.service.startup.seed_file"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
