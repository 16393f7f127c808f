"""The agent's timing knobs, as plain values (the entrypoint reads them from the environment)."""

from __future__ import annotations

from brupop.domain.value_objects import value_object


@value_object
class AgentConfig:
    """Intervals and waits of the agent loop; defaults are the original's values."""

    loop_interval_seconds: float = 5.0
    """Pause after a failed loop before trying again."""
    update_check_interval_seconds: float = 120.0
    """At most one `refresh-updates` per interval; the first one is immediate."""
    reboot_wait_seconds: float = 180.0
    """How long to wait for the host to go down once the reboot was accepted."""
    shadow_wait_seconds: float = 30.0
    """Length of one long-poll on the shadow when there is nothing to do."""
    exclude_from_lb_wait_seconds: float = 0.0
    """When above zero: leave the load balancers and wait this long before the drain."""

    def __post_init__(self) -> None:
        for name in (
            "loop_interval_seconds",
            "update_check_interval_seconds",
            "shadow_wait_seconds",
        ):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be above zero")
        for name in ("reboot_wait_seconds", "exclude_from_lb_wait_seconds"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative")
