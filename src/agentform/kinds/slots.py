"""Values a plan cannot hold yet, or must never hold.

- An id known only after an earlier change of the same apply has created its
  object (a new integration's attachments, a batch naming a new pool).
- A sensitive value (a webhook header value): the plan says where it goes and
  which value, apply takes it from the workspace when it makes the call.

Kinds write these into states and calls as sentinels made here (strings with
a per-process nonce, so no value from a file can forge one); the planner turns
every sentinel into a `Slot` and a public placeholder, and apply fills the
slots in. `{id}` in a call's path is the change's own object.
"""

from __future__ import annotations

import re
import secrets

KNOWN_AFTER_CREATE = "(known after create)"
SENSITIVE = "(sensitive)"
OWN_ID = "{id}"

_NONCE = secrets.token_hex(8)
SENTINEL = re.compile("\x00(id|sensitive):" + _NONCE + ":([^\x00]*)\x00")


def pending_id(address: str) -> str:
    """Stands for the id of the object the change at `address` creates."""
    return f"\x00id:{_NONCE}:{address}\x00"


def sensitive_value(name: str) -> str:
    """Stands for the sensitive value `name`, resolved from the workspace at apply."""
    return f"\x00sensitive:{_NONCE}:{name}\x00"


def placeholder(kind: str) -> str:
    return KNOWN_AFTER_CREATE if kind == "id" else SENSITIVE


def public(text: str) -> str:
    """`text` with every sentinel replaced by its placeholder."""
    return SENTINEL.sub(lambda m: placeholder(m.group(1)), text)
