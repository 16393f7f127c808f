"""The scheduling sections of the BottlerocketUpdatePolicy spec: who may start, when, and how.

Budgets (per node group, as counts or percentages), windows in time zones, blackout periods,
version pin and release age, autoscaler-related limits, start order, the capacity check and the
drain policy. Field names are the CRD's wire format (camelCase). What the CRD schema cannot
express (cron and zone syntax, a blackout that ends before it starts) is checked here; the
object then fails as a whole and the controller keeps its last good policy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    Field,
    StrictInt,
    StrictStr,
    WithJsonSchema,
    model_validator,
)

from brupop.domain.cluster.label_selector import check_label_key
from brupop.domain.policy.wire_format import SPEC_WIRE, bounded_int
from brupop.domain.versions import is_version
from brupop.domain.windows.cron_schedule import CronError, CronSchedule
from brupop.domain.windows.zoned_window import ZONE_NAME_MAX_LENGTH, zone_named

DAY_SECONDS = 86_400
WEEK_SECONDS = 7 * DAY_SECONDS
COUNT_LIMIT_MAX = 100_000
BUDGETS_MAX = 10
WINDOWS_MAX = 10
BLACKOUTS_MAX = 50
FORCE_NAMESPACES_MAX = 50
CRON_MAX_LENGTH = 256
REASON_MAX_LENGTH = 253
VERSION_MAX_LENGTH = 64
LABEL_KEY_MAX_LENGTH = 317  # a 253-character prefix, "/", a 63-character name
RELEASE_AGE_HOURS_MAX = 24 * 365
NODE_AGE_SECONDS_MAX = 365 * DAY_SECONDS
GRACE_PERIOD_SECONDS_MAX = DAY_SECONDS
_PERCENT = re.compile(r"^(100|[1-9][0-9]?)%$")
_NAMESPACE = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"


class StartOrder(StrEnum):
    """Which ready node starts first."""

    CHEAPEST_FIRST = "cheapest-first"
    """The nodes whose drain evicts the fewest pods (pods behind a PDB count double)."""
    NAME = "name"
    """By name, as the original does."""


class OnDrainTimeout(StrEnum):
    """What happens to a drain still blocked at its timeout."""

    SKIP = "skip"
    """Return the node to service and move on (the original's behaviour)."""
    FORCE = "force"
    """Delete the blocking pods without eviction, only in the listed namespaces."""


def _check_concurrency(value: int | str) -> int | str:
    if isinstance(value, int):
        if not 1 <= value <= COUNT_LIMIT_MAX:
            raise ValueError(f"a count must be from 1 to {COUNT_LIMIT_MAX}")
        return value
    if not _PERCENT.match(value):
        raise ValueError(f'{value!r} is neither a count nor a percentage like "10%"')
    return value


ConcurrencyValue = Annotated[
    StrictInt | StrictStr,
    AfterValidator(_check_concurrency),
    WithJsonSchema(
        {
            "x-kubernetes-int-or-string": True,
            "description": 'a count (3) or a percentage of the nodes ("10%", rounded down, >= 1)',
        }
    ),
]


def concurrency_limit(value: int | str, nodes: int) -> int:
    """The number of nodes `value` allows out of `nodes`: a count as it is, a percentage
    rounded down but at least 1."""
    if isinstance(value, int):
        return value
    return max(1, nodes * int(value.rstrip("%")) // 100)


def _check_key(key: str) -> str:
    check_label_key(key)
    return key


def _check_cron(expression: str) -> str:
    try:
        schedule = CronSchedule.parse(expression)
    except CronError as error:
        raise ValueError(str(error)) from None
    if len(schedule.seconds) != 60:
        # A policy window is open while it matches; one matching second a day is a one-shot
        # trigger (the environment's schedule knows those), not a window.
        raise ValueError(
            f"{expression!r} matches single seconds; a window's seconds field must be `*` "
            "(e.g. `* * 2-4 * * * *` for 02:00-04:59)"
        )
    return expression


def _check_zone(name: str) -> str:
    zone_named(name)  # a WindowError is a ValueError: pydantic reports it at the field
    return name


def _check_version(text: str) -> str:
    if not is_version(text):
        raise ValueError(f"{text!r} is not a version like 1.20.1")
    return text


LabelKey = Annotated[
    str, Field(min_length=1, max_length=LABEL_KEY_MAX_LENGTH), AfterValidator(_check_key)
]
CronText = Annotated[
    str, Field(min_length=1, max_length=CRON_MAX_LENGTH), AfterValidator(_check_cron)
]
ZoneName = Annotated[
    str, Field(min_length=1, max_length=ZONE_NAME_MAX_LENGTH), AfterValidator(_check_zone)
]
VersionText = Annotated[
    str, Field(min_length=1, max_length=VERSION_MAX_LENGTH), AfterValidator(_check_version)
]
Namespace = Annotated[str, Field(min_length=1, max_length=63, pattern=_NAMESPACE)]


class Budget(BaseModel):
    """At most `maxConcurrent` nodes of each group (nodes sharing a value of the label
    `groupBy`) outside Idle at once; nodes without the label form their own group."""

    model_config = SPEC_WIRE

    group_by: LabelKey = Field(description="node label key, e.g. topology.kubernetes.io/zone")
    max_concurrent: ConcurrencyValue


class UpdateWindow(BaseModel):
    """When nodes may start: the 7-field cron format, read in the wall time of `timeZone`."""

    model_config = SPEC_WIRE

    cron: CronText = Field(description="sec min hour day-of-month month day-of-week year")
    time_zone: ZoneName = Field(default="UTC", description="IANA zone name, e.g. Europe/Paris")


class Blackout(BaseModel):
    """A period in which no node starts (nodes already updating finish)."""

    model_config = SPEC_WIRE

    start: AwareDatetime = Field(description="RFC 3339, e.g. 2026-12-20T00:00:00Z")
    end: AwareDatetime = Field(description="RFC 3339; after start")
    reason: str = Field(default="", max_length=REASON_MAX_LENGTH)

    @model_validator(mode="after")
    def _ends_after_it_starts(self) -> Blackout:
        if self.end <= self.start:
            raise ValueError("a blackout's end must come after its start")
        return self


class VersionSpec(BaseModel):
    """Which offered versions nodes may start updating to."""

    model_config = SPEC_WIRE

    pin: VersionText | None = Field(
        default=None, description="the highest version a node may start updating to"
    )
    min_release_age_hours: int = bounded_int(
        0, 0, RELEASE_AGE_HOURS_MAX, "a version starts only this long after a host first offered it"
    )


class DrainSpec(BaseModel):
    """How a node's drain evicts, how long it may take, and what happens then."""

    model_config = SPEC_WIRE

    grace_period_seconds: int | None = bounded_int(
        None,
        0,
        GRACE_PERIOD_SECONDS_MAX,
        "termination grace period given to evicted pods; left out: each pod's own",
    )
    timeout_seconds: int | None = bounded_int(
        None, 1, WEEK_SECONDS, "left out: the environment's DRAIN_TIMEOUT_SECONDS"
    )
    on_timeout: OnDrainTimeout = Field(default=OnDrainTimeout.SKIP)
    force_namespaces: tuple[Namespace, ...] = Field(
        default=(),
        max_length=FORCE_NAMESPACES_MAX,
        description="with onTimeout force: the only namespaces whose pods may be deleted",
    )


@dataclass(frozen=True)
class SchedulingPolicy:
    """The scheduling rules in force. Without a policy object only the start order differs
    from the original (cheapest-first); every other rule is off."""

    max_concurrent: int | str | None = None
    budgets: tuple[Budget, ...] = ()
    windows: tuple[UpdateWindow, ...] = ()
    blackouts: tuple[Blackout, ...] = ()
    finish_by: bool = False
    version: VersionSpec | None = None
    min_node_age_seconds: int = 0
    blocking_pod_selector: str | None = None
    order: StartOrder = StartOrder.CHEAPEST_FIRST
    capacity_check: bool = False
    drain: DrainSpec | None = None


DEFAULT_SCHEDULING = SchedulingPolicy()
