"""Shadow builders for the controller policy tests: a node in a given spot of the update cycle."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from brupop.domain.shadow import Shadow, ShadowSpec, ShadowStatus, shadow_name
from brupop.domain.states import UpdateState

NOW = datetime(2026, 1, 5, 10, 0, 0, tzinfo=UTC)  # a Monday
OLD = "1.19.0"
NEW = "1.20.0"


def shadow(
    node: str,
    *,
    spec: UpdateState = UpdateState.IDLE,
    state: UpdateState | None = UpdateState.IDLE,
    current: str = OLD,
    target: str = NEW,
    version: str | None = None,
    stamped: datetime | None = None,
    crashes: int = 0,
    failed_at: datetime | None = None,
    rv: str = "1",
) -> Shadow:
    """A shadow for `node`; `state=None` means the agent has not reported a status yet."""
    status = (
        None
        if state is None
        else ShadowStatus(
            current_version=current,
            target_version=target,
            current_state=state,
            crash_count=crashes,
            state_transition_failure_timestamp=failed_at,
        )
    )
    if version is None and spec is not UpdateState.IDLE:
        version = target
    return Shadow(
        name=shadow_name(node),
        namespace="brupop-bottlerocket-aws",
        node_name=node,
        node_uid=f"uid-{node}",
        resource_version=rv,
        spec=ShadowSpec(state=spec, state_transition_timestamp=stamped, version=version),
        status=status,
    )


def ago(seconds: float) -> datetime:
    """`seconds` before NOW."""
    return NOW - timedelta(seconds=seconds)
