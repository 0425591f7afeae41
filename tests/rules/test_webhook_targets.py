"""Where a webhook may point (rules/webhook_targets.py): link-local and cloud-metadata
addresses are refused in every numeric form a resolver reads; loopback and ordinary
hosts are not."""

from __future__ import annotations

import pytest

from agentform.rules.webhook_targets import resolved_problem, target_problem

REFUSED = [
    "http://169.254.169.254/latest/meta-data/",
    "http://169.254.0.1:8080/",
    "http://0xa9fea9fe/",  # 169.254.169.254 as one hex number
    "http://2852039166/",  # ... as one decimal number
    "http://0251.0376.0251.0376/",  # ... in octal parts
    "http://169.254.43518/",  # ... with the last two parts as one
    "http://[fd00:ec2::254]/",
    "http://[::ffff:169.254.169.254]/",
    "http://[fe80::1]/",
    "https://metadata.google.internal/computeMetadata/v1/",
    "http://169.254.169.254./",
    # IPv6 embeddings of 169.254.169.254 (before: accepted)
    "http://[::169.254.169.254]/",  # IPv4-compatible
    "http://[::a9fe:a9fe]/",
    "http://[::ffff:0:a9fe:a9fe]/",  # SIIT (IPv4-translated)
    "http://[64:ff9b::a9fe:a9fe]/",  # NAT64, the well-known prefix
    "http://[64:ff9b:1::a9fe:a9fe]/",  # NAT64, local-use prefix /96
    "http://[64:ff9b:1:a9fe:a9:fe00::]/",  # ... a /48 of it (RFC 6052: bits 64-71 skipped)
    "http://[64:ff9b:1:a9:fe:a9fe::]/",  # ... a /56 of it
    "http://[2002:a9fe:a9fe::]/",  # 6to4
    "http://[2001:0:4136:e378:8000:63bf:5601:5601]/",  # Teredo, the client obfuscated
    "http://[2001:0:a9fe:a9fe::1]/",  # Teredo, the server
    "http://[::ffff:a9fe:1]/",
]

ALLOWED = [
    "http://127.0.0.1:8787/hook",
    "http://0x7f000001/hook",  # loopback in hex: still loopback
    "http://2130706433/hook",
    "http://localhost:9000/",
    "http://[::1]:9000/",
    "https://hooks.example.com/agent-events",
    "http://10.0.0.5/hook",
    "http://1234.example.com/",
    "http://deadbeef.com/",
    "http://[::ffff:127.0.0.1]/",  # loopback, however embedded
    "http://[64:ff9b::7f00:1]/",
    "http://[2002:c000:0201::1]/",  # 6to4 of 192.0.2.1, an ordinary address
    "http://[2606:4700::1111]/",
]


@pytest.mark.parametrize("url", REFUSED)
def test_link_local_and_metadata_targets_are_refused(url: str) -> None:
    problem = target_problem(url, allow_private=False)
    assert problem is not None and "--allow-private-webhooks" in problem


@pytest.mark.parametrize("url", REFUSED)
def test_a_service_that_allows_them_accepts_them(url: str) -> None:
    assert target_problem(url, allow_private=True) is None


@pytest.mark.parametrize("url", ALLOWED)
def test_loopback_and_ordinary_hosts_are_allowed(url: str) -> None:
    assert target_problem(url, allow_private=False) is None


def test_a_name_that_resolves_to_a_metadata_address_is_refused_when_sent() -> None:
    assert resolved_problem(["93.184.216.34", "169.254.169.254"]) is not None
    assert resolved_problem(["127.0.0.1", "::1"]) is None
    assert resolved_problem(["64:ff9b::a9fe:a9fe"]) is not None
