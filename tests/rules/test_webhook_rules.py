"""The shared webhook rules (agentform.rules.webhook_events, webhook_integrations and
webhook_attachments): one test per rule."""

from __future__ import annotations

import hashlib

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError

from agentform.rules.webhook_attachments import AttachmentSettings, FieldFilter
from agentform.rules.webhook_events import (
    ATTACHABLE_EVENTS,
    EVENT_NAMES,
    EVENT_PAYLOAD_FIELDS,
    EXECUTION_EVENTS,
    event_rule_problem,
)
from agentform.rules.webhook_integrations import (
    HeaderMap,
    IntegrationName,
    IntegrationUrl,
    PayloadVersion,
    header_digest,
    header_problems,
)


class Integration(BaseModel):
    """How the service composes the shared types into a request body."""

    model_config = ConfigDict(hide_input_in_errors=True)
    name: IntegrationName
    url: IntegrationUrl
    payloadVersion: PayloadVersion = "v2"
    headers: HeaderMap = {}


def error_of(**body: object) -> str:
    with pytest.raises(ValidationError) as info:
        Integration.model_validate({"name": "n", "url": "https://h.example/x", **body})
    return str(info.value)


# -- events --------------------------------------------------------------------


def test_event_names_are_the_22_of_the_seed() -> None:
    assert len(EVENT_NAMES) == 22 == len(set(EVENT_NAMES))
    assert len(EXECUTION_EVENTS) == 19
    assert set(EVENT_PAYLOAD_FIELDS) == set(EVENT_NAMES)


def test_every_event_but_the_test_event_may_be_attached() -> None:
    assert set(ATTACHABLE_EVENTS) == set(EVENT_NAMES) - {"EXECUTION_TEST"}


def test_a_misspelt_event_gets_a_suggestion() -> None:
    problem = event_rule_problem("EXECUTION_COMPLETE")
    assert problem == "unknown event 'EXECUTION_COMPLETE' (did you mean 'EXECUTION_COMPLETED'?)"
    assert event_rule_problem("execution_failed") is not None  # names are exact


def test_the_test_event_cannot_be_attached() -> None:
    with pytest.raises(ValidationError, match="only by the integration's test"):
        AttachmentSettings(eventRules=("EXECUTION_TEST",))


# -- integrations ----------------------------------------------------------------


@pytest.mark.parametrize("name", ["", "x" * 201])
def test_integration_name_is_1_to_200_characters(name: str) -> None:
    assert "name" in error_of(name=name)
    Integration(name="x" * 200, url="http://h.example")


@pytest.mark.parametrize(
    ("url", "detail"),
    [
        ("ftp://h.example/x", "absolute http or https"),
        ("/relative/path", "absolute http or https"),
        ("https://", "with a host"),
        ("https://h.example/a b", "spaces"),
        ("https://user:pw@h.example/", "credentials"),
        ("https://h.example:99999/", "not a valid URL"),
        ("https://h.example/" + "a" * 2048, "at most 2048"),
    ],
)
def test_url_must_be_an_absolute_http_url(url: str, detail: str) -> None:
    assert detail in error_of(url=url)


@pytest.mark.parametrize(
    "url",
    [
        "http://①②⑦.0.0.①:8080/",  # NFKC reads 127.0.0.1; IDNA refuses it
        "http://127.0.0.1:\uff18\uff10\uff18\uff10/",  # full-width digits
        "http://\uff45xample.com/",
        "http://xn--zz.example/",  # an A-label that decodes to nothing
        "http://exa mple.com/",
    ],
)
def test_a_url_the_sender_would_read_otherwise_is_refused(url: str) -> None:
    """Before: 201, then every delivery stayed pending with 0 attempts."""
    detail = error_of(url=url)
    assert detail.startswith("1 validation error") and "url\n" in detail, detail


def test_an_idna_valid_host_and_ascii_port_are_accepted() -> None:
    for url in (
        "http://bücher.example:8080/x",
        "https://xn--bcher-kva.example/",
        "http://[::1]:8080/x",
        "http://[fd00::1]/",
        "http://h.example:/",
    ):
        assert Integration(name="n", url=url).url == url


def test_http_and_https_urls_are_kept_as_written() -> None:
    for url in ("http://127.0.0.1:8787", "HTTPS://hooks.example.com/a?b=c"):
        assert Integration(name="n", url=url).url == url


@pytest.mark.parametrize("version", ["v1", "V2", "2", ""])
def test_only_payload_version_v2(version: str) -> None:
    assert "only the V2 payload format is accepted" in error_of(payloadVersion=version)


def test_payload_version_defaults_to_v2() -> None:
    assert Integration(name="n", url="http://h.example").payloadVersion == "v2"


def test_at_most_20_custom_headers() -> None:
    Integration(name="n", url="http://h.example", headers={f"X-{i}": "v" for i in range(20)})
    assert "at most 20 headers, got 21" in error_of(headers={f"X-{i}": "v" for i in range(21)})


@pytest.mark.parametrize("name", ["X Token", "X:Token", "", "Bé", "X-Token\n"])
def test_header_names_are_http_tokens(name: str) -> None:
    assert "not a valid header name" in error_of(headers={name: "v"})


@pytest.mark.parametrize("name", ["Content-Type", "content-length", "HOST", "X-Service-Signature"])
def test_headers_the_service_sets_are_refused(name: str) -> None:
    assert "set by the service" in error_of(headers={name: "v"})


@pytest.mark.parametrize(
    "name",
    [
        "Transfer-Encoding",
        "connection",
        "Keep-Alive",
        "TE",
        "Trailer",
        "Upgrade",
        "Expect",
        "Proxy-Authorization",
        "proxy-connection",
    ],
)
def test_headers_that_change_how_a_request_is_framed_or_forwarded_are_refused(
    name: str,
) -> None:
    """`Transfer-Encoding: chunked` beside the service's Content-Length is the
    request-smuggling shape; `Connection: X-Service-Signature` lets a proxy drop the
    signature."""
    assert (
        f"headers.{name}: '{name}' is a hop-by-hop or framing header and cannot be a custom header"
    ) in error_of(headers={name: "v"})


def test_header_values_are_bounded_and_never_shown() -> None:
    Integration(name="n", url="http://h.example", headers={"X-Big": "v" * 8192})
    message = error_of(headers={"X-Big": "w" * 8193})
    assert "at most 8192 characters" in message and "w" * 20 not in message


def test_header_names_repeated_in_another_case_are_refused() -> None:
    assert "names ignore case" in error_of(headers={"X-Token": "a", "x-token": "b"})


@pytest.mark.parametrize("value", ["a\r\nInjected: 1", " padded", "tökén", "tab\x00"])
def test_header_values_must_be_sendable_and_are_never_shown(value: str) -> None:
    message = error_of(headers={"Authorization": value})
    assert "printable ASCII" in message
    assert value.strip() not in message


def test_header_problems_skips_values_it_cannot_see() -> None:
    assert header_problems({"Authorization": None}) == []
    assert header_problems({"Host": None}) == [
        ("headers.Host", "'Host' is set by the service and cannot be a custom header")
    ]


def test_header_digest_is_sha256_of_id_name_value() -> None:
    expected = hashlib.sha256(b"abc:Authorization:Bearer t").hexdigest()
    assert header_digest("abc", "Authorization", "Bearer t") == f"sha256:{expected}"
    assert header_digest("abd", "Authorization", "Bearer t") != f"sha256:{expected}"


# -- attachment settings -----------------------------------------------------------


def test_event_rules_are_required_and_non_empty() -> None:
    with pytest.raises(ValidationError, match="eventRules"):
        AttachmentSettings.model_validate({})
    with pytest.raises(ValidationError, match="at least 1"):
        AttachmentSettings(eventRules=())


def test_star_stands_alone() -> None:
    AttachmentSettings(eventRules=("*",))
    with pytest.raises(ValidationError, match="stands alone"):
        AttachmentSettings(eventRules=("*", "EXECUTION_FAILED"))


def test_event_rules_are_a_set() -> None:
    with pytest.raises(ValidationError, match="listed twice"):
        AttachmentSettings(eventRules=("EXECUTION_FAILED", "EXECUTION_FAILED"))


def test_settings_defaults() -> None:
    settings = AttachmentSettings.model_validate({"eventRules": ["EXECUTION_FAILED"]})
    assert settings.model_dump() == {
        "eventRules": ("EXECUTION_FAILED",),
        "fieldFilters": (),
        "metadataFilter": {},
        "unwrapResult": False,
    }


def test_unknown_settings_are_refused() -> None:
    with pytest.raises(ValidationError, match="extra"):
        AttachmentSettings.model_validate({"eventRules": ["*"], "eventRule": ["*"]})


def test_metadata_filter_is_string_to_string() -> None:
    with pytest.raises(ValidationError, match="metadataFilter"):
        AttachmentSettings.model_validate({"eventRules": ["*"], "metadataFilter": {"team": 1}})


def test_unwrap_result_is_a_boolean() -> None:
    with pytest.raises(ValidationError, match="unwrapResult"):
        AttachmentSettings.model_validate({"eventRules": ["*"], "unwrapResult": "yes"})


@pytest.mark.parametrize(
    ("flt", "detail"),
    [
        ({"event": "EXECUTION_FAILED", "path": "reason", "op": "like", "value": 1}, "op"),
        ({"event": "EXECUTION_FAILED", "path": "reason", "op": "eq"}, "needs a value"),
        ({"event": "EXECUTION_FAILED", "path": "reason", "op": "ne", "value": None}, "not null"),
        ({"event": "EXECUTION_FAILED", "path": "reason", "op": "exists", "value": 1}, "no value"),
        (
            {"event": "EXECUTION_FAILED", "path": "reason", "op": "in", "value": "x"},
            "non-empty list",
        ),
        (
            {"event": "EXECUTION_FAILED", "path": "reason", "op": "in", "value": []},
            "non-empty list",
        ),
        ({"event": "EXECUTION_FAILED", "path": "a..b", "op": "exists"}, "path"),
        ({"event": "EXECUTION_FAILED", "path": "", "op": "exists"}, "path"),
        ({"event": "*", "path": "reason", "op": "exists"}, "one event"),
        ({"event": "EXECUTION_FAIL", "path": "reason", "op": "exists"}, "did you mean"),
    ],
)
def test_field_filter_rules(flt: dict[str, object], detail: str) -> None:
    with pytest.raises(ValidationError, match=detail):
        AttachmentSettings.model_validate({"eventRules": ["*"], "fieldFilters": [flt]})


def test_a_field_filter_must_name_an_event_the_rules_include() -> None:
    flt = {"event": "EXECUTION_FAILED", "path": "reason", "op": "exists"}
    with pytest.raises(ValidationError, match="eventRules does not include"):
        AttachmentSettings.model_validate(
            {"eventRules": ["EXECUTION_COMPLETED"], "fieldFilters": [flt]}
        )


def test_exists_filter_serialises_without_value() -> None:
    flt = FieldFilter.model_validate({"event": "EXECUTION_FAILED", "path": "x", "op": "exists"})
    assert flt.model_dump() == {"event": "EXECUTION_FAILED", "path": "x", "op": "exists"}


def test_filters_compare_as_sets_through_their_canonical_text() -> None:
    a = FieldFilter.model_validate(
        {"op": "eq", "path": "x", "event": "EXECUTION_FAILED", "value": {"b": 1, "a": 2}}
    )
    b = FieldFilter.model_validate(
        {"event": "EXECUTION_FAILED", "path": "x", "op": "eq", "value": {"a": 2, "b": 1}}
    )
    assert a.canonical() == b.canonical()


# -- what the settings mean -----------------------------------------------------------


def settings(**kw: object) -> AttachmentSettings:
    return AttachmentSettings.model_validate({"eventRules": ["*"], **kw})


def test_wants_only_ruled_events() -> None:
    s = settings(eventRules=["EXECUTION_FAILED"])
    assert s.wants("EXECUTION_FAILED", {}, None)
    assert not s.wants("EXECUTION_COMPLETED", {}, None)


def test_star_wants_every_attachable_event_but_not_the_test() -> None:
    s = settings()
    assert all(s.wants(e, {}, None) for e in ATTACHABLE_EVENTS)
    assert not s.wants("EXECUTION_TEST", {}, None)


def test_metadata_filter_needs_every_pair_exactly() -> None:
    s = settings(metadataFilter={"team": "payments", "env": "prod"})
    assert s.wants("EXECUTION_STARTED", {}, {"team": "payments", "env": "prod", "x": "y"})
    assert not s.wants("EXECUTION_STARTED", {}, {"team": "payments"})
    assert not s.wants("EXECUTION_STARTED", {}, {"team": "Payments", "env": "prod"})
    assert not s.wants("BATCH_STARTED", {}, None)


def flt(op: str, path: str = "outcome", **value: object) -> dict[str, object]:
    return {"event": "EXECUTION_COMPLETED", "path": path, "op": op, **value}


@pytest.mark.parametrize(
    ("flt_", "payload", "sent"),
    [
        (flt("eq", value="success"), {"outcome": "success"}, True),
        (flt("eq", value="success"), {"outcome": "failure"}, False),
        (flt("eq", value="success"), {}, False),
        (flt("eq", value=1), {"outcome": True}, False),
        (flt("eq", value=1), {"outcome": 1.0}, True),
        (flt("ne", value="success"), {"outcome": "failure"}, True),
        (flt("ne", value="success"), {"outcome": "success"}, False),
        (flt("ne", value="success"), {}, True),
        (flt("in", value=["a", "b"]), {"outcome": "b"}, True),
        (flt("in", value=["a", "b"]), {"outcome": "c"}, False),
        (flt("exists"), {"outcome": None}, True),
        (flt("exists"), {}, False),
        (flt("eq", "result.order.id", value="A-1"), {"result": {"order": {"id": "A-1"}}}, True),
        (flt("eq", "result.items.1", value="y"), {"result": {"items": ["x", "y"]}}, True),
        (flt("exists", "result.items.2"), {"result": {"items": ["x", "y"]}}, False),
    ],
)
def test_field_filter_semantics(flt_: dict[str, object], payload: object, sent: bool) -> None:
    s = settings(fieldFilters=[flt_])
    assert s.wants("EXECUTION_COMPLETED", payload, None) is sent


def test_field_filters_apply_only_to_their_event_and_all_must_match() -> None:
    s = settings(fieldFilters=[flt("eq", value="success"), flt("exists", "reasoning")])
    assert s.wants("EXECUTION_FAILED", {"reason": "x"}, None)
    assert s.wants("EXECUTION_COMPLETED", {"outcome": "success", "reasoning": ""}, None)
    assert not s.wants("EXECUTION_COMPLETED", {"outcome": "success"}, None)


def test_unwrap_only_for_completed() -> None:
    s = settings(unwrapResult=True)
    assert s.unwraps("EXECUTION_COMPLETED")
    assert not s.unwraps("EXECUTION_FAILED")
    assert not settings().unwraps("EXECUTION_COMPLETED")
