"""On a pull request, before the pairs' jobs: `agentform validate --all`, offline,
with no key and no secret: every workspace in every environment, and the ownership
overlaps between them (one team's `owns:` widened over another's pool fails here,
though its own validate passes).

Exit: agentform's (0 valid, 1 not).
"""

from __future__ import annotations

import sys

from pipeline import Pair, agentform, environment

ROOT = Pair(".")


def main() -> int:
    result = agentform(ROOT, "validate", "--all", env=environment(ROOT, None, secrets=False))
    sys.stdout.write(result.stdout)
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
