"""Where the sandbox's templates come from (config/sandbox.py): files of the
workspace by path, within its bounds, each remembered by its name in the workspace
(`WorkspaceLoader`), and their compiled code kept for the process (`COMPILED`)."""

from __future__ import annotations

from collections.abc import Callable

import jinja2

from agentform.config.sandbox_bounds import MAX_RENDERED, NotAllowed
from agentform.core.bounds import Bounds, broken_link, leads_outside


class WorkspaceLoader(jinja2.BaseLoader):
    """Templates by path from the workspace, symlinks resolved, within its bounds.
    It remembers each template's name in the workspace by its filename (what
    tracebacks and code objects carry), so a problem in an included file is
    reported at that file; `transform` (file's index, source) gives the text
    compiled (the line marks of lines.py)."""

    def __init__(self, bounds: Bounds, transform: Callable[[int, str], str] | None = None) -> None:
        self.bounds = bounds
        self.root = bounds.workspace
        self.transform = transform
        self.names: dict[str, str] = {}  # filename -> the name in the workspace
        self.sources: dict[str, str] = {}  # name in the workspace -> its text

    def normalised(self, template: str) -> str:
        """The name in the workspace of the file `template` names (`./a/../b.yaml`:
        `b.yaml`), as written when it leads outside."""
        path = self.bounds.inside(template)
        return self.bounds.name(path) if path is not None else template

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str, Callable[[], bool]]:
        path = self.bounds.inside(template)
        if path is None:
            raise NotAllowed(leads_outside(template, self.bounds.within))
        if (why := broken_link(path)) is not None:
            raise jinja2.TemplateNotFound(template, f"'{template}' is {why}")
        if not path.is_file():
            raise jinja2.TemplateNotFound(template)
        if path.stat().st_size > MAX_RENDERED:
            raise NotAllowed(f"'{template}' is larger than {MAX_RENDERED:,} bytes")
        try:
            source = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            why = f"{template} is not UTF-8 text (byte {exc.start}): workspace files are UTF-8"
            raise jinja2.TemplateNotFound(template, why) from exc
        except OSError as exc:
            why = f"cannot read {template} ({exc.strerror or exc})"
            raise jinja2.TemplateNotFound(template, why) from exc
        name = self.bounds.name(path)
        self.names[str(path)] = name
        self.sources[name] = source
        if self.transform is not None:
            source = self.transform(list(self.sources).index(name), source)
        mtime = path.stat().st_mtime
        return source, str(path), lambda: path.stat().st_mtime == mtime


class CompiledTemplates(jinja2.BytecodeCache):
    """Compiled templates, kept in memory for the process: a load that renders the
    same files again (`env diff` renders them three times, `validate` once per
    environment) compiles each file once. Jinja2 keys each by the file's path and
    checks its source's digest, so an edited file is compiled anew; every sandbox
    is configured alike, so one's code is another's. Bounded: the oldest go first."""

    MAX_BYTES = 64 << 20

    def __init__(self) -> None:
        self.codes: dict[str, bytes] = {}

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        code = self.codes.get(bucket.key)
        if code is not None:
            bucket.bytecode_from_string(code)

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        code = bucket.bytecode_to_string()
        self.codes.pop(bucket.key, None)
        while self.codes and sum(map(len, self.codes.values())) + len(code) > self.MAX_BYTES:
            del self.codes[next(iter(self.codes))]
        if len(code) <= self.MAX_BYTES:
            self.codes[bucket.key] = code


COMPILED = CompiledTemplates()
