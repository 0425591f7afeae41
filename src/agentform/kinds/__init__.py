"""Resource kinds, one module each; importing this package registers them all."""

from agentform.kinds import batches, profile_groups, profile_pools, vault_templates, webhooks
from agentform.kinds.base import Kind, kinds_in_order

__all__ = [
    "Kind",
    "batches",
    "kinds_in_order",
    "profile_groups",
    "profile_pools",
    "vault_templates",
    "webhooks",
]
