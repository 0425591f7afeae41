"""Schema-driven fuzzing: schemathesis generates requests from the service's own
OpenAPI document and checks every answer: no 500, and each response conforms
to the document (status documented, body shape, content type).

Bounded (a few examples per operation) so it runs in seconds.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import (
    negative_data_rejection,
    positive_data_acceptance,
)

from agentform.service import create_app
from tests.service.conftest import ADMIN_KEY, TEST_SEED

# the service fuzzed from its OpenAPI document; all slow, so `make test-fast` does not
# even collect the module (tests/tiers.py): building its tests costs ~10 s of CPU
pytestmark = [pytest.mark.schemathesis, pytest.mark.slow]

# removed when the process ends (weakref.finalize), with the database in it
_dir = tempfile.TemporaryDirectory(prefix="agentform-fuzz-")
ROOT = Path(__file__).parents[2]
APP = create_app(Path(_dir.name) / "service.db", seed=TEST_SEED)
schema = schemathesis.openapi.from_asgi("/agents/v2/openapi.json", APP)


@schema.parametrize()
@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
def test_no_server_errors_and_answers_match_the_document(case: schemathesis.Case[Any]) -> None:
    excluded: list[Any] = []
    if _has_cross_field_rules(case.operation.method, case.operation.path):
        excluded.append(positive_data_acceptance)
    if "/temp-files" in case.operation.path:
        # A multipart part is bytes on the wire: a "binary" value mutated into some
        # other type arrives as a file all the same, so it is rightly accepted.
        excluded.append(negative_data_rejection)
    case.call_and_validate(headers={"X-Api-Key": ADMIN_KEY}, excluded_checks=excluded)


def _has_cross_field_rules(method: str, path: str) -> bool:
    """Operations whose 400s come from rules JSON Schema cannot state, so a schema-valid
    body may rightly be refused: template field keys must be unique and steps must name
    existing fields (docs/service/contract.md#vault-templates); member ids must be
    profiles of the organization (§6); an execute names a profile or a pool of the
    organization, and one of the agent's versions (§9); webhook header names are compared
    ignoring case and some are refused, and attachment filters must name events their
    rules include (§8); a batch names an agent of the organization and its items follow
    the execute rules (§10). Every other check still runs on them."""
    writes = method.upper() in ("POST", "PATCH", "PUT", "DELETE")
    return writes and (
        path.startswith(("/agents/v2/vault/templates", "/agents/v2/webhook-integrations"))
        or path == "/agents/v2/execution-batches"
        or path.endswith(("/members", "/execute", "/webhooks/{integrationId}"))
    )


def test_the_fuzzing_app_leaves_nothing_in_the_temp_directory(tmp_path: Path) -> None:
    """The module's app and database live in a temporary directory removed when the
    test process ends (one was left behind by every run)."""
    code = "import tests.service.test_schemathesis as m; assert m.APP"
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=ROOT)
    assert list(tmp_path.iterdir()) == []
