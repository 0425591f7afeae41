"""The `profileGroups` kind: profile groups (API.md §6)."""

from agentform.kinds.profile_sets import ProfileSetKind


class ProfileGroups(ProfileSetKind):
    name = "profileGroups"
    label = "profile group"
    summary = "Profile groups (API.md §6)."
    collection = "/profile-groups"
