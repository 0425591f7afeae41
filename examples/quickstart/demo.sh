#!/usr/bin/env bash
# make demo: plan, apply, plan again (no changes), on a fresh embedded service.
set -euo pipefail
cd "$(dirname "$0")"
AGENTFORM="${AGENTFORM:-../../.venv/bin/agentform}"
rm -rf .agentform          # start from an empty local service every time
step() { printf '\n\033[1m$ agentform %s\033[0m\n' "$*"; }
step validate;               "$AGENTFORM" validate
step plan;                   "$AGENTFORM" plan
step apply --auto-approve;   "$AGENTFORM" apply --auto-approve
step plan --detailed-exitcode
"$AGENTFORM" plan --detailed-exitcode   # exits 2 if anything were left to change
