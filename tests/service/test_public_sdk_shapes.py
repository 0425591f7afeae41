"""The public SDK (asteroid-odyssey 1.9.167) against the service over HTTP: its
context, agent and profile methods get answers it parses
(docs/service/contract.md#authentication-and-organizations, #agents-and-profiles).

The service is the app `agentform service run` serves (the demo seed, the wall
clock), under uvicorn in a thread; that the command itself serves it is
tests/service/test_server.py's.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentform.service import DEMO_ADMIN_KEY, create_app
from tests.loopback import serving
from tests.public_sdk import sdk


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[sdk.ApiClient]:
    app = create_app(tmp_path_factory.mktemp("sdk") / "svc.db")
    try:
        with serving(app) as origin:
            config = sdk.Configuration(host=origin, api_key={"ApiKeyAuth": DEMO_ADMIN_KEY})
            with sdk.ApiClient(config) as api_client:
                yield api_client
    finally:
        app.state.db.close()


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
