"""The demo seed's names, read by both halves: the service seeds its demo
organization with them (service/startup/seed_file.py builds the demo seed from
these and the demo scripts), and `agentform validate` checks the agents a test
file on the demo seed names against DEMO_AGENTS without building that seed (its
scripts and models are the service's, not a check's)."""

from __future__ import annotations

from typing import Any

DEMO_ORGANIZATION_ID = "0b7f3c1e-0000-4000-8000-000000000001"
DEMO_ADMIN_KEY = "demo-admin-key"

# The demo organization's agents, their scripts aside (demo_scripts.yaml, by name).
DEMO_AGENT_VERSIONS: tuple[dict[str, Any], ...] = (
    {"name": "checkout-agent", "versions": [1, 2], "publishedVersion": 2},
    {"name": "support-agent"},
    {"name": "refund-agent"},
)
DEMO_AGENTS = frozenset(a["name"] for a in DEMO_AGENT_VERSIONS)
