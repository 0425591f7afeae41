"""On a pull request, before the plan: `agentform validate`, offline, with no key and
no secret (validate checks every rule but those of a secret's own value, which
plan checks).

Exit: agentform's (0 valid, 1 not).
"""

from __future__ import annotations

import sys

from pipeline import agentform, environment


def main() -> int:
    result = agentform("validate", env=environment(None, secrets=False))
    sys.stdout.write(result.stdout)
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
