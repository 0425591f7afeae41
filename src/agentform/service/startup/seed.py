"""Writing the seed (seed_file.py) into the service's store: organizations, API keys,
agents and profiles.

Loading is idempotent: everything is matched by name and created only when
missing, so a seed loaded twice (or on every start) creates nothing twice.
Keys are stored hashed.
"""

from __future__ import annotations

import uuid
from datetime import timedelta

from agentform.service.startup.seed_file import Seed
from agentform.service.store import (
    agent_scripts,
    agents,
    execution_capacity,
    organizations,
    profiles,
)
from agentform.service.store.database import Database, iso


def _stable_id(given: uuid.UUID | None, *parts: str) -> str:
    return str(given or uuid.uuid5(uuid.NAMESPACE_URL, "agentform-seed:" + ":".join(parts)))


def load_seed(db: Database, seed: Seed) -> bool:
    """Loads what of `seed` the database lacks; whether it lacked an organization of it
    (a first load: the start says the seed was loaded)."""
    loaded = False
    with db.write() as conn:
        start = conn.now()
        tick = 0

        def stamp() -> str:
            # One timestamp each (the clock's time plus a microsecond per row), so lists
            # keep the seed's order even on a clock that stands still.
            nonlocal tick
            tick += 1
            return iso(start + timedelta(microseconds=tick))

        for org in seed.organizations:
            org_id, created = organizations.ensure_organization(
                conn, _stable_id(org.id, org.name), org.name
            )
            loaded = loaded or created
            execution_capacity.set_capacity(conn, org_id, org.maxConcurrentExecutions)
            for key in org.apiKeys:
                key_id = _stable_id(None, org.name, "key", key.name)
                organizations.ensure_key(conn, key_id, org_id, key.name, key.key, key.role)
            for agent in org.agents:
                agents.ensure_agent(
                    conn,
                    _stable_id(agent.id, org.name, "agent", agent.name),
                    org_id,
                    agent.name,
                    agent.publishedVersion or max(agent.versions),
                    agent.versions,
                    stamp(),
                )
                script = (
                    agent.script.model_dump_json(exclude_defaults=True) if agent.script else None
                )
                agent_scripts.set_agent_script(conn, org_id, agent.name, script)
            for profile in org.profiles:
                profiles.ensure_profile(
                    conn,
                    _stable_id(profile.id, org.name, "profile", profile.name),
                    org_id,
                    profile.name,
                    profile.description,
                    stamp(),
                )
    return loaded
