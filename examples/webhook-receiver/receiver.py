"""A webhook receiver for the Agent Service, small enough to copy.

It does the four things every receiver must (docs/service/contract.md#signatures,
#webhook-delivery):

1. Verify the signature against the raw body bytes, before parsing them:
   `X-Service-Signature` is Base64(RSA PKCS#1 v1.5 over SHA-256 of the body),
   checked with your organization's public key (GET /webhook-signing-key).
   A missing or wrong signature is answered 401.
2. Answer 2xx at once; the work happens after the answer, in a worker thread,
   so a slow handler never makes the service time out (10 s) and retry.
3. Deduplicate: delivery is at-least-once and `event_id` changes on every
   attempt, so duplicates are recognised by stable fields:
   `info.execution_id` + `info.event` (plus the event's `timestamp` and its
   payload, since one execution emits a step, an action or a message event
   many times).
4. Then handle the notification (`handle` below: replace it with your code).

Only the standard library and `cryptography` are needed:

    pip install cryptography
    python receiver.py --public-key signing-key.pem --port 8788

The set of seen notifications lives in memory; several processes, or a
receiver that must survive restarts, keep it in their database instead (a
unique index on the same key).
"""

from __future__ import annotations

import argparse
import base64
import binascii
import contextlib
import hashlib
import json
import queue
import threading
from collections import OrderedDict
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

MAX_BODY = 1024 * 1024


def load_public_key(pem: bytes) -> rsa.RSAPublicKey:
    key = serialization.load_pem_public_key(pem)
    if not isinstance(key, rsa.RSAPublicKey):
        raise ValueError("the webhook signing key must be an RSA public key")
    return key


def signature_ok(key: rsa.RSAPublicKey, body: bytes, signature: str | None) -> bool:
    """Step 1: the exact bytes received, never a re-serialised JSON."""
    if not signature:
        return False
    try:
        raw = base64.b64decode(signature, validate=True)
        key.verify(raw, body, padding.PKCS1v15(), hashes.SHA256())
    except (InvalidSignature, binascii.Error, ValueError):
        return False
    return True


def dedupe_key(notification: Any) -> str | None:
    """Step 3: stable across redeliveries (event_id is not); None when there is no
    envelope (an attachment with unwrapResult sends EXECUTION_COMPLETED's result alone)."""
    info = notification.get("info") if isinstance(notification, dict) else None
    if not isinstance(info, dict):
        return None
    subject = info.get("execution_id") or info.get("batch_id")
    stable = [subject, info.get("event"), notification.get("timestamp"), info.get("payload")]
    return hashlib.sha256(json.dumps(stable, sort_keys=True).encode()).hexdigest()


class SeenSet:
    """The keys of recent notifications, bounded (oldest forgotten first)."""

    def __init__(self, size: int = 100_000) -> None:
        self.keys: OrderedDict[str, None] = OrderedDict()
        self.size = size

    def first_time(self, key: str) -> bool:
        if key in self.keys:
            return False
        self.keys[key] = None
        if len(self.keys) > self.size:
            self.keys.popitem(last=False)
        return True


def handle(notification: Any) -> None:
    """Step 4: your code. Here: one line per notification."""
    info = notification.get("info", {}) if isinstance(notification, dict) else {}
    if info:
        subject = info.get("execution_id") or info.get("batch_id")
        print(f"{info.get('event')} {subject} {json.dumps(info.get('payload'))}", flush=True)
    else:
        print(f"result {json.dumps(notification)}", flush=True)


class Receiver:
    """The server, its work queue and the one worker that handles notifications in order."""

    def __init__(
        self,
        public_key_pem: bytes,
        host: str = "127.0.0.1",
        port: int = 8788,
        handler: Callable[[Any], None] = handle,
    ) -> None:
        self.key = load_public_key(public_key_pem)
        self.handler = handler
        self.work: queue.Queue[bytes | None] = queue.Queue()
        self.seen = SeenSet()
        self.server = ThreadingHTTPServer((host, port), self._request_handler())
        self.port = self.server.server_address[1]
        self.worker = threading.Thread(target=self._work, daemon=True)

    def _request_handler(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length > MAX_BODY:
                    return self._answer(413, "body too large")
                body = self.rfile.read(length)
                if not signature_ok(receiver.key, body, self.headers.get("X-Service-Signature")):
                    return self._answer(401, "missing or invalid signature")
                receiver.work.put(body)  # step 2: queued for the worker, not done here,
                self._answer(204)  # so the answer goes out at once

            def _answer(self, status: int, message: str | None = None) -> None:
                error = {"code": status, "message": message}
                content = json.dumps(error).encode() if message else b""
                self.send_response(status)
                if content:
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                self.wfile.write(content)

            def log_message(self, *args: Any) -> None:
                pass  # one line per notification comes from handle()

        return Handler

    def _work(self) -> None:
        while (body := self.work.get()) is not None:
            try:
                notification = json.loads(body)
                key = dedupe_key(notification)
                if key is None or self.seen.first_time(key):
                    self.handler(notification)
            except Exception as exc:  # one bad notification must not stop the worker
                print(f"could not handle a notification: {exc!r}", flush=True)
            finally:
                self.work.task_done()

    def start(self) -> None:
        self.worker.start()
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.work.put(None)
        self.worker.join()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--public-key", required=True, help="PEM file of the signing key")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8788)
    args = parser.parse_args()
    with open(args.public_key, "rb") as f:
        receiver = Receiver(f.read(), args.host, args.port)
    print(f"receiving on http://{args.host}:{receiver.port}/", flush=True)
    receiver.worker.start()
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C stops it
        receiver.server.serve_forever()


if __name__ == "__main__":
    main()
