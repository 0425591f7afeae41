"""The canary matrix: secret() values are found in no output, in no encoding.

Three canaries (plain ASCII, non-ASCII, one holding `"` and `\\`), each with an
earlier value (the rotation case: the live workspace still holds the earlier
value). Each reaches agentform four ways: `secret('TOKEN')` in template text,
`secret('TOKEN')` in a batch item's inputs (read back from the service and
compared), `secret('HEADER')` in a webhook header value, and written plainly as
another header value (header values are sensitive however they are written). Every
output agentform produces is a function registered in OUTPUTS; the one
parametrised test runs each output with each canary, records a cassette where
the command calls the API, and looks for the canaries in all it produced:
stdout, stderr, written files (plans, exports, cassettes, crash logs), raw and
in every encoding a value can take. A new command or --format must add its
outputs here: `test_every_command_and_format_has_an_output` fails until it does.

One service serves the whole module over loopback HTTP; each test has an
organization (and key) of its own in it, so tests share no objects.
"""

from __future__ import annotations

import base64
import itertools
import json
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import click
import httpx
import pytest
import yaml
from click.testing import CliRunner

from agentform.api.retries import RetryPolicy
from agentform.cli.main import cli
from agentform.core.secrets import Secrets
from agentform.core.sensitive import MASK
from agentform.service import create_app
from agentform.service.startup.seed_file import Seed
from tests.loopback import serving

SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class Canary:
    name: str
    current: str
    earlier: str

    def values(self) -> tuple[str, ...]:
        forms = (self.current, self.earlier, header(self.current), header(self.earlier))
        return tuple(dict.fromkeys(forms))


def header(value: str) -> str:
    """The canary as a header value can hold it (printable ASCII)."""
    return value.encode("ascii", "backslashreplace").decode()


CANARIES = [
    Canary("ascii", "cnryAlpha-7Qx2Lm9", "cnryAlphaOld-3Vb8Kp4"),
    Canary("non-ascii", "cnryEcho-üé-1U6", "cnryEchoOld-ñø-5T2"),
    Canary("quote-backslash", 'cnryFox"q\\z2V7', 'cnryFoxOld\\"w9K4'),
]

FILES = {
    "pools.yaml": "profilePools:\n  - {name: canary-pool, members: [bot-1]}\n",
    # the receiver refuses (a port nothing listens on): deliveries fail, on loopback
    "hooks.yaml": "webhooks:\n  - name: canary-hook\n    url: http://127.0.0.1:9/canary\n"
    "    headers:\n      Authorization: \"Bearer {{ secret('HEADER') }}\"\n"
    "      X-Plain: PLAIN\n",
    "vault.yaml": """\
vaultTemplates:
  - name: Canary login
    kind: login
    description: "{{ secret('TOKEN') }}"
    fields:
      - {type: username, label: User, required: true, hint: "use {{ secret('TOKEN') }} here"}
      - {type: password, label: Password, required: true}
    steps:
      - key: sign-in
        title: Sign in
        instructions: "{{ secret('TOKEN') }}"
        fieldKeys: [USER, PASSWORD]
""",
    # a pending batch: its items' inputs are read back (/items) and compared
    "batches.yaml": """\
batches:
  - name: canary-batch
    agent: canary-agent
    startAt: 2030-01-01T00:00:00Z
    config: {type: timeBatching, batchSize: 1, batchInterval: 60}
    items:
      - inputs: {token: "{{ secret('TOKEN') }}", note: "for {{ secret('TOKEN') }}", n: 1}
""",
}


def workspace_files(canary: Canary, endpoint: str) -> dict[str, str]:
    """The workspace of one test: its endpoint, and the canary written plainly as a
    header value (JSON is YAML: the value is quoted whatever its characters)."""
    plain = json.dumps(header(canary.current))
    files = {name: text.replace("PLAIN", plain) for name, text in FILES.items()}
    return {"agentform.yaml": f"workspace: canaries\nendpoint: {endpoint}\n", **files}


# -- finding a canary ------------------------------------------------------------


def _forms(value: str) -> set[str]:
    """The encodings a value can take, written independently of agentform's scrubber."""
    data = value.encode()
    forms = {
        value,
        json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=False)[1:-1],
        quote(value),
        quote(value, safe=""),
        quote_plus(value),
        value.encode("unicode_escape").decode(),
    }
    for pad in range(3):
        encoded = base64.b64encode(b"\0" * pad + data).decode()
        middle = encoded[(pad * 8 + 5) // 6 : (8 * (pad + len(data))) // 6]
        forms |= {middle, middle.replace("+", "-").replace("/", "_")}
    stem = value[:7]  # "cnryXxx": an ASCII stem no other text holds (before any " or \\)
    forms.add(stem)
    return forms


def _decoded_strings(blob: bytes) -> Iterator[str]:
    """Every string inside a blob that is YAML or JSON (a cassette, a plan, an export),
    Base64 bodies decoded. (libyaml's loader when there is one: the blobs of one case
    are ~100 kB of YAML, which the pure-Python loader parses at ~1 MB/s.)"""
    try:
        data = yaml.load(blob.decode("utf-8", "replace"), Loader=SafeLoader)
    except yaml.YAMLError:
        return
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, bytes):
            yield item.decode("utf-8", "replace")
        elif isinstance(item, dict):
            stack += [*item.keys(), *item.values()]
        elif isinstance(item, list):
            stack += item


def leaks(blob: bytes, canary: Canary) -> list[str]:
    found = []
    text = blob.decode("utf-8", "replace")
    lowered = text.lower()
    decoded: list[str] | None = None  # parsed once, for the first value that needs it
    for value in canary.values():
        for form in _forms(value):
            if form in text or form.lower() in lowered:
                found.append(f"{form!r} (a form of {value!r})")
        decoded = list(_decoded_strings(blob)) if decoded is None else decoded
        if any(value in s or value[:7] in s for s in decoded):
            found.append(f"{value!r} inside a decoded string")
    return found


def test_the_leak_finder_finds_each_form() -> None:
    for canary in CANARIES:
        for value in canary.values():
            for form in _forms(value):
                assert leaks(f"x {form} y".encode(), canary), form
            wrapped = base64.b64encode(b"prefix-" + value.encode() + b"-suffix")
            assert leaks(b"body: " + wrapped, canary)
        assert leaks(b"", canary) == []


# -- running outputs ---------------------------------------------------------------


@dataclass
class Run:
    """One output's run: a workspace copy, the canary's environment, what was produced."""

    root: Path
    canary: Canary
    key: str  # the API key of this test's organization
    inputs: dict[str, bytes] = field(default_factory=dict)  # workspace files, as written
    produced: list[tuple[str, bytes]] = field(default_factory=list)
    cassettes: int = 0

    @property
    def ws(self) -> str:
        return str(self.root / "ws")

    def env(self, value: str | None = "", **extra: str | None) -> dict[str, str | None]:
        """The canary's environment: TOKEN and HEADER hold `value` (default: the
        current canary; None: unset)."""
        value = self.canary.current if value == "" else value
        secrets = {"TOKEN": value, "HEADER": None if value is None else header(value)}
        return {**secrets, "AGENTFORM_API_KEY": self.key, **extra}

    def cli(
        self,
        *args: str,
        code: int | None = 0,
        env: dict[str, str | None] | None = None,
        record: bool = True,
        crash: bool = False,
        recorded: bool | None = None,
    ) -> str:
        """Runs agentform (with --record-cassette when `record`), keeps all it produced.
        A failing run fails cleanly: a crash (a bug) only where `crash` says so. A
        recording run writes its cassette (`recorded`; by default when it succeeds)."""
        args = (*args, "-C", self.ws)
        cassette = self.root / f"run-{self.cassettes + 1}.yaml"
        if record:
            self.cassettes += 1
            args = (*args, "--record-cassette", str(cassette))
        result = CliRunner().invoke(cli, list(args), env=env or self.env())
        label = " ".join(args[:2])
        self.produced.append((f"stdout of {label}", result.stdout.encode()))
        self.produced.append((f"stderr of {label}", result.stderr.encode()))
        if code is not None:
            assert result.exit_code == code, (label, result.output)
        assert ("Unexpected error" in result.output) == crash, (label, result.output)
        if record and (recorded or (recorded is None and result.exit_code == 0)):
            assert cassette.is_file(), f"{label} wrote no cassette"
        return result.output

    def input(self, name: str, text: str) -> Path:
        """A file the run reads (not searched: it holds the canary on purpose)."""
        path = self.root.parent / "inputs" / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
        return path

    def files(self) -> Iterator[tuple[str, bytes]]:
        """Every file the run wrote (the workspace's files, as the test wrote them,
        hold the plain header value on purpose)."""
        for path in sorted(self.root.rglob("*")):
            where = str(path.relative_to(self.root))
            if path.is_file() and self.inputs.get(where) != (blob := path.read_bytes()):
                yield where, blob


Output = Callable[[Run], None]
OUTPUTS: dict[str, Output] = {}
COMMANDS: dict[str, set[str]] = {}  # "command" or "command:format" -> outputs running it


def output(name: str, *commands: str) -> Callable[[Output], Output]:
    def register(fn: Output) -> Output:
        OUTPUTS[name] = fn
        for command in commands:
            COMMANDS.setdefault(command, set()).add(name)
        return fn

    return register


@output("validate", "validate")
def _validate(run: Run) -> None:
    run.cli("validate", record=False)


@output("plan text, new objects", "plan:text")
def _plan_text(run: Run) -> None:
    run.cli("plan", "--detailed-exitcode", code=2)


@output("plan json, new objects", "plan:json")
def _plan_json(run: Run) -> None:
    run.cli("plan", "--format", "json")


@output("plan -v after a rotation", "plan:text")
def _plan_verbose(run: Run) -> None:
    rotate(run)
    assert "(sensitive, changed)" in run.cli("plan", "-v")


@output("plan --out after a rotation", "plan:text", "plan:json")
def _plan_out(run: Run) -> None:
    rotate(run)
    run.cli("plan", "--out", str(run.root / "plan.json"))
    run.cli("plan", "--format", "json", "--out", str(run.root / "plan2.json"))


@output("apply, new objects", "apply:text")
def _apply(run: Run) -> None:
    run.cli("apply", "--auto-approve")
    assert "REDACTED" in (run.root / "run-1.yaml").read_text()  # recorded, and scrubbed


@output("apply after a rotation, text and json", "apply:text", "apply:json")
def _apply_rotated(run: Run) -> None:
    rotate(run)
    run.cli("apply", "--auto-approve", "-v")
    rotate(run, back=True)
    run.cli("apply", "--auto-approve", "--format", "json", env=run.env(run.canary.earlier))


@output("apply of a saved plan after a rotation", "apply:text", "plan:text")
def _apply_saved(run: Run) -> None:
    rotate(run)
    plan = str(run.root / "plan.json")
    run.cli("plan", "--out", plan)
    run.cli("apply", plan)
    assert "No changes." in run.cli("plan")


@output("export after a rotation, stdout and --out", "export")
def _export(run: Run) -> None:
    rotate(run)
    printed = run.cli("export")
    assert "secret(" in printed
    run.cli("export", "--out", str(run.root / "exported"))


@output("export with the secret unset", "export")
def _export_unset(run: Run) -> None:
    rotate(run)
    printed = run.cli("export", env=run.env(None))
    assert "TOKEN is not set" in printed and """'{{ secret("TOKEN") }}'""" in printed


@output("list text and json after a rotation", "list:text", "list:json")
def _list(run: Run) -> None:
    rotate(run)
    assert "webhooks/canary-hook" in run.cli("list")
    run.cli("list", "--format", "json")


@output("import of a webhook and a template holding secrets", "import")
def _import(run: Run) -> None:
    run.cli("apply", "--auto-approve", record=False)
    for name in ("hooks.yaml", "vault.yaml"):  # live, no longer declared
        (run.root / "ws" / name).unlink()
    run.cli("import", "webhooks/canary-hook", "vaultTemplates/Canary login")
    written = (run.root / "ws" / "imported.yaml").read_text()
    assert "secret(" in written


@output(
    "env list and env diff of two environments holding secrets",
    "env list:text",
    "env list:json",
    "env diff:text",
    "env diff:markdown",
    "env diff:json",
)
def _environments(run: Run) -> None:
    root = run.root / "ws" / "agentform.yaml"
    text = root.read_text() + "environments:\n  staging: {vars: {n: 1}}\n  prod: {vars: {n: 2}}\n"
    root.write_text(text)
    run.inputs["ws/agentform.yaml"] = text.encode()
    # offline: no service is called, so no cassette is recorded
    assert "staging" in run.cli("env", "list", record=False)
    run.cli("env", "list", "--format", "json", record=False)
    for fmt in ("text", "markdown", "json"):
        said = run.cli("env", "diff", "staging", "prod", "--format", fmt, code=None, record=False)
        assert "prod" in said


@output("a wrong API key (the canary itself)", "plan:text", "apply:text")
def _wrong_key(run: Run) -> None:
    key = run.input("key", run.canary.current)
    run.cli("plan", "--api-key-file", str(key), code=1)
    run.cli("apply", "--auto-approve", env=run.env(AGENTFORM_API_KEY=run.canary.earlier), code=1)


@output("the service down", "plan:text", "apply:text", "export")
def _service_down(run: Run) -> None:
    down = ("--endpoint", "http://127.0.0.1:9/agents/v2")
    env = run.env()
    for command in (("plan",), ("apply", "--auto-approve"), ("export",)):
        assert "cannot reach" in run.cli(*command, *down, env=env, code=1)


@output("diagnostics that would name the value", "validate", "plan:text")
def _diagnostics(run: Run) -> None:
    (run.root / "ws" / "bad.yaml").write_text(
        "profilePools:\n  - name: \"{{ secret('TOKEN') }}\"\n"
        "profileGroups:\n  - name: g\n    members: [\"{{ secret('TOKEN') }}\", bot-1]\n"
        "  - name: h\n    selectionStrategy: \"{{ secret('TOKEN') }}\"\n"
    )
    assert "secret() value cannot be used here" in run.cli("validate", code=1, record=False)
    (run.root / "ws" / "bad.yaml").write_text(
        "profileGroups:\n  - name: g\n    members: [\"{{ secret('TOKEN') }}\", bot-1]\n"
    )
    assert "no profile named (sensitive)" in run.cli("plan", code=1)
    (run.root / "ws" / "bad.yaml").write_text(
        "vaultTemplates:\n  - name: Long\n    kind: custom\n"
        "    description: \"{{ secret('TOKEN') }}{{ 'x' * 4000 }}\"\n"
        "    fields: [{type: text, label: A, required: true}]\n"
    )
    assert "at most 4000 characters" in run.cli("validate", code=1, record=False)


@output("a secret transformed by filters, slicing and concatenation", "validate", "plan:text")
def _transformed(run: Run) -> None:
    """The value never enters the template (secret() gives a token), so no filter
    can reveal it: a transform that would change it is refused at its line."""
    (run.root / "ws" / "bad.yaml").write_text(
        "vaultTemplates:\n  - name: Transformed\n    kind: custom\n"
        "    description: \"{{ secret('TOKEN')|upper }} {{ secret('TOKEN')|reverse }}\"\n"
        "    fields:\n"
        "      - {type: text, label: A, required: true, hint: \"{{ secret('TOKEN')[1:] }}\"}\n"
        "      - {type: text, label: B, required: true, hint: \"x{{ secret('TOKEN') ~ 'y' }}\"}\n"
    )
    said = run.cli("validate", code=1, record=False)
    assert "a secret() value can only be placed in text, not given to |upper" in said
    run.cli("plan", code=1)


@output("a crash (a bug) whose message holds the value", "plan:text")
def _crash(run: Run) -> None:
    from agentform.output import text

    rotate(run)  # the earlier value is known once the plan has read it

    def broken(self: Any, plan: Any) -> str:
        raise RuntimeError(f"boom near {run.canary.current!r} and {run.canary.earlier}")

    original = text.TextView.plan
    text.TextView.plan = broken  # type: ignore[method-assign]
    try:
        assert "Unexpected error" in run.cli("plan", code=1, crash=True)
    finally:
        text.TextView.plan = original  # type: ignore[method-assign]
    logs = list((run.root / "ws" / ".agentform").glob("crash-*.log"))
    assert len(logs) == 1 and "RuntimeError: boom near" in logs[0].read_text()


@output("plan and apply, markdown, after a rotation", "plan:markdown", "apply:markdown")
def _markdown(run: Run) -> None:
    rotate(run)
    run.cli("plan", "--format", "markdown")
    run.cli("apply", "--auto-approve", "--format", "markdown")


@output("drift after a rotation, every format", "drift:text", "drift:markdown", "drift:json")
def _drift(run: Run) -> None:
    rotate(run)
    for fmt in ("text", "markdown", "json"):
        run.cli("drift", "--format", fmt, code=2)


@output("show of a saved plan, every format", "show:text", "show:markdown", "show:json")
def _show(run: Run) -> None:
    rotate(run)
    plan = str(run.root / "plan.json")
    run.cli("plan", "--out", plan)
    for fmt in ("text", "markdown", "json"):
        run.cli("show", plan, "--format", fmt, record=False)  # offline: refuses recording


@output("webhook test after a rotation", "webhook test")
def _webhook_test(run: Run) -> None:
    rotate(run)
    said = run.cli("webhook", "test", "canary-hook", "--wait", "0", code=1, recorded=True)
    assert "EXECUTION_TEST to canary-hook" in said


@output(
    "webhook explain of an execution, every format", "webhook explain:text", "webhook explain:json"
)
def _webhook_explain(run: Run) -> None:
    rotate(run)
    endpoint = yaml.safe_load((run.root / "ws" / "agentform.yaml").read_text())["endpoint"]
    with httpx.Client(base_url=endpoint, headers={"X-Api-Key": run.key}) as api:
        hooks = api.get("/webhook-integrations").json()["items"]
        agents = api.get("/agents").json()["items"]
        hook = next(h["id"] for h in hooks if h["name"] == "canary-hook")
        agent = next(a["id"] for a in agents if a["name"] == "canary-agent")
        rules = {"eventRules": ["*"], "metadataFilter": {"team": "ops"}}
        assert api.put(f"/agents/{agent}/webhooks/{hook}", json=rules).status_code == 200
        execution = api.post(f"/agents/{agent}/execute", json={"metadata": {"team": "ops"}})
        execution_id = execution.json()["executionId"]
    for fmt in ("text", "json"):
        said = run.cli("webhook", "explain", execution_id, "--format", fmt, record=False)
        assert "canary-hook" in said


CANARY_TESTS = """\
seed:
  organizations:
    - name: canaries
      apiKeys: [{name: admin, key: canary-test-key-1, role: admin}]
      profiles: [{name: bot-1}, {name: bot-2}]
      agents: [{name: canary-agent}]
tests:
  - name: the files apply and still match
    steps:
      - expect: {plan: empty}
  - name: a failing expectation
    steps:
      - expect: {calls: [{method: PATCH, path: "/**"}]}
"""


@output("test, every format", "test:text", "test:junit", "test:markdown", "test:json")
def _test(run: Run) -> None:
    tests = Path(run.ws) / "tests" / "canary.yaml"
    tests.parent.mkdir()
    tests.write_text(CANARY_TESTS)
    run.inputs["ws/tests/canary.yaml"] = CANARY_TESTS.encode()
    junit = ("--junit-xml", str(run.root / "junit.xml"))  # written by the last run too
    for fmt in ("text", "junit", "markdown", "json"):
        also = junit if fmt == "json" else ()
        said = run.cli("test", "--format", fmt, *also, code=1, record=False)
        assert "PATCH /**: the apply made 0, expected at least 1" in said
    assert (run.root / "junit.xml").is_file()
    # an unset secret stands in as test-NAME: a test needs no production secret
    run.cli("test", code=1, record=False, env=run.env(None))


@output("webhook deliveries and resend after a test", "webhook deliveries", "webhook resend")
def _webhook_deliveries(run: Run) -> None:
    rotate(run)
    run.cli("webhook", "test", "canary-hook", "--wait", "0", code=1, recorded=True)
    listed = run.cli("webhook", "deliveries", "canary-hook", recorded=True)
    assert "EXECUTION_TEST" in listed
    said = run.cli(
        "webhook", "resend", "--failed-since", "1d", "--integration", "canary-hook", recorded=True
    )
    assert said.startswith(("resent", "nothing to resend"))


def write_input(run: Run, where: str, text: str) -> None:
    """A file of the run's workspace or repository, as the test writes it."""
    (run.root / where).parent.mkdir(parents=True, exist_ok=True)
    (run.root / where).write_text(text)
    run.inputs[where] = text.encode()


@output(
    "affected after a header value written in a file changed",
    "affected:text",
    "affected:json",
    "affected:github-matrix",
)
def _affected(run: Run) -> None:
    write_input(run, "agentform-repository.yaml", "workspaces: [ws]\n")
    # git's own files outside the searched folder (a .git file points at them)
    subprocess.run(
        ["git", "init", "-q", "--separate-git-dir", str(run.root.parent / "git"), str(run.root)],
        check=True,
    )
    git = ["git", "-C", str(run.root), "-c", "user.name=t", "-c", "user.email=t@t.invalid"]
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True)
    hooks = run.inputs["ws/hooks.yaml"].decode()
    write_input(
        run,
        "ws/hooks.yaml",
        hooks.replace(
            json.dumps(header(run.canary.current)), json.dumps(header(run.canary.earlier))
        ),
    )
    said = run.cli("affected", "--base", "HEAD", "--why", record=False)
    assert "ws" in said, said
    for fmt in ("json", "github-matrix"):
        run.cli("affected", "--base", "HEAD", "--why", "--format", fmt, record=False)


POLICY = """\
rules:
  - name: canary-headers
    description: tries to print a webhook's header values
    level: advisory
    match: {kinds: [webhooks]}
    deny: "true"
    message: "'headers: ' + change.after.headers['Authorization'] + change.after.headers['X-Plain']"
  - name: canary-is-secret
    description: a header from secret() is known as one, never read
    level: advisory
    match: {kinds: [webhooks]}
    deny: "true"
    message: "'webhook ' + change.name + ' has headers'"
"""

POLICY_TESTS = """\
tests:
  - name: headers
    change:
      kind: webhooks
      name: h
      action: create
      after: {headers: {Authorization: "(secret)", X-Plain: "(sensitive)"}}
    violates: [canary-headers, canary-is-secret]
"""


@output(
    "plan and policy test with policies that try to print header values",
    "plan:text",
    "plan:markdown",
    "plan:json",
    "policy test:text",
    "policy test:junit",
    "policy test:markdown",
    "policy test:json",
)
def _policies(run: Run) -> None:
    write_input(run, "ws/policies/canary.yaml", POLICY)
    write_input(run, "ws/policies/tests/canary.yaml", POLICY_TESTS)
    assert "canary-is-secret" in run.cli("plan", "--detailed-exitcode", code=2)
    for fmt in ("markdown", "json"):
        run.cli("plan", "--format", fmt)
    for fmt in ("text", "junit", "markdown", "json"):
        run.cli("policy", "test", "--format", fmt, record=False)


def rotate(run: Run, back: bool = False) -> None:
    """The live workspace holds the other value (applied before the secret changed)."""
    value = run.canary.current if back else run.canary.earlier
    CliRunner().invoke(cli, ["apply", "--auto-approve", "-C", run.ws], env=run.env(value))


EXEMPT = {
    "init": "writes a scaffold, reads no workspace",
    "schema": "writes the JSON Schema, reads no workspace",
    "service": "serves the API; its callers' secrets are theirs",
    "webhook verify": "reads only the files it is given (a body, a signature, a key)",
    "webhook listen": "a server that prints one line per delivery (no header, no value); "
    "its --save captures mask custom header values (tests/webhooks/test_cli_tools.py)",
}


def _commands(group: click.Group, prefix: str = "") -> Iterator[tuple[str, click.Command]]:
    """Every command under `group`, subcommands of its groups included ("webhook test")."""
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        full = f"{prefix}{name}"
        if full in EXEMPT:
            continue
        if isinstance(command, click.Group):
            yield from _commands(command, f"{full} ")
        else:
            yield full, command


def test_every_command_and_format_has_an_output() -> None:
    """Each command, and each of its --format choices ("plan:json"), is an output
    some entry of OUTPUTS runs: a new command or format joins the matrix here."""
    assert isinstance(cli, click.Group)
    wanted = set()
    for name, command in _commands(cli):
        formats = [
            p.type.choices
            for p in command.params
            if "--format" in getattr(p, "opts", ()) and isinstance(p.type, click.Choice)
        ]
        wanted |= {f"{name}:{f}" for f in formats[0]} if formats else {name}
    assert "webhook test" in wanted and "plan:json" in wanted  # the walk reaches them
    missing = wanted - set(COMMANDS)
    assert not missing, f"add outputs of {sorted(missing)} to OUTPUTS in {__file__}"


TESTS = len(OUTPUTS) * len(CANARIES) * 2


def key_of(organization: int) -> str:
    return f"canary-key-{organization:04d}"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Iterator[int]]]:
    """The module's one service, serving an organization per test; yields the base
    URL and a source of unused organization numbers."""
    seed = Seed.model_validate(
        {
            "organizations": [
                {
                    "name": f"canaries-{i}",
                    "apiKeys": [{"name": "admin", "key": key_of(i), "role": "admin"}],
                    "profiles": [{"name": "bot-1"}, {"name": "bot-2"}],
                    "agents": [{"name": "canary-agent"}],
                }
                for i in range(TESTS)
            ]
        }
    )
    app = create_app(tmp_path_factory.mktemp("service") / "service.db", seed=seed)
    with serving(app) as origin:
        yield f"{origin}/agents/v2", itertools.count()


@pytest.mark.parametrize("defence", ["marks and scrub", "marks alone"])
@pytest.mark.parametrize("canary", CANARIES, ids=lambda c: c.name)
@pytest.mark.parametrize("name", sorted(OUTPUTS))
def test_no_output_holds_a_canary(
    name: str,
    canary: Canary,
    defence: str,
    service: tuple[str, Iterator[int]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ "marks alone": with the text scrubber off, the views still mask every value by
    its type (cassettes and crash logs, text that only the scrubber can clean, are
    not searched then)."""
    # Retries happen as they would, without their waits (the service-down runs).
    monkeypatch.setattr(RetryPolicy, "backoff", lambda self, attempt: 0.0)
    if defence == "marks alone":
        monkeypatch.setattr(Secrets, "scrub", lambda self, text, mask=MASK: text)
    endpoint, organizations = service
    root = tmp_path / "out"
    (root / "ws").mkdir(parents=True)
    run = Run(root, canary, key_of(next(organizations)))
    for file, text in workspace_files(canary, endpoint).items():
        (root / "ws" / file).write_text(text)
        run.inputs[f"ws/{file}"] = text.encode()
    OUTPUTS[name](run)
    searched = [*run.produced, *run.files()]
    if defence == "marks alone":
        scrubbed_only = ("run-", "ws/.agentform/crash")  # cassettes, crash logs
        searched = [(w, b) for w, b in searched if not w.startswith(scrubbed_only)]
    found = {where: problems for where, blob in searched if (problems := leaks(blob, canary))}
    assert not found, found
