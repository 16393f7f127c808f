"""A watch on every shadow (as the admin), in a thread: when each spec state first appeared,
how many nodes were updating at once, and whether every watched node finished the rollout."""

from __future__ import annotations

import threading
import time
from typing import Any

from kubernetes import watch
from kubernetes.client import CustomObjectsApi

from brupop.adapters.kubernetes.resources.shadow_objects import GROUP, PLURAL, VERSION
from brupop.simulation.fleet.real_cluster.connection import ClusterAccess
from real_cluster.fleet import NAMESPACE


def updating(spec_state: str, status_state: str) -> bool:
    """A node counts against the limit from its first non-Idle spec until it is Idle again."""
    return spec_state != "Idle" or status_state not in ("Idle", "")


class ShadowWatch:
    def __init__(self, access: ClusterAccess) -> None:
        self._api = CustomObjectsApi(access.admin)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="shadow-watch")
        self.states: dict[str, tuple[str, str, str]] = {}  # name -> spec, status, version
        self.spec_seen: dict[tuple[str, str], float] = {}  # (node, spec state) -> wall time
        self.max_updating = 0
        self.events = 0

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=15)

    def reset_peak(self) -> None:
        self.max_updating = self.updating_now()

    def updating_now(self) -> int:
        return sum(1 for spec, status, _ in list(self.states.values()) if updating(spec, status))

    def finished(self, nodes: set[str], version: str) -> bool:
        return all(
            self.states.get(n, ("", "", ""))[1:] == ("Idle", version) and
            self.states[n][0] == "Idle" for n in nodes
        )  # fmt: skip

    def _run(self) -> None:
        version = ""
        while not self._stop.is_set():
            stream = watch.Watch()
            try:
                for event in stream.stream(
                    self._api.list_namespaced_custom_object, GROUP, VERSION, NAMESPACE, PLURAL,
                    resource_version=version or None, timeout_seconds=5,
                ):  # fmt: skip
                    version = self._note(event["object"]) or version
                    if self._stop.is_set():
                        break
            except Exception:
                version = ""
                time.sleep(0.5)

    def _note(self, shadow: dict[str, Any]) -> str:
        self.events += 1
        meta, spec, status = (
            shadow["metadata"],
            shadow.get("spec") or {},
            shadow.get("status") or {},
        )
        node = next(
            (o["name"] for o in meta.get("ownerReferences") or () if o["kind"] == "Node"),
            meta["name"],
        )
        spec_state = spec.get("state", "Idle")
        self.spec_seen.setdefault((node, spec_state), time.time())
        self.states[node] = (
            spec_state,
            status.get("current_state", ""),
            status.get("current_version", ""),
        )
        self.max_updating = max(self.max_updating, self.updating_now())
        return str(meta.get("resourceVersion", ""))
