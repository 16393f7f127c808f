"""Reading the apiserver's answers: the JSON object a route returns, or UnavailableError.

Whatever comes back (not JSON, not UTF-8, nested deeper than the parser goes, a list or a
number where an object belongs) is an answer brupop cannot read: a port error the agent logs
and retries, never an exception of the parser's own.
"""

from __future__ import annotations

import json

from brupop.ports.errors import UnavailableError

TYPE_CHECKING = False  # keep `typing` out of the agent's start
if TYPE_CHECKING:
    from typing import Any

MAX_MESSAGE_LENGTH = 300


def json_object(data: bytes) -> dict[str, Any]:
    """The JSON object in `data`; UnavailableError when it is anything else."""
    try:
        document = json.loads(data)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        raise UnavailableError("the apiserver answered something that is not JSON") from None
    if not isinstance(document, dict):
        kind = type(document).__name__
        raise UnavailableError(f"the apiserver answered JSON that is not an object ({kind})")
    return document


def error_text(status: int, data: bytes) -> str:
    """What an error answer says: its `error` string, else its first bytes, else its status."""
    try:
        document: Any = json_object(data)
    except UnavailableError:
        document = {}
    message = document.get("error")
    if isinstance(message, str):
        return message[:MAX_MESSAGE_LENGTH]
    return data[:MAX_MESSAGE_LENGTH].decode("utf-8", "replace") or f"HTTP {status}"
