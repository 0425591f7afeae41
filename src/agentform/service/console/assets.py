"""The console's static files (`/console/static/NAME`): one stylesheet and one small
script, read once, served with their type and `nosniff`; nothing else is served."""

from __future__ import annotations

from functools import cache
from importlib import resources

from fastapi import Response

from agentform.service.console.access import page_router
from agentform.service.errors import not_found

TYPES = {".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8"}
ASSETS = ("console.css", "console.js")


@cache
def asset(name: str) -> bytes:
    return (resources.files("agentform.service.console") / "static" / name).read_bytes()


router = page_router()


@router.get("/static/{name}")
async def static_file(name: str) -> Response:
    if name not in ASSETS:
        raise not_found("console file")
    kind = TYPES[name[name.rindex(".") :]]
    return Response(asset(name), media_type=kind, headers={"Cache-Control": "max-age=300"})
