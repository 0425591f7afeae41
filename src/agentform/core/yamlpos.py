"""YAML parsing that remembers where every value came from.

`parse` returns plain Python data and the composed node tree, so validation
errors on the data can point at the file: `where(path)` walks the tree along a
path of keys and indexes, only when a position is asked for. Duplicate mapping
keys are reported, not silently merged.

libyaml's parser is used when PyYAML was built with it (ten times faster on
large workspaces); the pure-Python parser is the fallback. A file that does not
parse is parsed again with the pure-Python parser, so its error message and
position are the same whichever parser is installed.

Two readings differ from PyYAML's own, as users of Docker Compose and YAML 1.2
expect: a key written in a mapping overrides the same key brought in by a merge
key (`<<: *base`) before or after it (only a key written twice is a duplicate),
and only `true` and `false` are booleans (`yes`, `no`, `on`, `off` are the words
they spell: `country: NO` is Norway, and a boolean field refuses them).

A file is untrusted input, so the work it can ask for is bounded: nesting deeper
than MAX_DEPTH and aliases expanding to more than MAX_ALIAS_VALUES values (a
"billion laughs" file) are YAML errors with a position, never a RecursionError
or gigabytes of memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from agentform.core.errors import AgentformError
from agentform.core.gcpause import collector_paused

PathKey = tuple[str | int, ...]

PURE_LOADER: type[yaml.SafeLoader] = yaml.SafeLoader
FAST_LOADER: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
LIBYAML = FAST_LOADER is not PURE_LOADER
STR_TAG = "tag:yaml.org,2002:str"
MAX_DEPTH = 64  # levels of nesting; a workspace needs about six
MAX_ALIAS_VALUES = 100_000  # values built again through aliases, in one document
BOOL_TAG = "tag:yaml.org,2002:bool"
YAML_BOOLEANS = ("true", "false")  # YAML 1.2's; 1.1's yes/no/on/off stay words


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
    return str(_Builder(Located(None)).build(node))  # bounded, as any value


def problem_of(exc: yaml.YAMLError) -> tuple[str, tuple[int, int] | None]:
    """PyYAML's problem in one line, and its (line, column) from 1 when it has one
    (its own text adds several lines of context)."""
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        message = str(exc.problem or exc.context)
        return message, (mark.line + 1, mark.column + 1) if mark else None
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__, None


class TooDeep(AgentformError, ConstructorError):
    """Nesting past MAX_DEPTH, however it was found (libyaml's limit, the pure
    parser's recursion, the builder's count)."""


def _too_deep(mark: Any = None) -> yaml.MarkedYAMLError:
    return TooDeep(None, None, f"nesting deeper than {MAX_DEPTH} levels", mark)


def parse(text: str, loader: type[Any] | None = None) -> Located:
    """Parse one YAML document; raises yaml.YAMLError (with a mark) when broken."""
    with collector_paused():
        return _parse(text, loader)


def _parse(text: str, loader: type[Any] | None) -> Located:
    try:
        node = _compose(text, loader or FAST_LOADER)
    except yaml.YAMLError as exc:
        if loader is not None or not LIBYAML or isinstance(exc, TooDeep):
            raise  # (re-reading a file nested too deep only recurses out of the stack)
        # The pure-Python parser words errors better and both installs must agree.
        node = _compose(text, PURE_LOADER)
    out = Located(None, node)
    if node is None:
        out.data = {}
        return out
    out.data = _Builder(out).build(node)
    return out


def _compose(text: str, loader: type[Any]) -> Node | None:
    """The node tree; libyaml's own depth limit and the pure parser's recursion both
    come out as one error, worded as the builder's."""
    try:
        return yaml.compose(text, Loader=loader)
    except RecursionError:
        raise _too_deep() from None
    except yaml.MarkedYAMLError as exc:
        if "maximum nesting depth" in str(exc.problem):
            raise _too_deep(exc.problem_mark) from None
        raise


def parse_all(text: str) -> list[Any]:
    """The data of every document of a YAML stream, read as `parse` reads one (keys as
    written); raises yaml.YAMLError when broken."""
    with collector_paused():
        try:
            nodes = list(yaml.compose_all(text, Loader=FAST_LOADER))
        except RecursionError:
            raise _too_deep() from None
    return [_Builder(Located(None, node)).build(node) for node in nodes if node is not None]


MAX_VALUE_TEXT = 64 << 10  # characters of one value given on the command line


def parse_value(text: str) -> Any:
    """One value written on a command line (`--var n=3`, `--var members=[a, b]`), read
    as Terraform reads `-var`: a YAML scalar or flow collection, with this module's
    bounds. Empty text is the empty string. Raises ValueError saying what is wrong."""
    if not text.strip():
        return text
    if len(text) > MAX_VALUE_TEXT:
        raise ValueError(f"longer than {MAX_VALUE_TEXT:,} characters")
    try:
        with collector_paused():
            node = _compose(text, PURE_LOADER)
            if isinstance(node, MappingNode | SequenceNode) and not node.flow_style:
                raise ValueError("a YAML block, not one value ([a, b] is a list, {k: v} a mapping)")
            return _Builder(Located(None, node)).build(node) if node is not None else None
    except yaml.YAMLError as exc:
        message, _ = problem_of(exc)
        raise ValueError(f"not a YAML value: {message}") from None


def _mark(node: Node) -> tuple[int, int]:
    return (node.start_mark.line + 1, node.start_mark.column + 1)


class _Builder:
    """Nodes to plain data. Plain strings (nearly every scalar of a workspace) are
    taken as they are; other scalars go through PyYAML's safe constructor."""

    def __init__(self, out: Located) -> None:
        self.out = out
        self.constructor = SafeConstructor()
        self.open: set[int] = set()  # containers being built: a recursive alias is an error
        self.built: set[int] = set()  # nodes built once: another build is an alias's
        self.again = 0  # values built again through aliases
        self.alias_at: Node | None = None  # the container of the alias being expanded
        self.merged: dict[int, int] = {}  # a mapping's pairs brought in by merge keys

    def build(self, node: Node, depth: int = 0, parent: Node | None = None) -> Any:
        if depth >= MAX_DEPTH:
            raise _too_deep(node.start_mark)
        if id(node) not in self.built:
            self.built.add(id(node))
            return self._build(node, depth)
        outermost = self.alias_at is None
        if outermost:
            self.alias_at = parent or node
        try:
            self._count_again()
            return self._build(node, depth)
        finally:
            if outermost:
                self.alias_at = None

    def _build(self, node: Node, depth: int) -> Any:
        if isinstance(node, ScalarNode):
            tag = node.tag
            if tag == STR_TAG:
                return node.value
            if tag == BOOL_TAG:
                word = node.value.lower()
                return SafeConstructor.bool_values[word] if word in YAML_BOOLEANS else node.value
            return self.constructor.construct_object(node, deep=True)
        if id(node) in self.open:
            raise ConstructorError(None, None, "found a recursive alias", node.start_mark)
        self.open.add(id(node))
        try:
            if isinstance(node, MappingNode):
                return self._mapping(node, depth + 1)
            assert isinstance(node, SequenceNode)
            return [self.build(item, depth + 1, node) for item in node.value]
        finally:
            self.open.discard(id(node))

    def _count_again(self) -> None:
        self.again += 1
        if self.again > MAX_ALIAS_VALUES:
            where = self.alias_at
            assert where is not None
            raise ConstructorError(
                None,
                None,
                f"aliases expand to more than {MAX_ALIAS_VALUES:,} values "
                "(the limit of a workspace file)",
                where.start_mark,
            )

    def _mapping(self, node: MappingNode, depth: int) -> dict[str, Any]:
        merged = self._flatten(node)
        result: dict[str, Any] = {}
        written: set[str] = set()
        for index, (key_node, value_node) in enumerate(node.value):
            key = _key_text(key_node)
            if index >= merged:  # merged keys give way to written ones, silently
                if key in written:
                    self.out.duplicates.append((key, *_mark(key_node)))
                written.add(key)
            result[key] = self.build(value_node, depth, node)
        return result

    def _flatten(self, node: MappingNode) -> int:
        """Merge keys resolved in place (PyYAML puts the merged pairs first, the
        written ones after); how many pairs came from merges. A node reached again
        through an alias is flattened already: its count is remembered."""
        if id(node) not in self.merged:
            written = sum(1 for key, _ in node.value if key.tag != "tag:yaml.org,2002:merge")
            self.constructor.flatten_mapping(node)
            self.merged[id(node)] = len(node.value) - written
        return self.merged[id(node)]
