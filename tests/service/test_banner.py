"""The lines `service run` prints after its address (service/server.py announce):
what is true of this start, from the app it made."""

from __future__ import annotations

from pathlib import Path

from agentform.service.app import create_app
from agentform.service.server import announce
from agentform.service.settings import ServiceSettings
from agentform.service.startup.seed_file import DEMO_ADMIN_KEY


def _banner(db: Path) -> list[str]:
    app = create_app(db, runtime=False)  # the demo seed
    said: list[str] = []
    try:
        announce(
            said.append,
            "http://127.0.0.1:8080/api",
            demo=True,
            loaded=app.state.seed_loaded,
            rate_limit=None,
            manual=False,
            settings=ServiceSettings(console="off"),
            pool=None,
        )
    finally:
        app.state.db.close()
    return said


def test_the_demo_seed_is_said_loaded_once_and_deliveries_are_said_in_process(
    tmp_path: Path,
) -> None:
    """ "demo seed loaded" was printed at every start, the database holding it already;
    with --delivery-workers 0 the banner said nothing of where deliveries run."""
    first, again = _banner(tmp_path / "svc.db"), _banner(tmp_path / "svc.db")
    assert first == [
        f"demo seed loaded; admin API key: {DEMO_ADMIN_KEY}",
        "deliveries: sent by this process (--delivery-workers 0)",
    ]
    assert again[0] == f"demo seed already in the database; admin API key: {DEMO_ADMIN_KEY}"
