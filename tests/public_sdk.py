"""The public SDK (asteroid-odyssey), imported on its first use, not at collection.

Importing it costs about 0.9 s of CPU (it builds its models and its API classes'
validators at import), and every xdist worker collects every test module, while
one worker runs a module's tests: imported at the top of a test module, the SDK
cost each worker that second. `sdk` stands for the package and imports it when a
test first reads one of its names. A private name (pytest's collector probes a
module's every global for `__wrapped__`, `_mock_name`, ...) is not one of its
names: a lazy module (importlib's LazyLoader) would be imported by those probes.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__all__ = ["sdk"]


class _OnFirstUse:
    def __init__(self, name: str) -> None:
        self._module_name = name

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(importlib.import_module(self._module_name), name)


if TYPE_CHECKING:
    import asteroid_odyssey as sdk
else:
    sdk = _OnFirstUse("asteroid_odyssey")
