"""The `prestage` section of the update policy: prepare the next version ahead of a node's turn.

A prestaged node downloads and writes the new image (prepare-update) outside the window, with no
cordon and no drain, so that its turn only drains, activates and reboots. The downloads share
the fleet's bandwidth and the update repository, hence a limit of their own.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from brupop.domain.policy.scheduling_policy import COUNT_LIMIT_MAX, DAY_SECONDS
from brupop.domain.policy.wire_format import SPEC_WIRE

PRESTAGE_MAX_CONCURRENT_DEFAULT = 2
START_BEFORE_SECONDS_DEFAULT = DAY_SECONDS
START_BEFORE_SECONDS_MAX = 30 * DAY_SECONDS


class Prestage(BaseModel):
    """Which nodes may prepare the chosen version before their turn, and how many at once."""

    model_config = SPEC_WIRE

    enabled: bool = Field(strict=True, default=False, description="left false: no prestaging")
    max_concurrent: int = Field(
        strict=True,
        default=PRESTAGE_MAX_CONCURRENT_DEFAULT,
        ge=1,
        le=COUNT_LIMIT_MAX,
        description="nodes preparing ahead at once (the downloads share the bandwidth)",
    )
    start_before_seconds: int = Field(
        strict=True,
        default=START_BEFORE_SECONDS_DEFAULT,
        ge=0,
        le=START_BEFORE_SECONDS_MAX,
        description="prepare at most this long before the window opens; 0: while it is open",
    )
