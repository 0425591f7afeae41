"""The service's layering: SQL lives in the store, routes only call it (DESIGN.md §5)."""

from __future__ import annotations

import re
from pathlib import Path

import agentform.service.routes as routes_package

SQL = re.compile(r"\.execute(many|script)?\(|\b(SELECT|INSERT INTO|UPDATE|DELETE FROM)\s+\w")


def test_no_route_module_runs_sql() -> None:
    found = []
    for path in sorted(Path(routes_package.__file__).parent.glob("*.py")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if SQL.search(line) and not line.lstrip().startswith(("#", '"""')):
                found.append(f"{path.name}:{n}: {line.strip()}")
    assert not found, "SQL belongs in service/store/:\n" + "\n".join(found)
