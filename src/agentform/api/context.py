"""Which organization a run works in, from `GET /context`
(docs/service/contract.md#authentication-and-organizations).

The public service answers `{userId, email, organizations: [{id, name}]}`; the
embedded one adds `organizationId` and `organizationName`. The organization is
the only entry of `organizations`; when the key reaches several, the one named
by `organizationId` in agentform.yaml (or --organization-id), and the client
then names it in every list and create (a key of one organization needs not).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentform.core.errors import AgentformError


@dataclass(frozen=True)
class Organization:
    id: str
    name: str


def pick_organization(
    context: dict[str, Any], wanted: str | None, source: str = "organizationId in agentform.yaml"
) -> tuple[Organization, bool]:
    """The organization of the run, and whether requests must name it (several reachable)."""
    organizations = context.get("organizations") or []
    if not isinstance(organizations, list) or not all(
        isinstance(o, dict) and o.get("id") for o in organizations
    ):
        raise AgentformError("GET /context answered organizations of an unexpected shape")
    listed = [Organization(str(o["id"]), str(o.get("name") or o["id"])) for o in organizations]
    if not listed and context.get("organizationId"):
        own = str(context["organizationId"])
        listed = [Organization(own, str(context.get("organizationName") or own))]
    if not listed:
        raise AgentformError("GET /context names no organization for this API key")
    choices = ", ".join(f"{o.name} ({o.id})" for o in listed)
    if wanted:
        for org in listed:
            if org.id.lower() == wanted.lower():
                return org, len(listed) > 1
        which = "belongs to organization" if len(listed) == 1 else "reaches the organizations"
        raise AgentformError(f"the API key {which} {choices}, not {wanted} ({source})")
    if len(listed) > 1:
        raise AgentformError(
            f"the API key reaches {len(listed)} organizations: {choices}; choose one with "
            "organizationId in agentform.yaml or --organization-id"
        )
    return listed[0], False


async def resolve_organization(
    api: Any, wanted: str | None, source: str = "organizationId in agentform.yaml"
) -> Organization:
    """Reads /context, picks the organization (`wanted`, given by `source`), and
    scopes the client to it if needed."""
    context = await api.request("GET", "/context")
    if not isinstance(context, dict):
        raise AgentformError("GET /context did not answer an object")
    org, must_name = pick_organization(context, wanted, source)
    if must_name:
        api.scope_to(org.id)
    return org
