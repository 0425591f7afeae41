"""The `profilePools` kind: agent profile pools
(docs/service/contract.md#profile-pools-and-profile-groups)."""

from agentform.kinds.profile_sets import ProfileSetKind


class ProfilePools(ProfileSetKind):
    name = "profilePools"
    label = "pool"
    summary = "Agent profile pools (docs/service/contract.md#profile-pools-and-profile-groups)."
    collection = "/agent-profile-pools"
