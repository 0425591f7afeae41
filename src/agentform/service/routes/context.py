"""GET /context: who the caller is (API.md §2)."""

from fastapi import APIRouter, Depends

from ..auth import Caller, caller
from ..models import ApiKeyInfo, Context

router = APIRouter(tags=["Context"])


@router.get("/context", response_model=Context)
def get_context(who: Caller = Depends(caller)) -> Context:
    return Context(
        organizationId=who.organization_id,
        organizationName=who.organization_name,
        apiKey=ApiKeyInfo(id=who.key_id, name=who.key_name, role=who.role),
    )
