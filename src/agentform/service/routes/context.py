"""GET /context: who the caller is (docs/service/contract.md#authentication-and-organizations)."""

from fastapi import Depends

from agentform.service.http.auth import Caller, caller
from agentform.service.http.gate import api_router
from agentform.service.models.context import ApiKeyInfo, Context, OrganizationRef
from agentform.service.store.organizations import service_user

router = api_router(tags=["Context"])


@router.get("/context", response_model=Context)
def get_context(who: Caller = Depends(caller)) -> Context:
    user = service_user(who.organization_id, who.organization_name)
    return Context(
        userId=user.id,
        email=user.email,
        organizations=[OrganizationRef(id=who.organization_id, name=who.organization_name)],
        organizationId=who.organization_id,
        organizationName=who.organization_name,
        apiKey=ApiKeyInfo(id=who.key_id, name=who.key_name, role=who.role),
    )
