"""The `profilePools` kind: agent profile pools (API.md §6)."""

from agentform.kinds.profile_sets import ProfileSetKind


class ProfilePools(ProfileSetKind):
    name = "profilePools"
    label = "pool"
    summary = "Agent profile pools (API.md §6)."
    collection = "/agent-profile-pools"
