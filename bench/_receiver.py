"""A webhook receiver for benchmarks, run as its own process: answers 204 at once and
records, per notification, when it arrived and the event's own timestamp.

    python bench/_receiver.py PORT

POST /hook records; GET /records answers them all, GET /count how many (cheap to
poll, so polling costs the receiver next to nothing); POST /reset forgets them.
"""

from __future__ import annotations

import json
import sys
import time
from datetime import datetime
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

RECORDS: list[tuple[float, float, str, str]] = []  # received, event time, event, execution


async def hook(request: Request) -> Response:
    body = await request.body()
    received = time.time()
    data: Any = json.loads(body)
    info = data["info"]
    at = datetime.fromisoformat(data["timestamp"]).timestamp()
    RECORDS.append((received, at, info["event"], info.get("execution_id", "")))
    return Response(status_code=204)


async def records(_: Request) -> Response:
    return JSONResponse(RECORDS)


async def count(_: Request) -> Response:
    return JSONResponse(len(RECORDS))


async def reset(_: Request) -> Response:
    RECORDS.clear()
    return Response(status_code=204)


app = Starlette(
    routes=[
        Route("/hook", hook, methods=["POST"]),
        Route("/records", records, methods=["GET"]),
        Route("/count", count, methods=["GET"]),
        Route("/reset", reset, methods=["POST"]),
    ]
)

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
