"""Reading the API's objects defensively: what cannot be read is an InvalidObjectError.

The kube-apiserver validates what it stores, so an odd object means a proxy, a client or a
version this code does not know. Whatever it is, a decoder may only return a domain value or
raise InvalidObjectError: never AttributeError, TypeError, RecursionError or the like, which
would escape every caller's handling of port errors.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, TypeVar

import structlog

from brupop.ports.errors import InvalidObjectError, PortError

T = TypeVar("T")
P = ParamSpec("P")
JSON = dict[str, Any]
log = structlog.get_logger(__name__)

_UNREADABLE = (
    AttributeError,
    TypeError,
    ValueError,
    KeyError,
    IndexError,
    RecursionError,
    OverflowError,
)


def reads(
    kind: str,
) -> Callable[[Callable[Concatenate[JSON, P], T]], Callable[Concatenate[Any, P], T]]:
    """Make a decoder of `kind` objects raise only InvalidObjectError for what it cannot read."""

    def wrap(decode: Callable[Concatenate[JSON, P], T]) -> Callable[Concatenate[Any, P], T]:
        @functools.wraps(decode)
        def decoded(obj: Any, /, *args: P.args, **kwargs: P.kwargs) -> T:
            if not isinstance(obj, dict):
                raise InvalidObjectError(f"a {kind} that is not a JSON object")
            try:
                return decode(obj, *args, **kwargs)
            except PortError:
                raise
            except _UNREADABLE as error:
                raise InvalidObjectError(
                    f"a {kind} that cannot be read ({type(error).__name__})"
                ) from None

        return decoded

    return wrap


def skipping(decode: Callable[[Any], T]) -> Callable[[Any], T | None]:
    """`decode`, with an unreadable object logged and left out (None) instead of raised: for
    lists and watches whose other objects must still be seen."""

    def decoded_or_none(obj: Any) -> T | None:
        try:
            return decode(obj)
        except InvalidObjectError as error:
            log.warning("kubernetes.object_unreadable", error=str(error)[:300])
            return None

    return decoded_or_none


def mapping(value: object) -> JSON:
    """`value` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def text_map(value: object) -> dict[str, str]:
    """A string-to-string map (labels, annotations); entries of other types are left out."""
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)}


def text_or_none(value: object) -> str | None:
    """A non-empty string, else None."""
    return value if isinstance(value, str) and value else None


def entries(value: object) -> list[JSON]:
    """The JSON objects of a list; anything else is no entries."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []
