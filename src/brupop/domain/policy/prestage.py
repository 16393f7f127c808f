"""The `prestage` section of the update policy: prepare the next version ahead of a node's turn.

A prestaged node downloads and writes the new image (prepare-update) outside the window, with no
cordon and no drain, so that its turn only drains, activates and reboots. The downloads share
the fleet's bandwidth and the update repository, hence a limit of their own.
"""

from __future__ import annotations

from pydantic import BaseModel

from brupop.domain.policy.scheduling_policy import COUNT_LIMIT_MAX, DAY_SECONDS
from brupop.domain.policy.wire_format import SPEC_WIRE, bounded_int, strict_bool

PRESTAGE_MAX_CONCURRENT_DEFAULT = 2
START_BEFORE_SECONDS_DEFAULT = DAY_SECONDS
START_BEFORE_SECONDS_MAX = 30 * DAY_SECONDS


class Prestage(BaseModel):
    """Which nodes may prepare the chosen version before their turn, and how many at once."""

    model_config = SPEC_WIRE

    enabled: bool = strict_bool(False, "left false: no prestaging")
    max_concurrent: int = bounded_int(
        PRESTAGE_MAX_CONCURRENT_DEFAULT,
        1,
        COUNT_LIMIT_MAX,
        "nodes preparing ahead at once (the downloads share the bandwidth)",
    )
    start_before_seconds: int = bounded_int(
        START_BEFORE_SECONDS_DEFAULT,
        0,
        START_BEFORE_SECONDS_MAX,
        "prepare at most this long before the window opens; 0: while it is open",
    )
