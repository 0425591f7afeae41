"""Workspace YAML as export writes it: a sensitive value as its `secret()` call.

A value that holds a secret is written the way the files write it,
`{{ secret("NAME") }}` inside the text, never the value. The scalar is quoted so
that YAML keeps the braces and Jinja2 can still read the call: single-quoted
with a double-quoted name, or, when YAML needs double quotes, the other way.
"""

from __future__ import annotations

from typing import Any

import yaml

from agentform.core.sensitive import MASK, Sensitive


class _Dumper(yaml.SafeDumper):
    pass


def _sensitive(dumper: yaml.SafeDumper, value: Sensitive) -> yaml.Node:
    text = value.source('"')
    if text is None:
        return dumper.represent_str(MASK)
    if dumper.analyze_scalar(text).allow_single_quoted:
        return dumper.represent_scalar("tag:yaml.org,2002:str", text, style="'")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value.source("'") or MASK, style='"')


_Dumper.add_representer(Sensitive, _sensitive)


def workspace_yaml(data: Any) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True)
