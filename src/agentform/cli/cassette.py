"""--record-cassette: the run's HTTP exchanges as a vcrpy cassette, scrubbed.

Credential headers are replaced whole. Then, when the cassette is saved at the
end of the run, every known sensitive value (the API key, the secrets' values,
and their earlier values learned while planning) is scrubbed in every encoding
it can take, in requests and responses, URIs, headers and bodies: the last line
of defence behind the Sensitive type.

vcrpy is the optional extra `agentform[cassettes]`: nothing else needs it, so it
is imported only here, and its absence is said before the run makes any call.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentform.api.endpoint_url import shown_endpoint
from agentform.core.errors import AgentformError
from agentform.core.secrets import Secrets
from agentform.core.sensitive import Sensitive, reveal

REDACTED = "REDACTED"
CREDENTIAL_HEADERS = ("x-api-key", "x-service-agents-api-key", "authorization", "cookie")
CASSETTE_FORMAT_VERSION = 1
MISSING_VCRPY = (
    "--record-cassette needs vcrpy, which is not installed: pip install 'agentform[cassettes]'"
)

if TYPE_CHECKING:
    import vcr


def require_vcrpy() -> None:
    """Raises AgentformError naming the extra to install when vcrpy is missing."""
    try:
        import vcr  # noqa: F401
    except ImportError:
        raise AgentformError(MISSING_VCRPY) from None


def scrubbed(value: Any, secrets: Secrets) -> Any:
    """`value` (a cassette's data) with every known value replaced by REDACTED."""
    if isinstance(value, str):
        return secrets.scrub(value, REDACTED)
    if isinstance(value, bytes):
        return secrets.scrub_bytes(value, REDACTED.encode())
    if isinstance(value, dict):
        return {scrubbed(k, secrets): scrubbed(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrubbed(v, secrets) for v in value]
    return value


def _persister(secrets: Secrets) -> type:
    from vcr.persisters.filesystem import FilesystemPersister
    from vcr.serializers import compat

    class ScrubbingPersister(FilesystemPersister):  # type: ignore[misc]  # vcrpy has no types
        @staticmethod
        def save_cassette(cassette_path: Any, cassette_dict: Any, serializer: Any) -> None:
            interactions = [
                {
                    "request": compat.convert_to_unicode(scrubbed(request._to_dict(), secrets)),
                    "response": compat.convert_to_unicode(scrubbed(response, secrets)),
                }
                for request, response in zip(
                    cassette_dict["requests"], cassette_dict["responses"], strict=True
                )
            ]
            data = {"interactions": interactions, "version": CASSETTE_FORMAT_VERSION}
            path = Path(cassette_path)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(secrets.scrub(serializer.serialize(data), REDACTED))

    return ScrubbingPersister


def cassette_vcr(
    secrets: Secrets, api_key: str | Sensitive | None = None, record_mode: str = "all"
) -> vcr.VCR:
    """A vcr that scrubs as it records and again as it saves. Requests are also
    scrubbed before they are matched, so a replay finds the recorded (scrubbed)
    request of a run whose secrets are `secrets`."""
    require_vcrpy()
    import vcr

    secrets.add_other(reveal(api_key))

    def before_request(request: Any) -> Any:
        request.uri = scrubbed(shown_endpoint(request.uri), secrets)
        if request.body:
            request.body = scrubbed(request.body, secrets)
        return request

    recorder = vcr.VCR(
        record_mode=record_mode,
        filter_headers=[(h, REDACTED) for h in CREDENTIAL_HEADERS],
        before_record_request=before_request,
        decode_compressed_response=True,
        match_on=["method", "scheme", "host", "port", "path", "query"],
    )
    recorder.register_persister(_persister(secrets))
    return recorder


@contextmanager
def recording(
    path: Path, secrets: Secrets, api_key: str | Sensitive | None = None
) -> Iterator[None]:
    require_vcrpy()
    from agentform.cli.files import refuse_overwriting

    refuse_overwriting(path, "the cassette")
    try:  # before any call: a path that cannot be written stops the run here
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
        path.unlink()  # a recording is of this run only
    except OSError as exc:
        raise AgentformError(f"cannot write the cassette to {path}: {exc.strerror}") from None
    with cassette_vcr(secrets, api_key).use_cassette(str(path)):
        yield
