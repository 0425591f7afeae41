"""Running the service over HTTP with uvicorn (`agentform service run`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import uvicorn

from .app import BASE_PATH, create_app
from .delivery.outbox import PLATFORM_URL
from .seed import DEMO_ADMIN_KEY, DEMO_SEED, read_seed


def base_url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{BASE_PATH}"


def serve(
    host: str,
    port: int,
    db_path: Path,
    seed_path: Path | None,
    rate_limit: float | None,
    say: Callable[[str], None],
) -> None:
    """Loads the seed (raising SeedError before listening), then serves until stopped."""
    seed = read_seed(seed_path) if seed_path else DEMO_SEED
    # Links in webhook notifications point at this server.
    settings = {PLATFORM_URL: base_url(host, port)}
    app = create_app(db_path, seed=seed, rate_limit=rate_limit, settings=settings)
    say(f"Agent Service on {base_url(host, port)} (database {db_path})")
    if seed_path is None:
        say(f"demo seed loaded; admin API key: {DEMO_ADMIN_KEY}")
    if rate_limit:
        say(f"rate limit: {rate_limit:g} requests/s per API key")
    uvicorn.run(app, host=host, port=port, log_level="warning")
