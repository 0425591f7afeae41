"""The TLS context a process verifies servers with, made once and shared.

Loading the CA certificates into a context costs about 20 ms of CPU. A command
makes one client, so it paid that once; but a process making many clients paid
it for each: the service's webhook sender (two per runtime start), and a test
process running hundreds of commands in-process (a third of a canary case's set-up,
docs/performance.md#the-test-suite). An `ssl.SSLContext` is safe to share between
clients, threads and event loops; it is read-only once made.

The context is made on first use, so `SSL_CERT_FILE` and `SSL_CERT_DIR` (read when
`trust_env`) are those of the process when its first client was made.
"""

from __future__ import annotations

import functools
import ssl


@functools.cache
def tls_context(trust_env: bool = True) -> ssl.SSLContext:
    """httpx's default verifying context (its CA bundle; the environment's when
    `trust_env`), one per process and setting."""
    import httpx  # here: commands that make no client never import it

    return httpx.create_ssl_context(trust_env=trust_env)
