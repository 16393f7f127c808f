"""FakeNodeOperations: this agent's node as the NodeOperations port sees it, in memory."""

from __future__ import annotations

from collections.abc import Callable

from brupop.ports.agent.node_operations import NodeOperations
from brupop.ports.errors import DrainFailedError, PortError

# Names accepted in `fail_next` / `fail_always` (the NodeOperations method names).
COMMANDS = (
    "cordon_and_drain",
    "uncordon",
    "exclude_from_load_balancers",
    "restore_to_load_balancers",
)


class FakeNodeOperations:
    """Records each call and keeps the node's cordon, load-balancer and workload state.

    As the apiserver does, it undoes only what brupop did: a node an administrator cordoned
    or excluded stays so. Setting `cordoned` or `excluded_from_load_balancers` directly puts
    the node as brupop left it (e.g. before an agent restart). A drain evicts the workloads
    except the protected ones (held by a disruption budget), and then fails naming them.

    `fail_next[call]` / `fail_always[call]` raise before the call acts; `on_call` runs after
    a call acted (a test can request a stop there, or move the spec).
    """

    def __init__(self) -> None:
        self.drained = False
        self.calls: list[str] = []
        self.fail_next: dict[str, PortError] = {}
        self.fail_always: dict[str, PortError] = {}
        self.on_call: Callable[[str], None] | None = None
        self.workloads: list[str] = []
        self.protected: set[str] = set()
        self._cordoned = self._cordoned_by_brupop = False
        self._excluded = self._excluded_by_brupop = False

    # --- the node as tests set it up and see it ------------------------------------------

    @property
    def cordoned(self) -> bool:
        return self._cordoned

    @cordoned.setter
    def cordoned(self, value: bool) -> None:
        self._cordoned = self._cordoned_by_brupop = value

    @property
    def excluded_from_load_balancers(self) -> bool:
        return self._excluded

    @excluded_from_load_balancers.setter
    def excluded_from_load_balancers(self, value: bool) -> None:
        self._excluded = self._excluded_by_brupop = value

    def cordon_as_administrator(self) -> None:
        self._cordoned = True

    def exclude_as_administrator(self) -> None:
        self._excluded = True

    def add_workload(self, ref: str, *, protected: bool = False) -> None:
        """A pod `namespace/name` on the node; a protected one cannot be evicted."""
        self.workloads.append(ref)
        if protected:
            self.protected.add(ref)

    # --- NodeOperations -------------------------------------------------------------------

    def cordon_and_drain(self) -> None:
        self._enter("cordon_and_drain")
        if not self._cordoned:
            self.cordoned = True
        self.workloads = [ref for ref in self.workloads if ref in self.protected]
        if self.workloads:
            blockers = tuple(self.workloads)
            raise DrainFailedError(f"pods still on the node: {', '.join(blockers)}", blockers)
        self.drained = True
        self._after("cordon_and_drain")

    def uncordon(self) -> None:
        self._enter("uncordon")
        if self._cordoned_by_brupop:
            self.cordoned = False
        self.drained = False
        self._after("uncordon")

    def exclude_from_load_balancers(self) -> None:
        self._enter("exclude_from_load_balancers")
        if not self._excluded:
            self.excluded_from_load_balancers = True
        self._after("exclude_from_load_balancers")

    def restore_to_load_balancers(self) -> None:
        self._enter("restore_to_load_balancers")
        if self._excluded_by_brupop:
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
