"""--record-cassette: the run's HTTP exchanges as a vcrpy cassette, credentials scrubbed."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import vcr

from ..config.render import Secrets

REDACTED = "REDACTED"
CREDENTIAL_HEADERS = ("x-api-key", "x-service-agents-api-key", "authorization", "cookie")


def _scrubber(secrets: Secrets, api_key: str | None) -> Any:
    values = [v for v in [*secrets.values.values(), api_key or ""] if v]

    def scrub(text: str) -> str:
        for val in sorted(values, key=len, reverse=True):
            text = text.replace(val, REDACTED)
        return text

    return scrub


def cassette_vcr(secrets: Secrets, api_key: str | None, record_mode: str = "all") -> vcr.VCR:
    scrub = _scrubber(secrets, api_key)

    def before_request(request: Any) -> Any:
        if request.body:
            body = request.body.decode() if isinstance(request.body, bytes) else request.body
            request.body = scrub(body).encode()
        request.uri = scrub(request.uri)
        return request

    def before_response(response: dict[str, Any]) -> dict[str, Any]:
        body = response.get("body", {}).get("string")
        if body:
            text = body.decode() if isinstance(body, bytes) else body
            response["body"]["string"] = scrub(text).encode()
        return response

    return vcr.VCR(
        record_mode=record_mode,
        filter_headers=[(h, REDACTED) for h in CREDENTIAL_HEADERS],
        before_record_request=before_request,
        before_record_response=before_response,
        decode_compressed_response=True,
        match_on=["method", "scheme", "host", "port", "path", "query"],
    )


@contextmanager
def recording(path: Path, secrets: Secrets, api_key: str | None) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        path.unlink()  # a recording is of this run only
    with cassette_vcr(secrets, api_key).use_cassette(str(path)):
        yield
