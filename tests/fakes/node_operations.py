"""FakeNodeOperations: this agent's node as the NodeOperations port sees it, in memory."""

from __future__ import annotations

from collections.abc import Callable

from brupop.ports.errors import PortError
from brupop.ports.node_operations import NodeOperations

# Names accepted in `fail_next` / `fail_always` (the NodeOperations method names).
COMMANDS = (
    "cordon_and_drain",
    "uncordon",
    "exclude_from_load_balancers",
    "restore_to_load_balancers",
)


class FakeNodeOperations:
    """Records each call and keeps the node's cordon and load-balancer flags.

    `fail_next[call]` / `fail_always[call]` raise before the call acts; `on_call` runs after
    a call acted (a test can request a stop there, or move the spec).
    """

    def __init__(self) -> None:
        self.cordoned = False
        self.drained = False
        self.excluded_from_load_balancers = False
        self.calls: list[str] = []
        self.fail_next: dict[str, PortError] = {}
        self.fail_always: dict[str, PortError] = {}
        self.on_call: Callable[[str], None] | None = None
        self.workloads: list[str] = []
        self.protected: set[str] = set()

    def cordon_as_administrator(self) -> None:
        self.cordoned = True

    def exclude_as_administrator(self) -> None:
        self.excluded_from_load_balancers = True

    def add_workload(self, ref: str, *, protected: bool = False) -> None:
        self.workloads.append(ref)
        if protected:
            self.protected.add(ref)

    def cordon_and_drain(self) -> None:
        self._enter("cordon_and_drain")
        self.cordoned = True
        self.drained = True
        self.workloads.clear()
        self._after("cordon_and_drain")

    def uncordon(self) -> None:
        self._enter("uncordon")
        self.cordoned = False
        self.drained = False
        self._after("uncordon")

    def exclude_from_load_balancers(self) -> None:
        self._enter("exclude_from_load_balancers")
        self.excluded_from_load_balancers = True
        self._after("exclude_from_load_balancers")

    def restore_to_load_balancers(self) -> None:
        self._enter("restore_to_load_balancers")
        self.excluded_from_load_balancers = False
        self._after("restore_to_load_balancers")

    def _enter(self, call: str) -> None:
        self.calls.append(call)
        error = self.fail_next.pop(call, None) or self.fail_always.get(call)
        if error is not None:
            raise error

    def _after(self, call: str) -> None:
        if self.on_call is not None:
            self.on_call(call)


_: NodeOperations = FakeNodeOperations()
