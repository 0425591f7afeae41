"""`python -m agentform.service.openapi_export FILE`: write the service's OpenAPI document
(the checked-in schemas/ copy, `make schemas`)."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from agentform.service.app import create_app
from agentform.service.http.openapi import render_openapi


def write_openapi(path: str | Path) -> None:
    """Writes the document of a fresh app."""
    with tempfile.TemporaryDirectory() as tmp:
        app = create_app(Path(tmp) / "service.db")
        Path(path).write_text(render_openapi(app))
        app.state.db.close()


if __name__ == "__main__":
    write_openapi(sys.argv[1] if len(sys.argv) > 1 else "schemas/agent-service.openapi.json")
