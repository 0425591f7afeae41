"""The listener's socket accepts connections as soon as the banner can be printed.

`webhook listen` prints "Listening on …" after `bind()`; a delivery sent right
then must queue in the backlog, not be refused while the server starts.
"""

from __future__ import annotations

import socket

from agentform.cli.webhook.listen import bind


def test_a_bound_listener_accepts_connections_before_serving() -> None:
    sock = bind("127.0.0.1", 0)
    try:
        with socket.create_connection(sock.getsockname(), timeout=2):
            pass
    finally:
        sock.close()
