"""InMemoryShadowStore: one node's shadow behind the ShadowStore port, with a controller's hand.

Tests play the controller by setting the spec; fault switches make any call fail; every status
write is recorded so tests can see exactly what the agent reported.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from brupop.domain.host.agent_shadow import AgentShadow, AgentShadowSpec, AgentShadowStatus
from brupop.domain.shadow_names import shadow_name
from brupop.domain.states import UpdateState
from brupop.ports.agent.shadow_store import ShadowStore
from brupop.ports.clock import Clock
from brupop.ports.errors import NotFoundError
from tests.fakes.clock import FakeClock

# Names accepted in `fail_next` / `fail_always` (the ShadowStore method names).
COMMANDS = ("get", "wait_for_change", "create", "update_status")


class InMemoryShadowStore:
    """The shadow `brs-<node>` with resourceVersions that grow on every change.

    * `fail_next[call] = error` raises `error` once, on the next `call`, before it acts;
      `fail_always[call] = error` on every call.
    * `on_wait` runs at each `wait_for_change` (before it answers): the place where a test's
      controller moves the spec. A wait that sees no change (the shadow still at the version,
      or still missing) sleeps the poll's timeout on `clock`, as the apiserver's long-poll
      holds the request that long; without a `clock`, the fake keeps time of its own.
    """

    def __init__(
        self,
        node_name: str = "node-1",
        *,
        namespace: str = "brupop-bottlerocket-aws",
        node_uid: str = "uid-node-1",
        clock: Clock | None = None,
    ) -> None:
        self.node_name = node_name
        self.namespace = namespace
        self.node_uid = node_uid
        self.shadow: AgentShadow | None = None
        self.fail_next: dict[str, Exception] = {}
        self.fail_always: dict[str, Exception] = {}
        self.on_wait: Callable[[InMemoryShadowStore], None] | None = None
        self.calls: list[str] = []
        self.status_writes: list[AgentShadowStatus] = []
        self._clock: Clock = clock or FakeClock()
        self._version = 0

    # --- the controller's hand ------------------------------------------------------------

    def put(
        self, spec: AgentShadowSpec | None = None, status: AgentShadowStatus | None = None
    ) -> AgentShadow:
        """Create or overwrite the whole shadow (as if it had been there before the agent)."""
        self.shadow = self._stamp(
            AgentShadow(
                name=shadow_name(self.node_name),
                namespace=self.namespace,
                node_name=self.node_name,
                node_uid=self.node_uid,
                spec=spec or AgentShadowSpec(),
                status=status,
            )
        )
        return self.shadow

    def set_spec(self, state: UpdateState, version: str | None = None) -> AgentShadow:
        """Ask the node for `state` (and `version`), as the controller does."""
        current = self._existing()
        self.shadow = self._stamp(
            replace(current, spec=AgentShadowSpec(state=state, version=version))
        )
        return self.shadow

    @property
    def status(self) -> AgentShadowStatus | None:
        """The status as stored now."""
        return self.shadow.status if self.shadow is not None else None

    # --- ShadowStore ----------------------------------------------------------------------

    def get(self) -> AgentShadow | None:
        self._enter("get")
        return self.shadow

    def wait_for_change(
        self, resource_version: str | None, timeout_seconds: float
    ) -> AgentShadow | None:
        self._enter("wait_for_change")
        if self.on_wait is not None:
            self.on_wait(self)
        if self._unchanged_since(resource_version):
            self._clock.sleep(timeout_seconds)
        return self.shadow

    def create(self) -> AgentShadow:
        self._enter("create")
        if self.shadow is not None:
            return self.shadow  # as the apiserver answers a second create: the stored shadow
        return self.put()

    def update_status(self, status: AgentShadowStatus) -> AgentShadow:
        self._enter("update_status")
        current = self._existing()
        self.status_writes.append(status)
        self.shadow = self._stamp(replace(current, status=status))
        return self.shadow

    # --- internals ------------------------------------------------------------------------

    def _enter(self, call: str) -> None:
        self.calls.append(call)
        error = self.fail_next.pop(call, None) or self.fail_always.get(call)
        if error is not None:
            raise error

    def _unchanged_since(self, resource_version: str | None) -> bool:
        if self.shadow is None:
            return resource_version is None
        return self.shadow.resource_version == resource_version

    def _existing(self) -> AgentShadow:
        if self.shadow is None:
            raise NotFoundError(f"{shadow_name(self.node_name)} does not exist")
        return self.shadow

    def _stamp(self, shadow: AgentShadow) -> AgentShadow:
        self._version += 1
        return replace(shadow, resource_version=str(self._version))


_: ShadowStore = InMemoryShadowStore()
