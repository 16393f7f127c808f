"""Reading what a caller sent: bounded bodies, the status JSON, the long-poll parameters.

Every problem becomes a `BadRequestError` with a short message (a 400), never a 500.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

import anyio
from pydantic import ValidationError
from starlette.requests import ClientDisconnect, Request

from brupop.domain.shadow import ShadowStatus

MAX_BODY_BYTES = 64 * 1024
BODY_SECONDS = 10.0  # from the handler's first read: a body trickled in holds no connection
_RESOURCE_VERSION = re.compile(r"[A-Za-z0-9._-]{1,64}")


class BadRequestError(ValueError):
    """The request cannot be understood; the message says why in a few words."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


async def read_body(
    request: Request, limit: int = MAX_BODY_BYTES, seconds: float | None = None
) -> bytes:
    """The body, refused with 413 past `limit` bytes, with 400 when it is cut short and with 408
    when it has not all come within `seconds` (BODY_SECONDS by default)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise BadRequestError("request body too large", status=413)
    chunks: list[bytes] = []
    with anyio.move_on_after(BODY_SECONDS if seconds is None else seconds) as deadline:
        await _read_chunks(request, limit, chunks)
    if deadline.cancelled_caught:
        raise BadRequestError("the request body was not received in time", status=408)
    return b"".join(chunks)


async def _read_chunks(request: Request, limit: int, chunks: list[bytes]) -> None:
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise BadRequestError("request body too large", status=413)
            chunks.append(chunk)
    except ClientDisconnect:
        # The client hung up before its body was complete: a bad request, not our failure.
        raise BadRequestError("the request body was cut short") from None


def parse_json(body: bytes) -> Any:
    """The JSON document in `body`."""
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        raise BadRequestError("the body is not valid JSON") from None


def parse_status(body: bytes) -> ShadowStatus:
    """A BottlerocketShadowStatus from JSON."""
    document = parse_json(body)
    if not isinstance(document, dict):
        raise BadRequestError("the body must be a JSON object (a BottlerocketShadowStatus)")
    try:
        return ShadowStatus.model_validate(document)
    except ValidationError as error:
        raise BadRequestError(f"invalid status: {_first_problem(error)}") from None
    except (ValueError, TypeError, RecursionError):
        raise BadRequestError("invalid status") from None


def wait_parameters(request: Request, longest: float) -> tuple[str | None, float]:
    """`resourceVersion` (optional) and `timeoutSeconds` (0 to `longest`, default 0)."""
    return wait_query(request.query_params, longest)


def wait_query(query: Mapping[str, str], longest: float) -> tuple[str | None, float]:
    """`wait_parameters` from the query's parameters (the last of each name)."""
    version = query.get("resourceVersion") or None
    if version is not None and _RESOURCE_VERSION.fullmatch(version) is None:
        raise BadRequestError("malformed resourceVersion")
    text = query.get("timeoutSeconds") or "0"
    try:
        timeout = float(text) if len(text) <= 20 else math.nan
    except ValueError:
        timeout = math.nan
    if not (0 <= timeout < math.inf):
        raise BadRequestError("timeoutSeconds must be a number of seconds >= 0")
    return version, min(timeout, longest)


def _first_problem(error: ValidationError) -> str:
    problem = error.errors(include_url=False, include_input=False)[0]
    where = ".".join(str(part) for part in problem.get("loc", ())) or "body"
    return f"{where}: {problem.get('msg', 'invalid')}"[:200]
