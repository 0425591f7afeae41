"""GET /context: who the caller is (API.md §2)."""

from fastapi import Depends

from ..auth import Caller, caller
from ..gate import api_router
from ..models import ApiKeyInfo, Context

router = api_router(tags=["Context"])


@router.get("/context", response_model=Context)
def get_context(who: Caller = Depends(caller)) -> Context:
    return Context(
        organizationId=who.organization_id,
        organizationName=who.organization_name,
        apiKey=ApiKeyInfo(id=who.key_id, name=who.key_name, role=who.role),
    )
