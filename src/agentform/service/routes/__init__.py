"""The service's operations, one module per resource, found by `routers()`.

Every module here exposes `router`. A router made by `gate.api_router` (its
route class is `ServiceRoute`: a key is checked, a body limited) serves under
the base path; the others (presigned file links, the documentation receiver) are
served at the root. No two modules serve overlapping paths, so the order they
are found in (by module name) decides nothing.
"""

from __future__ import annotations

import importlib
import pkgutil

from fastapi import APIRouter


def routers() -> list[APIRouter]:
    """The `router` of every module of this package, by module name."""
    found = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        found.append(module.router)
    return found
