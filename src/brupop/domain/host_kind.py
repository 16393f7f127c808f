"""HostKind: what kind of Bottlerocket host the agent runs on, read from its settings answer.

A host that cannot update in place (a variant without the feature) or answers the settings read
in a way no Bottlerocket does is reported with its own kind, so the controller explains it
instead of starting it and backing off. A locked-down host refuses the settings read (500, "Live
datastore missing") yet still takes updates through the update API alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from brupop.domain.value_objects import value_object

TYPE_CHECKING = False  # keep `typing` out of the agent's start
if TYPE_CHECKING:
    from typing import Any

HOST_NOTE_MAX_LENGTH = 120
VARIANT_MAX_LENGTH = 64
HTTP_OK = 200
HTTP_SERVER_ERROR = 500
_LOCKDOWN_MARK = "datastore"


class HostKind(StrEnum):
    """The kinds of host the agent tells apart (stable codes, in the shadow's status)."""

    UPDATABLE = "updatable"
    LOCKED_DOWN = "locked_down"
    NO_IN_PLACE_UPDATES = "no_in_place_updates"
    UNEXPECTED_ANSWER = "unexpected_answer"

    @property
    def takes_updates(self) -> bool:
        """The host can be updated through the update API."""
        return self in (HostKind.UPDATABLE, HostKind.LOCKED_DOWN)


@value_object
class HostClass:
    """A host's kind and a short note on what showed it (the status code, the answer)."""

    kind: HostKind
    note: str = ""

    def __post_init__(self) -> None:
        if len(self.note) > HOST_NOTE_MAX_LENGTH:
            object.__setattr__(self, "note", self.note[: HOST_NOTE_MAX_LENGTH - 3] + "...")


def classify_settings_answer(status: int | None, body: str, document: Any) -> HostClass:
    """The kind a `GET /settings?prefix=settings.updates` answer shows.

    `status` is the HTTP status (200 when the call succeeded), `body` the error text of a
    refusal, `document` the decoded JSON of a success (None when it was not JSON).
    """
    if status == HTTP_OK:
        if not isinstance(document, Mapping):
            return HostClass(HostKind.UNEXPECTED_ANSWER, "settings answered 200, not a JSON object")
        return (
            HostClass(HostKind.UPDATABLE)
            if _has_update_settings(document)
            else HostClass(HostKind.NO_IN_PLACE_UPDATES, "no settings.updates")
        )
    if status == HTTP_SERVER_ERROR and _LOCKDOWN_MARK in body.lower():
        return HostClass(HostKind.LOCKED_DOWN, "settings refused (500: datastore locked down)")
    code = "no status" if status is None else str(status)
    return HostClass(HostKind.UNEXPECTED_ANSWER, f"settings answered {code}")


def _has_update_settings(document: Mapping[str, Any]) -> bool:
    """`{"updates": {...}}`, also under a `settings` key, with at least one setting."""
    settings = document.get("settings", document)
    updates = settings.get("updates") if isinstance(settings, Mapping) else None
    return isinstance(updates, Mapping) and len(updates) > 0
