"""On a pull request, before the plan: `agentform validate`, offline, with no key and
no secret. Each secret() variable of settings.toml gets a placeholder, as validate
reads the files but sends nothing (agentform's validate would also pass with them
unset: it needs no secret value; see the README).

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
