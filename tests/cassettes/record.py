"""Re-records the quickstart cassettes: `make cassettes` (or python tests/cassettes/record.py).

Runs `agentform plan` and `agentform apply --auto-approve` on a fresh copy of
examples/quickstart, each with --record-cassette.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
QUICKSTART = HERE.parents[1] / "examples" / "quickstart"


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "quickstart"
        shutil.copytree(QUICKSTART, ws, ignore=shutil.ignore_patterns(".agentform"))
        for name, args in (
            ("quickstart-plan", ["plan"]),
            ("quickstart-apply", ["apply", "--auto-approve"]),
        ):
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "agentform",
                    *args,
                    "-C",
                    str(ws),
                    "--record-cassette",
                    str(HERE / f"{name}.yaml"),
                ],
                check=True,
                stdout=subprocess.DEVNULL,
            )


if __name__ == "__main__":
    main()
