"""One command's run (Terraform's `command.Meta`): the options, the workspace in its
environment, the service's endpoint, the clients and the view.

A command gets a `RunContext` from `workspace_options` and asks it for everything
it talks to: `load()` the workspace, `with_api`/`with_own` (or `call` with
`api()` and `own()`) for the service's API and agentform's own operations beside
it, `view(fmt)` for its output. Both clients are built here alone, so both are
paced, timed, announce their retries and are recorded in a cassette the same way;
on `local` they share one in-process service, closed once when the run's calls end.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import click

from agentform.cli.options import Options
from agentform.cli.safety import run_secrets
from agentform.config.environments import ENV_VARIABLE, raw_environments
from agentform.config.files import root_file
from agentform.config.loader import load_workspace
from agentform.core.errors import AgentformError, DiagnosticsError

if TYPE_CHECKING:  # imported when a command calls the service: validate never loads httpx
    import httpx

    from agentform.api.client import ApiClient
    from agentform.api.connect import Endpoint
    from agentform.api.ratelimit import RateLimiter
    from agentform.config.loader import Workspace
    from agentform.core.secrets import Secrets
    from agentform.output.text import TextView
    from agentform.output.view import View

T = TypeVar("T")


class RunContext:
    """What one invocation of a command owns; built by `workspace_options`."""

    def __init__(self, opts: Options) -> None:
        self.opts = opts
        self._workspace: Workspace | None = None
        self._endpoint: Endpoint | None = None
        self._runtime = False
        self._local: httpx.AsyncBaseTransport | None = None  # `local`: the run's service
        self._limiter: RateLimiter | None = None  # one --rate-limit for the call's clients together

    # -- the workspace --------------------------------------------------------
    def environment_names(self) -> list[str]:
        """The environments agentform.yaml declares ([] when none, or no file)."""
        path = root_file(self.opts.workspace_dir)
        return list(raw_environments(path)) if path is not None else []

    def refuse_unchosen_environment(self) -> None:
        """With environments declared, a command that talks to a service needs one
        chosen: staging's files planned against prod's defaults is what this prevents."""
        names = self.environment_names()
        if names and self.opts.env is None:
            raise AgentformError(
                f"agentform.yaml declares environments ({', '.join(names)}): choose one with "
                f"--env NAME or {ENV_VARIABLE}"
            )

    def load(
        self, unset_secrets_allowed: bool = False, environ: Mapping[str, str] | None = None
    ) -> Workspace:
        """The workspace of -C in the environment --env chooses (which a command that
        talks to a service must choose when environments are declared)."""
        self.refuse_unchosen_environment()
        return self.load_environment(self.opts.env, unset_secrets_allowed, environ=environ)

    def load_environment(
        self,
        environment: str | None,
        unset_secrets_allowed: bool = False,
        template_name: str | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> Workspace:
        """The workspace of -C in `environment` (None: the workspace's own settings),
        the run's workspace from then on; `template_name`: the name its templates see
        instead of the environment's; `environ`: the secrets' values (default: the
        process's environment)."""
        workspace = load_workspace(
            self.opts.workspace_dir,
            self.opts.vars,
            self.opts.var_files,
            secrets=run_secrets(),
            unset_secrets_allowed=unset_secrets_allowed,
            environment=environment,
            template_name=template_name,
            environ=environ,
        )
        if self.opts.organization_id:
            workspace.settings.organization_id = self.opts.organization_id
            workspace.settings.organization_from = "--organization-id"
        return self.adopt(workspace)

    def adopt(self, workspace: Workspace) -> Workspace:
        """A workspace made otherwise (export's from the options alone) as the run's."""
        self._workspace, self._endpoint = workspace, None
        return workspace

    @property
    def workspace(self) -> Workspace:
        if self._workspace is None:
            raise RuntimeError("the command loads its workspace before using it")
        return self._workspace

    @property
    def secrets(self) -> Secrets:
        return self._workspace.secrets if self._workspace is not None else run_secrets()

    @property
    def root(self) -> Path:
        """Where a `local` service keeps its state: the workspace's directory."""
        if self._workspace is not None:
            return self._workspace.root
        return self.opts.workspace_dir.resolve()

    @property
    def local_state(self) -> Path:
        """The database of a `local` service: the workspace's, of its environment."""
        from agentform.cli.endpoint import local_state

        loaded = self._workspace
        return local_state(self.root, loaded.settings.environment if loaded else self.opts.env)

    # -- the service ----------------------------------------------------------
    def endpoint(self) -> Endpoint:
        """The endpoint of the loaded workspace (--endpoint over its `endpoint:`)."""
        if self._endpoint is None:
            from agentform.api.connect import Endpoint
            from agentform.cli.endpoint import api_key_for

            settings = self.workspace.settings
            url = self.opts.endpoint or settings.endpoint
            variable, environment = settings.api_key_env, settings.environment
            key = api_key_for(url, self.opts.api_key_file, variable, environment)
            self._endpoint = Endpoint(url, key).register(self.workspace.secrets)
        return self._endpoint

    def service(self, missing: str) -> Endpoint:
        """For a command that manages nothing: --endpoint alone, else the endpoint of
        the workspace it runs in (its secrets' values not needed); `missing` says
        what to do when there is neither."""
        if self._endpoint is not None or self._workspace is not None:
            return self.endpoint()
        if self.opts.endpoint:
            from agentform.api.connect import Endpoint
            from agentform.cli.endpoint import api_key_for

            key = api_key_for(self.opts.endpoint, self.opts.api_key_file)
            self._endpoint = Endpoint(self.opts.endpoint, key).register(run_secrets())
            return self._endpoint
        if not (self.opts.workspace_dir / "agentform.yaml").is_file():
            raise AgentformError(missing)
        self.load(unset_secrets_allowed=True)
        return self.endpoint()

    def api(self) -> ApiClient:
        """A client of the service's API, for use inside `call`."""
        return self._client(own=False)

    def own(self) -> ApiClient:
        """A client of agentform's own operations of the same service (docs/service/
        own-operations.md), for use inside `call`."""
        return self._client(own=True)

    def _client(self, own: bool) -> ApiClient:
        from agentform.api.connect import check_endpoint
        from agentform.cli.endpoint import local_service, open_client

        endpoint = self.endpoint()
        check_endpoint(endpoint)  # before a local service is built: that creates its database
        if endpoint.url == "local" and self._local is None:
            self._local = local_service(self.local_state, self._runtime)
        client = open_client(
            endpoint, self.root, own=own, transport=self._local, **self.opts.client_settings()
        )
        if self._limiter is None:
            self._limiter = client.limiter
        client.limiter = self._limiter
        return client

    def call(self, fn: Callable[[], Awaitable[T]], runtime: bool = False) -> T:
        """Runs fn, which uses `api()` and `own()`, recording a cassette when asked.
        `runtime`: a `local` service also runs the work that falls due meanwhile
        (executions, webhook deliveries); otherwise it answers the calls alone."""
        import asyncio  # here: `validate` never starts an event loop

        self._runtime = runtime
        self.endpoint()  # its problems are said before a cassette is begun

        async def go() -> T:
            try:
                return await fn()
            finally:
                self._limiter = None  # of this event loop's clients only
                if self._local is not None:
                    local, self._local = self._local, None
                    await local.aclose()

        with self._recording():
            return asyncio.run(go())

    def with_api(self, fn: Callable[[ApiClient], Awaitable[T]], runtime: bool = False) -> T:
        """fn with the API's client."""

        async def go() -> T:
            async with self.api() as api:
                return await fn(api)

        return self.call(go, runtime)

    def with_own(self, fn: Callable[[ApiClient], Awaitable[T]], runtime: bool = False) -> T:
        """fn with the client of agentform's own operations."""

        async def go() -> T:
            async with self.own() as own:
                return await fn(own)

        return self.call(go, runtime)

    @contextmanager
    def _recording(self) -> Iterator[None]:
        if self.opts.record_cassette is None:
            yield
            return
        from agentform.cli.cassette import recording  # vcrpy is loaded only to record

        with recording(self.opts.record_cassette, self.secrets, self.endpoint().api_key):
            yield

    # -- the output -----------------------------------------------------------
    def view(
        self, fmt: str, saved: Path | None = None, limit: bool = True, whole: str = ""
    ) -> View:
        """The view of --format: `limit`, markdown is cut at GitHub's comment size,
        saying where the whole document is (`whole`, or `saved`: the plan file)."""
        from agentform.cli.views import view_of

        return view_of(self.opts, fmt, saved, limit, whole)

    def terminal_view(self) -> TextView:
        """The text view, whatever --format says: progress lines and a plan to approve
        are read by the person at the terminal."""
        from agentform.output.text import TextView

        return TextView(self.opts.use_color, self.opts.verbose)

    def echo(self, text: str, nl: bool = True, err: bool = False) -> None:
        self.opts.echo(text, nl=nl, err=err)

    def progress(self, view: View) -> Callable[[str], None]:
        """Where progress lines go: stdout when they are the output, else stderr."""
        if view.lines_on_stdout:
            return self.opts.echo
        return lambda line: click.echo(line, err=True)

    @contextmanager
    def failing_as(self, view: View, what: str) -> Iterator[None]:
        """A failure also goes to stdout as the view shows one (markdown: a pipeline
        that posts the output posts the reason the run failed)."""
        try:
            yield
        except AgentformError as exc:
            if isinstance(exc, DiagnosticsError):
                messages = [d.render() for d in exc.diagnostics]
            else:
                messages = [str(exc)]
            from agentform.cli.views import workspace_name

            name = workspace_name(self.opts.workspace_dir)
            shown = view.error(what, name, messages, self.opts.env)
            if shown:
                click.echo(shown, nl=False)
            raise
