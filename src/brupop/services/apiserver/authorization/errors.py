"""Why the apiserver refuses a caller: not who it claims (401) or not allowed to do it (403)."""

from __future__ import annotations


class CallerRejectedError(Exception):
    """Base of the refusals; the message is short and safe to send back to the caller."""


class UnauthenticatedError(CallerRejectedError):
    """The token does not prove who the caller is (unknown, expired, wrong audience)."""


class NotAllowedError(CallerRejectedError):
    """The caller is known but may not act on the node it names."""
