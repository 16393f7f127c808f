"""ShadowStore: the agent's own shadow, read and written through the brupop apiserver."""

from __future__ import annotations

from typing import Protocol

from brupop.domain.host.agent_shadow import AgentShadow, AgentShadowStatus


class ShadowStore(Protocol):
    """Read, create and report status on the shadow of this agent's node."""

    def get(self) -> AgentShadow | None:
        """The shadow, or None when it does not exist yet."""
        ...

    def wait_for_change(
        self, resource_version: str | None, timeout_seconds: float
    ) -> AgentShadow | None:
        """Return the shadow as soon as its resourceVersion differs from `resource_version`,
        or after `timeout_seconds` at the latest; None when it does not exist.

        With `resource_version` None, a missing shadow is the unchanged state: the call waits
        (up to the timeout) for it to appear."""
        ...

    def create(self) -> AgentShadow:
        """Create the shadow (spec Idle, no status) and return it; when it exists already,
        return the stored one."""
        ...

    def update_status(self, status: AgentShadowStatus) -> AgentShadow:
        """Replace the status and return the shadow as stored."""
        ...
