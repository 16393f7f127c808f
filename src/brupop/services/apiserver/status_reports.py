"""StatusReports: an agent's status write, refused when it claims a version no host offered.

An agent could report any semantic version as the one its node runs; each claim became a metric
series and could pass for a rollout. So a reported `current_version` must be one the node's
shadow already names:
* the version its status held (the node still runs it, or rolled back to it);
* the version its host offered (`status.target_version`: the update the host then installs);
* the version the controller asked for (`spec.version`).

A shadow without a status takes the first report as it comes (the agent's first word, once per
shadow: deleting the shadow is how an administrator has a node updated outside brupop start
afresh). `target_version` is what the host says it offers, which only the agent can see; it is
not checked. The check reads the shared watch's copy of the shadow and, only when that copy
has no status yet or would refuse, the stored shadow, so a report usually costs no extra read.
A refusal is a `VersionNotOfferedError` (a 422 with a short reason), logged once per node until
that node's report is taken again.
"""

from __future__ import annotations

import threading

import structlog

from brupop.domain.shadow import Shadow, ShadowStatus
from brupop.ports.shadow_repository import ShadowRepository
from brupop.services.apiserver.shadow_feed import ShadowFeed

_REFUSING_KEPT = 10_000  # nodes remembered as refused (for logging once); past it, forgotten

log = structlog.get_logger(__name__)


class VersionNotOfferedError(Exception):
    """The report names a running version the node's shadow never offered; the message is short
    and safe to send back."""


def version_offered(shadow: Shadow, status: ShadowStatus) -> bool:
    """True when `status.current_version` is one `shadow` already names (or it has no status)."""
    held = shadow.status
    if held is None:
        return True
    offered = {held.current_version, held.target_version, shadow.spec.version}
    return status.current_version in offered


class StatusReports:
    """Writes an agent's status once its running version is believable."""

    def __init__(self, shadows: ShadowRepository, feed: ShadowFeed) -> None:
        self._shadows, self._feed = shadows, feed
        self._refusing: set[str] = set()
        self._lock = threading.Lock()

    def write(self, name: str, status: ShadowStatus) -> Shadow:
        """Store `status` on shadow `name`, or refuse it (VersionNotOfferedError)."""
        seen = self._feed.latest(name)
        if seen is None or seen.status is None or not version_offered(seen, status):
            # The watch may lag (a copy without a status would take anything): the stored
            # shadow decides.
            stored = self._shadows.get(name)
            if not version_offered(stored, status):
                self._refused(name, status)
        written = self._shadows.update_status(name, status)
        with self._lock:
            self._refusing.discard(name)
        return written

    def _refused(self, name: str, status: ShadowStatus) -> None:
        with self._lock:
            first = name not in self._refusing
            if len(self._refusing) >= _REFUSING_KEPT:
                self._refusing.clear()
            self._refusing.add(name)
        if first:
            log.warning(
                "status.refused",
                shadow=name,
                current_version=status.current_version,
                reason="no host offered this version to the node",
            )
        raise VersionNotOfferedError(
            f"current_version {status.current_version} was never offered to this node: it is "
            "neither the version it ran, the one its host offered, nor the one asked for"
        )
