"""The `profileGroups` kind: profile groups
(docs/service/contract.md#profile-pools-and-profile-groups)."""

from agentform.kinds.profile_sets import ProfileSetKind


class ProfileGroups(ProfileSetKind):
    name = "profileGroups"
    label = "profile group"
    summary = "Profile groups (docs/service/contract.md#profile-pools-and-profile-groups)."
    collection = "/profile-groups"
