"""Kubernetes answers become the ports' typed errors, so no client exception reaches a service.

The kube-apiserver explains every failure with a `v1 Status` body (code, reason, message);
the reason tells an AlreadyExists 409 from a Conflict 409.
"""

from __future__ import annotations

import json
import re
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
    ThrottledError,
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


RETRY_AFTER_MAX_SECONDS = 60.0
_NO_ANSWER_CHARS = 120
"""The longest Retry-After believed: a bigger one is read as this many seconds."""
DISRUPTION_BUDGET_CAUSE = "DisruptionBudget"


def error_for_status(
    code: int,
    reason: str,
    message: str,
    action: str,
    *,
    budget_refusal: bool = False,
    retry_after: str | None = None,
) -> PortError:
    """The port error for an HTTP status and the Status object's reason and message.

    A 429 is a budget's refusal only when the Status says so (`budget_refusal`); any other 429
    is the API shedding load, a ThrottledError that carries the Retry-After it was given.
    """
    text = f"{action}: {code} {reason}: {message}".rstrip(": ")
    if code == 403:
        return ForbiddenError(forbidden_text(action, message))
    if code == 409 and reason == "AlreadyExists":
        return AlreadyExistsError(text)
    if code == 429 and not budget_refusal:
        return ThrottledError(text, retry_after_seconds=retry_after_seconds(retry_after))
    return _BY_CODE.get(code, UnavailableError)(text)


# What RBAC's refusal says: `nodes is forbidden: User "system:serviceaccount:ns:sa" cannot list
# resource "nodes" in API group "" at the cluster scope` (or `in the namespace "ns"`).
_RBAC_REFUSAL = re.compile(
    r'User "(?P<user>[^"]*)" cannot (?P<verb>\S+) resource "(?P<resource>[^"]+)"'
    r'(?: in API group "(?P<group>[^"]*)")?'
    r'(?: in the namespace "(?P<namespace>[^"]+)"| (?P<cluster>at the cluster scope))?'
)


def forbidden_text(action: str, message: str) -> str:
    """One line for a 403: `<action>: forbidden: <verb> <resource> (<scope>) for <user>`, so
    the missing grant is plain; the API's own message when it is not RBAC's usual sentence."""
    refusal = _RBAC_REFUSAL.search(message)
    if refusal is None:
        return f"{action}: forbidden: {message}".rstrip(": ")
    what = f"{refusal['verb']} {refusal['resource']}"
    if refusal["group"]:
        what += f" in API group {refusal['group']}"
    if refusal["namespace"]:
        what += f" (in namespace {refusal['namespace']})"
    elif refusal["cluster"]:
        what += " (cluster-wide)"
    return f"{action}: forbidden: {what} for {refusal['user']}"


def from_api_exception(error: ApiException, action: str) -> PortError:
    """Translate the client's ApiException, reading the Status body when there is one."""
    status = _status_of(error.body)
    code = status_code(status.get("code"), default=error.status or 0)
    reason = str(status.get("reason") or error.reason or "")
    message = str(status.get("message") or "")
    headers = error.headers or {}
    return error_for_status(
        code,
        reason,
        message,
        action,
        budget_refusal=_names_a_budget(status),
        retry_after=headers.get("Retry-After") if hasattr(headers, "get") else None,
    )


def status_code(value: object, *, default: int) -> int:
    """A Status body's HTTP code when it is one (100-599), else `default`."""
    if isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599:
        return value
    return default


def retry_after_seconds(value: str | None) -> float | None:
    """A Retry-After header's seconds, bounded; None when absent or not a whole number."""
    text = (value or "").strip()
    if not text.isascii() or not text.isdigit() or len(text) > 6:
        return None
    return min(float(text), RETRY_AFTER_MAX_SECONDS)


def _names_a_budget(status: dict[str, Any]) -> bool:
    """The Status is an eviction refused by a PodDisruptionBudget (its cause says so)."""
    details = status.get("details")
    causes = details.get("causes") if isinstance(details, dict) else None
    return isinstance(causes, list) and any(
        isinstance(cause, dict) and cause.get("reason") == DISRUPTION_BUDGET_CAUSE
        for cause in causes
    )


@contextmanager
def translated(action: str) -> Iterator[None]:
    """Run a client call; re-raise its failures as port errors naming `action`."""
    try:
        yield
    except ApiException as error:
        raise from_api_exception(error, action) from error
    except (urllib3.exceptions.HTTPError, OSError) as error:
        raise UnavailableError(
            f"{action}: the Kubernetes API did not answer: {no_answer(error)}"
        ) from error


def no_answer(error: BaseException) -> str:
    """Why a request got no answer, in a few words: urllib3's message embeds the connection's
    repr (host, port, sometimes an object address), which the caller already names."""
    cause = error.__context__ if isinstance(error, urllib3.exceptions.HTTPError) else error
    if isinstance(cause, OSError) and cause.strerror:
        return cause.strerror.lower()  # "connection refused", "name or service not known"
    if isinstance(error, urllib3.exceptions.TimeoutError | TimeoutError):
        return "timed out"
    text = " ".join(str(cause or error).split())
    _, colon, rest = text.partition("): ")
    text = rest if colon and text.startswith(("HTTPConnection(", "HTTPSConnection(")) else text
    return text if len(text) <= _NO_ANSWER_CHARS else text[: _NO_ANSWER_CHARS - 3] + "..."


def _status_of(body: Any) -> dict[str, Any]:
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if not isinstance(body, str) or not body:
        return {}
    try:
        parsed = json.loads(body)
    except (ValueError, RecursionError):
        return {}
    return parsed if isinstance(parsed, dict) and parsed.get("kind") == "Status" else {}
