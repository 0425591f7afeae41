"""Resource kinds, one module each, found by walking this package.

Importing `agentform.kinds` imports every module in it (and in any sub-package),
as the service's migrations are found: no list of kinds to edit. A module
defines a kind by defining a `Kind` subclass with a `name` (kinds/base.py); the
modules that define none (base, model, context, keys, references, slots, values, order,
the batch and profile-set helpers) are imported all the same and register nothing.
"""

from __future__ import annotations

import pkgutil
from importlib import import_module
from types import ModuleType

from agentform.kinds.base import Kind
from agentform.kinds.order import kinds_in_order

__all__ = ["Kind", "discover", "kinds_in_order"]


def discover(package: str = __name__) -> list[ModuleType]:
    """Imports every module of `package` (this one), sub-packages included, in
    name order; the kinds they define register themselves as they are defined."""
    root = import_module(package)
    return [
        import_module(info.name)
        for info in pkgutil.walk_packages(root.__path__, prefix=f"{package}.")
    ]


discover()
