"""Reason: why a node is where it is, as a stable code for `brupop status`, metrics and scripts;
Explanation: that code with the sentence REASON shows for it.

Its own module, because every start rule and gate names one and the reporting that explains
them sits above them all."""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple


class Reason(StrEnum):
    """A node's situation, as a stable code for scripts and metrics."""

    NO_STATUS = "no_status"
    NO_UPDATE = "no_update"
    OUTSIDE_WINDOW = "outside_window"
    CONCURRENCY_FULL = "concurrency_full"
    PAUSED = "paused"
    BACKING_OFF = "backing_off"
    READY = "ready"
    STARTING = "starting"
    UPDATING = "updating"
    DRAIN_BLOCKED = "drain_blocked"
    CRASHED = "crashed"
    TIMED_OUT = "timed_out"
    # Rollout safety (the update policy); see domain/safety/safety_reasons.py.
    HALTED = "halted"
    ALERT_HOLD = "alert_hold"
    CANARY_SOAK = "canary_soak"
    GATE_PENDING = "gate_pending"
    HOOK_PENDING = "hook_pending"
    # Fleet scheduling (the update policy); see domain/starting/start_holds.py.
    BLACKOUT = "blackout"
    FINISH_BY = "finish_by"
    BUDGET_FULL = "budget_full"
    PINNED = "pinned"
    RELEASE_TOO_NEW = "release_too_new"
    AUTOSCALER = "autoscaler"
    BLOCKING_POD = "blocking_pod"
    NODE_TOO_YOUNG = "node_too_young"
    NO_ROOM = "no_room"
    # Hosts that cannot take an update (domain/host_kind.py, domain/reporting/variant_offers.py).
    NO_IN_PLACE_UPDATES = "no_in_place_updates"
    UNEXPECTED_HOST_ANSWER = "unexpected_host_answer"
    NO_OFFER_FOR_VARIANT = "no_offer_for_variant"
    # An update changed the host's boot mode (FIPS or not): failed, never started again.
    BOOT_MODE_CHANGED = "boot_mode_changed"
    # A shadow the controller cannot judge (domain/rollout/report_bounds.py): set aside.
    QUARANTINED = "quarantined"

    @property
    def cannot_update(self) -> bool:
        """The node's host cannot take an update: left alone, never started, not a failure."""
        return self in (
            Reason.NO_IN_PLACE_UPDATES,
            Reason.UNEXPECTED_HOST_ANSWER,
            Reason.NO_OFFER_FOR_VARIANT,
        )

    @property
    def is_waiting(self) -> bool:
        """The node is not making progress through an update of its own accord."""
        return self not in (Reason.STARTING, Reason.UPDATING)


class Explanation(NamedTuple):
    """A reason code and the one sentence `brupop status` shows beside it."""

    reason: Reason
    detail: str
