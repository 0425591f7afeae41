"""Benchmark: the service's memory while it stages one large upload.

One `POST /temp-files` of 20 files of 24 MiB each (the most a request may carry)
took `agentform service run` from 98 to 628 MB: each part was read into memory,
then copied into SQLite. Now parts are spooled to disk as they arrive and copied
into the store in 1 MiB chunks. This starts the service, sends the upload
streamed from a generator (so the client holds one chunk at a time), and prints
the service's resident memory before and its peak after (VmHWM), side by side
with the bytes sent.

    .venv/bin/python bench/uploads.py [FILES] [MiB]
"""

from __future__ import annotations

import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
from bench._server import KEY, running_service


def _memory(pid: int, field: str) -> int:
    """A field of /proc/PID/status in bytes (VmRSS: now; VmHWM: the peak so far)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise LookupError(field)


def _body(boundary: str, files: int, size: int) -> Iterator[bytes]:
    chunk = b"x" * (1024 * 1024)
    for index in range(files):
        yield (
            f'--{boundary}\r\nContent-Disposition: form-data; name="files"; '
            f'filename="f{index}.bin"\r\nContent-Type: application/octet-stream\r\n\r\n'
        ).encode()
        for _ in range(size // len(chunk)):
            yield chunk
        yield b"\r\n"
    yield f"--{boundary}--\r\n".encode()


def main(files: int = 20, mib: int = 24) -> None:
    with tempfile.TemporaryDirectory() as tmp, running_service(Path(tmp) / "svc.db") as svc:
        before = _memory(svc.pid, "VmRSS")
        boundary = uuid.uuid4().hex
        started = time.perf_counter()
        answer = httpx.post(
            f"{svc.base}/temp-files",
            content=_body(boundary, files, mib * 1024 * 1024),
            headers={"X-Api-Key": KEY, "Content-Type": f"multipart/form-data; boundary={boundary}"},
            timeout=300,
        )
        took = time.perf_counter() - started
        peak = _memory(svc.pid, "VmHWM")
    sent = files * mib * 1024 * 1024
    print(f"POST /temp-files of {files} x {mib} MiB: {answer.status_code} in {took:.1f} s")
    print(f"service memory before: {before / 2**20:7.1f} MiB")
    print(f"service peak after:    {peak / 2**20:7.1f} MiB  (+{(peak - before) / 2**20:.1f} MiB)")
    print(f"growth / bytes sent:   {(peak - before) / sent:7.3f}")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
