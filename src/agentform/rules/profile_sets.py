"""The rules of profile pools and profile groups
(docs/service/contract.md#profile-pools-and-profile-groups) that both halves enforce.

The service's wire models and the provisioner's `profilePools`/`profileGroups`
kinds take the name rule, the member-call limit and the defaults from here, so
a file that validates is a pool the service accepts, and a plan's defaults are
the ones the service applies.
"""

from __future__ import annotations

from typing import Literal

from agentform.rules.profiles import Name
from agentform.rules.values import NAME_MAX_LENGTH

SelectionStrategy = Literal["least_recently_used", "most_recently_used"]

DEFAULT_SELECTION_STRATEGY: SelectionStrategy = "least_recently_used"
DEFAULT_ALLOW_CONCURRENT_USE = False

MEMBERS_PER_CALL = 100
"""At most this many profile ids in one add- or remove-members call."""

__all__ = [
    "DEFAULT_ALLOW_CONCURRENT_USE",
    "DEFAULT_SELECTION_STRATEGY",
    "MEMBERS_PER_CALL",
    "NAME_MAX_LENGTH",
    "Name",
    "SelectionStrategy",
]
