"""schemathesis over the service's OpenAPI document, against `agentform service run`
on loopback: every check, every phase (examples, coverage, fuzzing, stateful).

The suite's own schemathesis test (tests/service/test_schemathesis.py, marked
slow) runs in-process with a dozen cases an operation; this runs the real server
with as many as asked and prints schemathesis' own summary: cases generated,
failures by kind. The failures that remain are explained in
docs/service/fuzzing.md.

    .venv/bin/python -m bench.schemathesis_run [MAX_EXAMPLES]   # default 20
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from bench._server import KEY, running_service


def main(max_examples: int = 20) -> int:
    schemathesis = Path(sys.executable).parent / "schemathesis"
    with tempfile.TemporaryDirectory() as tmp, running_service(Path(tmp) / "svc.db") as svc:
        command = [
            str(schemathesis),
            "run",
            f"{svc.base}/openapi.json",
            "--header",
            f"X-Api-Key: {KEY}",
            "--checks",
            "all",
            "--max-examples",
            str(max_examples),
            "--seed",
            "1",
            "--continue-on-failure",
            "--max-failures",
            "100000",
            "--workers",
            "1",
        ]
        return subprocess.run(command, check=False).returncode


if __name__ == "__main__":
    raise SystemExit(main(*(int(a) for a in sys.argv[1:2])))
