"""The rules of profile pools and profile groups that both halves enforce."""

from typing import Literal

SelectionStrategy = Literal["least_recently_used", "most_recently_used"]
