"""YAML parsing that remembers where every value came from.

`parse` returns plain Python data and a map from each value's path (a tuple of
keys and indexes) to its line and column, so validation errors on the data can
point at the file. Duplicate mapping keys are reported, not silently merged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

PathKey = tuple[str | int, ...]


@dataclass
class Located:
    data: Any
    positions: dict[PathKey, tuple[int, int]] = field(default_factory=dict)
    key_positions: dict[PathKey, tuple[int, int]] = field(default_factory=dict)
    duplicates: list[tuple[PathKey, int, int]] = field(default_factory=list)

    def where(self, path: PathKey, at_key: bool = True) -> tuple[int, int]:
        """The position of `path` (its key, or its value when not `at_key`), or of its
        nearest ancestor that has one."""
        first, second = (
            (self.key_positions, self.positions) if at_key else (self.positions, self.key_positions)
        )
        for end in range(len(path), -1, -1):
            key = tuple(path[:end])
            for table in (first, second):
                if key in table:
                    return table[key]
        return (1, 1)


class _Constructor(SafeConstructor):
    pass


def parse(text: str) -> Located:
    """Parse one YAML document; raises yaml.YAMLError (with a mark) when broken."""
    node = yaml.compose(text, Loader=yaml.SafeLoader)
    out = Located(None)
    if node is None:
        out.data = {}
        return out
    constructor = _Constructor()
    out.data = _build(node, (), out, constructor)
    return out


def _mark(node: Node) -> tuple[int, int]:
    return (node.start_mark.line + 1, node.start_mark.column + 1)


def _build(node: Node, path: PathKey, out: Located, constructor: SafeConstructor) -> Any:
    out.positions[path] = _mark(node)
    if isinstance(node, MappingNode):
        constructor.flatten_mapping(node)
        result: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = constructor.construct_object(key_node, deep=True)
            if not isinstance(key, str):
                key = str(key)
            child = (*path, key)
            if key in result:
                out.duplicates.append((child, *_mark(key_node)))
            out.key_positions[child] = _mark(key_node)
            result[key] = _build(value_node, child, out, constructor)
        return result
    if isinstance(node, SequenceNode):
        return [_build(item, (*path, i), out, constructor) for i, item in enumerate(node.value)]
    assert isinstance(node, ScalarNode)
    return constructor.construct_object(node, deep=True)
