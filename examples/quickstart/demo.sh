#!/usr/bin/env bash
# make demo: plan, apply, plan again (no changes), on a fresh embedded service;
# then the workspace's tests (tests/*.yaml), each on a service of its own; then a
# failed execution in the local service, and (at a terminal) the service and its console.
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

# The web console: a little activity in the local service, then the service itself.
printf '\n%sA failed checkout, its alert and its delivery attempts, to look at in the console%s\n' "$bold" "$plain"
"$(dirname "$AGENTFORM")/python" console_demo.py
echo "Look at it: \`agentform service run\` here, then open http://127.0.0.1:8700/console/"
echo "and sign in with the demo key: demo-admin-key"
if [ -t 1 ] && [ -t 0 ]; then          # at a terminal: serve it now (Ctrl-C stops it)
  step service run
  exec "$AGENTFORM" service run
fi
