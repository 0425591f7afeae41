"""Undefined names in workspace templates: strict, but recorded rather than raised
while a file renders, so every undefined name of a file is reported at once, each
at its line (render.py sets the recorder)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from typing import Any

import jinja2

on_undefined: ContextVar[Callable[[str | None], None] | None] = ContextVar(
    "on_undefined", default=None
)
"""Told each use of an undefined name: its message, or None when the name may be one
of agentform.yaml's vars, which could not be read (its own error says why)."""


class Variables(dict[str, Any]):
    """A template's `vars`: a name it lacks is said as a variable not set, with the
    set one it is close to, not as Jinja2's "'dict object' has no attribute".
    `complete`: False when agentform.yaml's vars could not be read: a name not found
    may be one of them, so it is not said to be unset."""

    complete = True

    @classmethod
    def of(cls, values: Mapping[str, Any], complete: bool = True) -> Variables:
        made = cls(values)
        made.complete = complete and getattr(values, "complete", True)
        return made


class RecordingUndefined(jinja2.StrictUndefined):
    """Strict, but a use is recorded and rendering goes on, so every undefined
    name of a file is reported, not only the first."""

    @property
    def _undefined_message(self) -> str:
        missing, name = self._undefined_obj, self._undefined_name
        if not isinstance(missing, Variables) or not isinstance(name, str):
            return str(super()._undefined_message)
        from agentform.core.problems import did_you_mean

        hint = did_you_mean(name, list(missing)) or (
            " (set it under vars: in agentform.yaml, in a var file or with --var NAME=VALUE)"
        )
        return f"variable {name!r} is not set{hint}"

    def _record(self) -> None:
        record = on_undefined.get()
        missing = self._undefined_obj
        if record is None:
            self._fail_with_undefined_error()
        elif isinstance(missing, Variables) and not missing.complete:
            record(None)
        else:
            record(self._undefined_message)

    def _fail_or_self(self, *args: Any, **kwargs: Any) -> Any:
        if on_undefined.get() is None:
            return self._fail_with_undefined_error()
        self._record()
        return self

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _fail_or_self
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = _fail_or_self
    __mod__ = __rmod__ = __pos__ = __neg__ = __call__ = __getitem__ = _fail_or_self
    __lt__ = __le__ = __gt__ = __ge__ = __pow__ = __rpow__ = _fail_or_self

    def __getattr__(self, name: str) -> Any:
        if name[:2] == "__":
            raise AttributeError(name)
        return self._fail_or_self()

    def __str__(self) -> str:  # type: ignore[override]
        self._record()
        return ""

    def __iter__(self) -> Iterator[Any]:  # type: ignore[override]
        self._record()
        return iter(())

    def __len__(self) -> int:  # type: ignore[override]
        self._record()
        return 0

    def __bool__(self) -> bool:  # type: ignore[override]
        self._record()
        return False

    def __eq__(self, other: object) -> bool:  # type: ignore[override]
        self._record()
        return False

    def __ne__(self, other: object) -> bool:  # type: ignore[override]
        self._record()
        return True

    def __contains__(self, item: object) -> bool:  # type: ignore[override]
        self._record()
        return False

    def __hash__(self) -> int:  # type: ignore[override]
        return id(self)
