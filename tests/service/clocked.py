"""Fixtures of a module (or package) whose service runs on a manual clock: `api`,
`advance` and `agents`, each once per module, from the `svc` fixture it defines
(an `(Api, advance)` pair: the client and the function that moves the clock on).

Imported by the conftest (or the test module) that defines `svc`; tests/service's
own conftest keeps its per-test `api` for modules without a clock.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.service.conftest import Api

Advance = Callable[[float], None]


@pytest.fixture(scope="module")
def api(svc: tuple[Api, Advance]) -> Api:
    return svc[0]


@pytest.fixture(scope="module")
def advance(svc: tuple[Api, Advance]) -> Advance:
    return svc[1]


@pytest.fixture(scope="module")
def agents(api: Api) -> dict[str, str]:
    return api.ids("/agents")
