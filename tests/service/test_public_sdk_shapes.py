"""The public SDK (asteroid-odyssey 1.9.167) against `agentform service run`: its
context, agent and profile methods get answers it parses
(docs/service/contract.md#authentication-and-organizations, #agents-and-profiles)."""

from __future__ import annotations

from collections.abc import Iterator

import asteroid_odyssey as sdk
import pytest

from tests.service.test_server import KEY, running


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[sdk.ApiClient]:
    db = tmp_path_factory.mktemp("sdk") / "svc.db"
    with running("--db", str(db)) as (base, _):
        host = base.removesuffix("/agents/v2")
        config = sdk.Configuration(host=host, api_key={"ApiKeyAuth": KEY["X-Api-Key"]})
        with sdk.ApiClient(config) as api_client:
            yield api_client


def test_context(client: sdk.ApiClient) -> None:
    context = sdk.ContextApi(client).context_get()
    assert [o.name for o in context.organizations] == ["demo"]
    assert context.user_id and context.email


def test_agents(client: sdk.ApiClient) -> None:
    page = sdk.AgentsApi(client).agent_list(page_size=10)
    assert {"checkout-agent", "support-agent"} <= {a.name for a in page.items}
    context = sdk.ContextApi(client).context_get()
    assert {a.user_id for a in page.items} == {context.user_id}


def test_profiles_listed_read_created_updated_deleted(client: sdk.ApiClient) -> None:
    profiles = sdk.AgentProfilesApi(client)
    listed = profiles.agent_profiles_list(page_size=100)
    assert {p.name for p in listed.items} >= {f"bot-{i}" for i in range(1, 7)}
    first = profiles.agent_profile_get(listed.items[0].id)
    assert first.inbox_email and first.vault_items == [] and first.cookies == []
    created = profiles.agent_profiles_create(
        sdk.AgentsProfileCreateAgentProfileRequest(
            name="made-by-the-sdk",
            description="",
            sticky_ip=True,
            credentials=[sdk.AgentsProfileCredential(name="shop", data="s3cret-value")],
        )
    )
    assert created.sticky_ip is True and created.tracing_enabled is True  # the SDK's default
    assert [(c.name, c.data) for c in created.credentials] == [("SHOP", "********")]
    updated = profiles.agent_profile_update(
        created.id,
        sdk.AgentsProfileUpdateAgentProfileRequest(description="now described", sticky_ip=False),
    )
    assert updated.description == "now described" and updated.sticky_ip is False
    profiles.agent_profile_delete(created.id)
    with pytest.raises(sdk.ApiException) as info:
        profiles.agent_profile_get(created.id)
    assert info.value.status == 404
