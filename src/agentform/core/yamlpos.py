"""YAML parsing that remembers where every value came from.

`parse` returns plain Python data and the composed node tree, so validation
errors on the data can point at the file: `where(path)` walks the tree along a
path of keys and indexes, only when a position is asked for. Duplicate mapping
keys are reported, not silently merged.

libyaml's parser is used when PyYAML was built with it (ten times faster on
large workspaces); the pure-Python parser is the fallback. A file that does not
parse is parsed again with the pure-Python parser, so its error message and
position are the same whichever parser is installed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from agentform.core.gcpause import collector_paused

PathKey = tuple[str | int, ...]

PURE_LOADER: type[yaml.SafeLoader] = yaml.SafeLoader
FAST_LOADER: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
LIBYAML = FAST_LOADER is not PURE_LOADER
STR_TAG = "tag:yaml.org,2002:str"
BOOL_TAG = "tag:yaml.org,2002:bool"


@dataclass
class Located:
    data: Any
    root: Node | None = None
    duplicates: list[tuple[str, int, int]] = field(default_factory=list)  # key, line, column

    def where(self, path: PathKey, at_key: bool = True) -> tuple[int, int]:
        """The position of `path` (its key, or its value when not `at_key`), or of its
        nearest ancestor that has one."""
        node = self.root
        if node is None:
            return (1, 1)
        key_node: Node | None = None
        for part in path:
            child = _child(node, part)
            if child is None:
                break
            key_node, node = child
        shown = key_node if at_key and key_node is not None else node
        return _mark(shown)


def _child(node: Node, part: str | int) -> tuple[Node | None, Node] | None:
    """(key node or None, value node) of `part` under `node`; the last of equal keys."""
    if isinstance(node, MappingNode):
        for key_node, value_node in reversed(node.value):
            if _key_text(key_node) == str(part):
                return key_node, value_node
    elif isinstance(node, SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
        return None, node.value[part]
    return None


def _key_text(node: Node) -> str:
    """A key is a name, as written: YAML 1.1 would make `on:` and `yes:` both True,
    shown as 'True' (and one key), and `007:` the number 7."""
    if isinstance(node, ScalarNode):
        return str(node.value)
    return str(SafeConstructor().construct_object(node, deep=True))


def parse(text: str, loader: type[Any] | None = None) -> Located:
    """Parse one YAML document; raises yaml.YAMLError (with a mark) when broken."""
    with collector_paused():
        return _parse(text, loader)


def _parse(text: str, loader: type[Any] | None) -> Located:
    try:
        node = yaml.compose(text, Loader=loader or FAST_LOADER)
    except yaml.YAMLError:
        if loader is not None or not LIBYAML:
            raise
        # The pure-Python parser words errors better and both installs must agree.
        node = yaml.compose(text, Loader=PURE_LOADER)
    out = Located(None, node)
    if node is None:
        out.data = {}
        return out
    out.data = _Builder(out).build(node)
    return out


def parse_all(text: str) -> list[Any]:
    """The data of every document of a YAML stream, read as `parse` reads one (keys as
    written); raises yaml.YAMLError when broken."""
    with collector_paused():
        nodes = list(yaml.compose_all(text, Loader=FAST_LOADER))
    return [_Builder(Located(None, node)).build(node) for node in nodes if node is not None]


def _mark(node: Node) -> tuple[int, int]:
    return (node.start_mark.line + 1, node.start_mark.column + 1)


class _Builder:
    """Nodes to plain data. Plain strings (nearly every scalar of a workspace) are
    taken as they are; other scalars go through PyYAML's safe constructor."""

    def __init__(self, out: Located) -> None:
        self.out = out
        self.constructor = SafeConstructor()
        self.open: set[int] = set()  # containers being built: a recursive alias is an error

    def build(self, node: Node) -> Any:
        if isinstance(node, ScalarNode):
            tag = node.tag
            if tag == STR_TAG:
                return node.value
            if tag == BOOL_TAG:
                return SafeConstructor.bool_values[node.value.lower()]
            return self.constructor.construct_object(node, deep=True)
        if id(node) in self.open:
            raise yaml.constructor.ConstructorError(
                None, None, "found a recursive alias", node.start_mark
            )
        self.open.add(id(node))
        try:
            if isinstance(node, MappingNode):
                return self._mapping(node)
            assert isinstance(node, SequenceNode)
            return [self.build(item) for item in node.value]
        finally:
            self.open.discard(id(node))

    def _mapping(self, node: MappingNode) -> dict[str, Any]:
        self.constructor.flatten_mapping(node)
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = _key_text(key_node)
            if key in result:
                self.out.duplicates.append((key, *_mark(key_node)))
            result[key] = self.build(value_node)
        return result
