"""The rules of profiles (docs/service/contract.md#agents-and-profiles) that the service
enforces and the rules of profile pools and groups build on: how long a name of the
profiles API may be."""

from __future__ import annotations

from typing import Annotated

from pydantic import StringConstraints

from agentform.rules.values import NAME_MAX_LENGTH, NAME_SCHEMA, PlainName

# A profile's, a credential's, a pool's and a group's name: 1 to NAME_MAX_LENGTH
# characters, not blank, no control characters (rules/values.py).

Name = Annotated[
    str, StringConstraints(min_length=1, max_length=NAME_MAX_LENGTH), PlainName, NAME_SCHEMA
]
