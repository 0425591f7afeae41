#!/usr/bin/env bash
# make demo: plan, apply, plan again (no changes), on a fresh embedded service;
# then the workspace's tests (tests/*.yaml), each on a service of its own.
set -euo pipefail
cd "$(dirname "$0")"
AGENTFORM="${AGENTFORM:-../../.venv/bin/agentform}"
rm -rf .agentform          # start from an empty local service every time
# Bold only on a terminal (and never under NO_COLOR): `make demo > log` stays plain text.
if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then bold=$'\033[1m' plain=$'\033[0m'; else bold='' plain=''; fi
step() { printf '\n%s$ agentform %s%s\n' "$bold" "$*" "$plain"; }
step validate;               "$AGENTFORM" validate
step plan;                   "$AGENTFORM" plan
step apply --auto-approve;   "$AGENTFORM" apply --auto-approve
step plan --detailed-exitcode
"$AGENTFORM" plan --detailed-exitcode   # exits 2 if anything were left to change
step test
"$AGENTFORM" test                        # what the workspace does: exits 1 if a test fails
