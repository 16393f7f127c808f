"""AutoscalerGuard: the leader keeps autoscalers off the nodes it updates, and undoes it after.

Each leading pass, the nodes whose shadow holds a slot carry the autoscaler annotations
(domain/starting/autoscaler_annotations.py); the nodes that carry brupop's record but hold no slot
any more get back what they had. Only those two sets are looked at: the holders, and the nodes known
to carry the record. The latter is found by one walk over the Node mirror when this replica starts
leading and every `rescan_seconds` (a record another replica or an earlier run left), and kept up to
date from the writes made here in between. A node's annotations are read from the mirror, so a pass
writes only where they differ from what they should be (and reads that Node afresh before it writes,
in case the mirror lags); a failed write is logged at WARN and tried again by a later pass."""

from __future__ import annotations

from collections.abc import Set
from typing import Any

from brupop.domain.cluster.objects import Node
from brupop.domain.shadow import OPT_IN_LABEL, OPT_IN_VALUE
from brupop.domain.starting.autoscaler_annotations import (
    AnnotationChanges,
    guard_changes,
    is_recorded,
    restore_changes,
)
from brupop.ports.clock import Clock
from brupop.ports.cluster.node_repository import NodeRepository
from brupop.ports.errors import ConflictError, NotFoundError, PortError
from brupop.services.runtime.mirror import Mirror


class AutoscalerGuard:
    """Sets and restores the autoscaler annotations of the nodes brupop updates."""

    def __init__(
        self,
        nodes: NodeRepository,
        mirror: Mirror[Node],
        clock: Clock,
        log: Any,
        *,
        rescan_seconds: float,
    ) -> None:
        self._nodes = nodes
        self._mirror = mirror
        self._clock = clock
        self._log = log
        self._rescan_seconds = rescan_seconds
        self._recorded: set[str] | None = None  # None: not known (not leading, or just started)
        self._scanned_at = 0.0

    def keep(self, holding: Set[str], *, leading: bool) -> int:
        """Annotate the nodes named in `holding`, restore the recorded ones not in it; how many
        Nodes were written. A replica that does not lead writes nothing and forgets what it
        knew (the leader may change the Nodes meanwhile)."""
        if not leading:
            self._recorded = None
            return 0
        recorded = self._known_recorded()
        written = 0
        for name in sorted(holding | recorded):
            if self._settle(name, guarded=name in holding):
                written += 1
        return written

    def _known_recorded(self) -> set[str]:
        now = self._clock.monotonic()
        if self._recorded is None or now - self._scanned_at >= self._rescan_seconds:
            self._recorded = {n.name for n in self._mirror.values() if is_recorded(n.annotations)}
            self._scanned_at = now
        return self._recorded

    def _settle(self, name: str, *, guarded: bool) -> bool:
        """Bring one Node's annotations to what they should be; True when it was written."""
        node = self._mirror.get(name)
        mirrored = node is not None
        if node is None and not guarded:
            node = self._read(name)  # opted out meanwhile: the mirror no longer holds it
        if node is None:
            return False
        written = False
        if _changes(node, guarded=guarded):
            node, written = self._write(name, node, guarded=guarded)
            if node is None:
                return False
        if mirrored and node.labels.get(OPT_IN_LABEL) == OPT_IN_VALUE:
            self._mirror.put(node)  # not a Node that left the opted-in mirror meanwhile
        self._note(name, recorded=is_recorded(node.annotations))
        return written

    def _read(self, name: str) -> Node | None:
        try:
            return self._nodes.get(name)
        except NotFoundError:
            self._note(name, recorded=False)
        except PortError as error:
            self._warn("autoscaler_annotations.read_failed", name, error)
        return None

    def _write(self, name: str, decided_on: Node, *, guarded: bool) -> tuple[Node | None, bool]:
        """Write what `decided_on` needs, guarded by its resourceVersion: the mirror may lag
        behind a write of another replica, and then the apiserver refuses (409) and the Node as
        it is now is read and decided on, so a record is never overwritten with what a stale
        copy says (a Node of unknown version is read first). The Node after (None: unknown),
        and whether it was written."""
        node: Node | None = decided_on
        if decided_on.resource_version is None:
            node = self._read(name)
        for attempt in range(2):
            if node is None:
                return None, False
            changes = _changes(node, guarded=guarded)
            if not changes:
                return node, False
            try:
                written = self._nodes.set_annotations(
                    name, changes, resource_version=node.resource_version
                )
            except ConflictError as error:
                if attempt:
                    self._warn("autoscaler_annotations.write_failed", name, error)
                    return None, False
                node = self._read(name)
                continue
            except NotFoundError:
                self._note(name, recorded=False)
                return None, False
            except PortError as error:
                self._warn("autoscaler_annotations.write_failed", name, error)
                return None, False
            event = "autoscaler_annotations.set" if guarded else "autoscaler_annotations.restored"
            self._log.info(event, node=name, keys=sorted(changes))
            return written, True
        return None, False

    def _note(self, name: str, *, recorded: bool) -> None:
        if self._recorded is None:
            return
        if recorded:
            self._recorded.add(name)
        else:
            self._recorded.discard(name)

    def _warn(self, event: str, name: str, error: PortError) -> None:
        self._log.warning(event, node=name, error=type(error).__name__, reason=str(error))


def _changes(node: Node, *, guarded: bool) -> AnnotationChanges:
    return guard_changes(node.annotations) if guarded else restore_changes(node.annotations)
