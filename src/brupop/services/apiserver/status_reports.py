"""StatusReports: an agent's status write, checked against the world before it is stored.

A report is refused when it claims what its node cannot have seen:
* a running `current_version` no host offered: it must be one the node's shadow already names
  (the version its status held, the version its host offered, or the version the controller
  asked for); a shadow without a status takes the first report as it comes. A 422.
* an instant out of bounds (`report_bounds`): a failure later than now, or before the Node was
  created. A 400 naming the field. One such report used to stop every rollout.
`target_version` is what the host says it offers, which only the agent can see: not checked.

A report equal to the status the shared watch shows is answered from it, without a write; the
others are paced per node (`StatusPacing`, a 429 past it), so one agent cannot make etcd write
for it at will. Checks read the watch's copy of the shadow and, only when that copy has no
status yet or would refuse, the stored shadow; the Node is read only for a new failure time.
Each refusal is logged once per node until that node's report is taken again.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import structlog

from brupop.domain.rollout.report_bounds import status_problem
from brupop.domain.shadow import Shadow, ShadowStatus
from brupop.domain.token_bucket import TokenBucket
from brupop.ports.clock import Clock
from brupop.ports.cluster.node_repository import NodeRepository
from brupop.ports.cluster.shadow_repository import ShadowRepository
from brupop.services.apiserver.shadow_feed import ShadowFeed

_KEPT = 10_000  # nodes remembered (refusals logged once, write allowances); past it, forgotten

log = structlog.get_logger(__name__)


class VersionNotOfferedError(Exception):
    """The report names a running version the node's shadow never offered; the message is short
    and safe to send back."""


class ReportOutOfBoundsError(Exception):
    """The report carries an instant its node cannot have seen; `field` names it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class ReportsTooFrequentError(Exception):
    """The node's status writes came faster than its pace allows; retry after a moment."""


@dataclass(frozen=True)
class StatusPacing:
    """At most `burst` status writes at once per node, then one per `period_seconds`."""

    period_seconds: float = 1.0
    burst: int = 10


def version_offered(shadow: Shadow, status: ShadowStatus) -> bool:
    """True when `status.current_version` is one `shadow` already names (or it has no status)."""
    held = shadow.status
    if held is None:
        return True
    offered = {held.current_version, held.target_version, shadow.spec.version}
    return status.current_version in offered


class StatusReports:
    """Writes an agent's status once it is believable, and not more often than its pace."""

    def __init__(
        self,
        shadows: ShadowRepository,
        feed: ShadowFeed,
        nodes: NodeRepository,
        clock: Clock,
        pacing: StatusPacing | None = None,
    ) -> None:
        self._shadows, self._feed, self._nodes, self._clock = shadows, feed, nodes, clock
        self._pacing = pacing or StatusPacing()
        self._refusing: set[str] = set()
        self._buckets: dict[str, TokenBucket] = {}
        self._lock = threading.Lock()

    def write(self, name: str, node_name: str, status: ShadowStatus) -> Shadow:
        """Store `status` on shadow `name` of node `node_name`, or refuse it
        (VersionNotOfferedError, ReportOutOfBoundsError, ReportsTooFrequentError)."""
        seen = self._feed.latest(name)
        if seen is not None and seen.status == status:
            return seen  # nothing changes: no write
        self._check_instants(name, node_name, status, seen)
        if seen is None or seen.status is None or not version_offered(seen, status):
            # The watch may lag (a copy without a status would take anything): the stored
            # shadow decides.
            stored = self._shadows.get(name)
            if not version_offered(stored, status):
                self._refused(name, "current_version", f"{status.current_version}: never offered")
                raise VersionNotOfferedError(
                    f"current_version {status.current_version} was never offered to this node: "
                    "it is neither the version it ran, the one its host offered, nor the one "
                    "asked for"
                )
        self._take_write(name)
        written = self._shadows.update_status(name, status)
        with self._lock:
            self._refusing.discard(name)
        return written

    def _check_instants(
        self, name: str, node_name: str, status: ShadowStatus, seen: Shadow | None
    ) -> None:
        """Refuse an instant out of bounds; the Node's creation is read only for a failure
        time the shadow does not already hold."""
        failed_at = status.state_transition_failure_timestamp
        held = seen.status.state_transition_failure_timestamp if seen and seen.status else None
        created = None
        if failed_at is not None and failed_at != held:
            created = self._nodes.get(node_name).created_at
        problem = status_problem(status, self._clock.now(), node_created_at=created)
        if problem is not None:
            field, why = problem
            self._refused(name, field, why)
            raise ReportOutOfBoundsError(field, f"status.{field}: {why}")

    def _take_write(self, name: str) -> None:
        """Spend one of the node's writes, or refuse (ReportsTooFrequentError)."""
        now = self._clock.monotonic()
        pace = self._pacing
        with self._lock:
            bucket = self._buckets.get(name) or TokenBucket.full(
                pace.period_seconds, pace.burst, now
            )
            taken = bucket.take(now)
            if len(self._buckets) >= _KEPT and name not in self._buckets:
                self._buckets.clear()
            self._buckets[name] = taken or bucket
        if taken is None:
            self._refused(name, "pace", "status writes faster than the node's pace")
            raise ReportsTooFrequentError(
                f"status writes come faster than {pace.burst} at once and one per "
                f"{pace.period_seconds:g} s; retry later"
            )

    def _refused(self, name: str, field: str, why: str) -> None:
        """Log the refusal, once per node until its report is taken again."""
        with self._lock:
            first = name not in self._refusing
            if len(self._refusing) >= _KEPT:
                self._refusing.clear()
            self._refusing.add(name)
        if first:
            log.warning("status.refused", shadow=name, field=field, reason=why[:200])
