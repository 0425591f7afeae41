"""Every way Python, logging, click, rich and Jinja turn a Sensitive into text gives
the mask, never the value.

The canary matrix (tests/test_canaries.py) runs agentform's outputs, and none of
them formats a Sensitive with `str()` or an f-string: a `__str__` or `__format__`
that returned the value would pass it. Here each conversion runs directly, with the
matrix's canaries (non-ASCII, `"` and `\\`) and with any text hypothesis draws; each
must give exactly its masked form, and the matrix's leak finder must find no
encoding of the value in it. The conversions that cannot give a mask refuse.
"""

from __future__ import annotations

import io
import json
import logging
import pickle
import pprint
import string
from collections.abc import Callable

import click
import pytest
import yaml
from hypothesis import example, given
from hypothesis import strategies as st
from jinja2 import Environment
from markupsafe import escape
from rich.console import Console
from rich.pretty import pretty_repr

from agentform.core.sensitive import MASK, SecretRef, Sensitive
from tests.test_canaries import CANARIES, Canary, leaks


def _logged(message: str, *args: object) -> str:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    logger = logging.getLogger("tests.sensitive_text")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning(message, *args)
    finally:
        logger.removeHandler(handler)
    return stream.getvalue()


def _echoed(value: object) -> str:
    stream = io.StringIO()
    click.echo(value, file=stream)
    return stream.getvalue()


def _printed(value: object) -> str:
    stream = io.StringIO()
    print(value, file=stream)
    return stream.getvalue()


def _rich(value: object) -> str:
    stream = io.StringIO()
    Console(file=stream, color_system=None, width=60, highlight=True).print(value)
    return stream.getvalue()


# each conversion -> what it must give (every Sensitive alike, whatever its value);
# the old-style forms are the point here, hence the noqa
TEXT_FORMS: dict[str, tuple[Callable[[Sensitive], str], str]] = {
    "str": (str, MASK),
    "repr": (repr, MASK),
    "ascii": (ascii, MASK),
    "format": (format, MASK),
    "format spec": (lambda s: format(s, ">14"), f"   {MASK}"),
    "f-string": (lambda s: f"<{s}>", f"<{MASK}>"),
    "f-string !s !r !a": (lambda s: f"{s!s} {s!r} {s!a}", f"{MASK} {MASK} {MASK}"),
    "f-string spec": (lambda s: f"{s:*^15}", f"**{MASK}**"),
    "str.format": (lambda s: "{0} {0!r}".format(s), f"{MASK} {MASK}"),  # noqa: UP032
    "format_map": (lambda s: "{v}".format_map({"v": s}), MASK),
    "% s r a": (lambda s: "%s %r %a" % (s, s, s), f"{MASK} {MASK} {MASK}"),  # noqa: UP031
    "% mapping": (lambda s: "%(v)s" % {"v": s}, MASK),  # noqa: UP031
    "string.Template": (lambda s: string.Template("$v").substitute(v=s), MASK),
    "json default=str": (lambda s: json.dumps({"k": [s]}, default=str), f'{{"k": ["{MASK}"]}}'),
    "containers": (lambda s: f"{[s]} { ({'k': s}) } {(s,)}", f"[{MASK}] {{'k': {MASK}}} ({MASK},)"),
    "pprint": (lambda s: pprint.pformat({"k": s}), f"{{'k': {MASK}}}"),
    "exception": (lambda s: f"{ValueError(s)} {ValueError(s)!r}", f"{MASK} ValueError({MASK})"),
    "logging %s %r": (lambda s: _logged("token %s %r", s, s), f"WARNING token {MASK} {MASK}\n"),
    "logging message": (lambda s: _logged(s), f"WARNING {MASK}\n"),  # type: ignore[arg-type]
    "print": (_printed, f"{MASK}\n"),
    "click.echo": (_echoed, f"{MASK}\n"),
    "rich": (_rich, f"{MASK}\n"),
    "rich list": (lambda s: _rich([s]), f"[{MASK}]\n"),
    "rich pretty_repr": (lambda s: pretty_repr({"k": s}), f"{{'k': {MASK}}}"),
    "jinja": (lambda s: Environment().from_string("{{ v }}").render(v=s), MASK),
    "jinja autoescape": (
        lambda s: Environment(autoescape=True).from_string("{{ v }}").render(v=s),
        MASK,
    ),
    "markupsafe": (lambda s: str(escape(s)), MASK),
}

REFUSED: dict[str, Callable[[Sensitive], object]] = {
    "json": lambda s: json.dumps({"k": s}),
    "concatenation": lambda s: "Bearer " + s,  # type: ignore[operator]
    "join": lambda s: "".join([s]),  # type: ignore[list-item]
    "yaml safe_dump": yaml.safe_dump,
    "yaml dump": yaml.dump,
    "pickle": pickle.dumps,
}


def _sensitives(value: str) -> list[Sensitive]:
    """The value as a Sensitive without parts, from one secret, and inside text."""
    return [
        Sensitive(value),
        Sensitive(value, (SecretRef("TOKEN"),)),
        Sensitive(f"x {value} y", ("x ", SecretRef("TOKEN"), " y")),
    ]


@pytest.mark.parametrize("canary", CANARIES, ids=lambda c: c.name)
@pytest.mark.parametrize("form", sorted(TEXT_FORMS))
def test_each_text_form_of_a_canary_is_the_mask(form: str, canary: Canary) -> None:
    convert, expected = TEXT_FORMS[form]
    for value in (canary.current, canary.earlier):
        for secret in _sensitives(value):
            text = convert(secret)
            assert text == expected
            assert leaks(text.encode(), canary) == []


@pytest.mark.parametrize("form", sorted(REFUSED))
def test_a_form_that_cannot_mask_refuses(form: str) -> None:
    for canary in CANARIES:
        with pytest.raises((TypeError, yaml.YAMLError)) as refused:
            REFUSED[form](Sensitive(canary.current))
        assert leaks(str(refused.value).encode(), canary) == []


@given(st.text(min_size=1))
@example('"\\')
@example("ü\"'\\n\\\\")
@example(MASK[1:])
def test_any_value_in_any_text_form_gives_the_mask(value: str) -> None:
    for convert, expected in TEXT_FORMS.values():
        for secret in _sensitives(value):
            text = convert(secret)
            assert text == expected
            if value not in expected:
                assert value not in text
