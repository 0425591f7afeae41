"""The embedded Agent Service as an ASGI app: `create_app` wires it together."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI

from .db import Database
from .errors import install_error_handlers
from .openapi import install_openapi
from .presets import install_presets
from .ratelimit import RateLimitMiddleware
from .routes import agents, context, profile_sets, profiles, vault
from .seed import DEMO_SEED, Seed, load_seed
from .store.organizations import load_keys

BASE_PATH = "/agents/v2"


def create_app(
    db_path: str | Path,
    seed: Seed | None = DEMO_SEED,
    rate_limit: float | None = None,
) -> FastAPI:
    """The service over the SQLite file `db_path`, with `seed` loaded (idempotently)."""
    db = Database(db_path)
    with db.write() as conn:
        install_presets(conn)
    if seed is not None:
        load_seed(db, seed)
    load_keys(db)

    app = FastAPI(
        title="Agent Service",
        version="v1",
        openapi_url=f"{BASE_PATH}/openapi.json",
        docs_url=f"{BASE_PATH}/docs",
        redoc_url=None,
    )
    app.state.db = db
    for router in (
        context.router,
        agents.router,
        profiles.router,
        profile_sets.pools_router,
        profile_sets.groups_router,
        vault.router,
    ):
        app.include_router(router, prefix=BASE_PATH)
    install_error_handlers(app)
    install_openapi(app)
    if rate_limit:
        app.add_middleware(RateLimitMiddleware, rate=rate_limit)
    return app
