"""Fixtures shared by the CLI tests: a fresh copy of examples/quickstart; the
property tests' settings: no deadline per example, since a loaded CI machine runs
an example late and a timer is not what they test (time bounds are benchmarks'),
every example in `make test` and CI, a quarter of them in `make test-fast`
(`--hypothesis-profile=fast`, tests/tiers.py); and modules `-m` deselects whole
left uncollected (tests/tiers.py)."""

from __future__ import annotations

import gc
import shutil
from pathlib import Path

import pytest
from hypothesis import settings

from tests.tiers import FAST_EXAMPLES, left_out

settings.register_profile("agentform", deadline=None)
settings.register_profile(
    "fast", settings.get_profile("agentform"), max_examples=FAST_EXAMPLES
)  # `make test-fast` loads it (--hypothesis-profile=fast)
settings.load_profile("agentform")

QUICKSTART = Path(__file__).parents[1] / "examples" / "quickstart"


@pytest.fixture
def quickstart(tmp_path: Path) -> Path:
    root = tmp_path / "quickstart"
    shutil.copytree(QUICKSTART, root, ignore=shutil.ignore_patterns(".agentform"))
    return root


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """A module no test of which `-m` can select is not collected (tests/tiers.py)."""
    return True if left_out(collection_path, config.getoption("markexpr")) else None


def pytest_runtest_teardown(item: pytest.Item) -> None:
    """What a test's plans froze out of collections (core/gcpause.py) is given back to
    the collector: a test process runs thousands of plans, and the garbage of other
    tests a freeze caught would otherwise stay until it exits."""
    gc.unfreeze()
