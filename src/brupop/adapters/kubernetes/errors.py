"""Kubernetes answers become the ports' typed errors, so no client exception reaches a service.

The kube-apiserver explains every failure with a `v1 Status` body (code, reason, message);
the reason tells an AlreadyExists 409 from a Conflict 409.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import urllib3.exceptions
from kubernetes.client.exceptions import ApiException

from brupop.ports.errors import (
    AlreadyExistsError,
    ConflictError,
    ForbiddenError,
    InvalidObjectError,
    NotFoundError,
    PortError,
    TooManyRequestsError,
    UnauthorizedError,
    UnavailableError,
    WatchExpiredError,
)

_BY_CODE: dict[int, type[PortError]] = {
    400: InvalidObjectError,
    401: UnauthorizedError,
    403: ForbiddenError,
    404: NotFoundError,
    409: ConflictError,
    410: WatchExpiredError,
    415: InvalidObjectError,
    422: InvalidObjectError,
    429: TooManyRequestsError,
}


def error_for_status(code: int, reason: str, message: str, action: str) -> PortError:
    """The port error for an HTTP status and the Status object's reason and message."""
    text = f"{action}: {code} {reason}: {message}".rstrip(": ")
    if code == 409 and reason == "AlreadyExists":
        return AlreadyExistsError(text)
    return _BY_CODE.get(code, UnavailableError)(text)


def from_api_exception(error: ApiException, action: str) -> PortError:
    """Translate the client's ApiException, reading the Status body when there is one."""
    status = _status_of(error.body)
    code = int(status.get("code") or error.status or 0)
    reason = str(status.get("reason") or error.reason or "")
    message = str(status.get("message") or "")
    return error_for_status(code, reason, message, action)


@contextmanager
def translated(action: str) -> Iterator[None]:
    """Run a client call; re-raise its failures as port errors naming `action`."""
    try:
        yield
    except ApiException as error:
        raise from_api_exception(error, action) from error
    except (urllib3.exceptions.HTTPError, OSError) as error:
        raise UnavailableError(f"{action}: the Kubernetes API did not answer: {error}") from error


def _status_of(body: Any) -> dict[str, Any]:
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if not isinstance(body, str) or not body:
        return {}
    try:
        parsed = json.loads(body)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) and parsed.get("kind") == "Status" else {}
