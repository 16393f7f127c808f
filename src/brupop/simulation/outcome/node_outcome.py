"""What happened to one node, gathered after the run from the cluster, the host and the agent.

The shadow gives the final version and state, the Node its cordon, the emulated host its
reboots, the supervisor the agent's exits, the agent's log its last failure.
"""

from __future__ import annotations

from pathlib import Path

from brupop.cli.fleet_description.nodes import SimulatedNode
from brupop.cli.fleet_description.simulated_cluster import SimulatedCluster
from brupop.domain.shadow import Shadow, shadow_name
from brupop.ports.errors import NotFoundError
from brupop.simulation.fleet.observer import NodeView
from brupop.simulation.fleet.supervisor import AgentView
from brupop.simulation.outcome.agent_logs import last_failure
from brupop.simulation.outcome.host_state import read_host_facts
from brupop.simulation.outcome.report import PHASES, NodeOutcome


def node_outcome(
    node: SimulatedNode,
    cluster: SimulatedCluster,
    *,
    from_version: str,
    to_version: str,
    agent: AgentView,
    view: NodeView,
    reason: str,
    chaos_kills: int,
    log_path: Path,
    run_started_at: float = 0.0,
    hook_answers: tuple[str, ...] = (),
    wait_reasons: list[dict[str, str]] | None = None,
    active_intervals: list[tuple[float, float | None]] | None = None,
) -> NodeOutcome:
    """The node's line in the report; `reason` is kept only for a node left behind; the
    observer's moments are given in seconds since `run_started_at` (monotonic)."""
    shadow = _find_shadow(cluster, node.name)
    status = shadow.status if shadow else None
    host = read_host_facts(node.host_dir)
    exits = agent.exits
    return NodeOutcome(
        name=node.name,
        initial_version=from_version,
        final_version=status.current_version if status else None,
        final_state=str(status.current_state) if status else None,
        unschedulable=cluster.nodes.get(node.name).unschedulable,
        reboots=host.reboots if host else 0,
        agent_exit_codes=[e.code for e in exits],
        agent_peak_rss_kib=max((e.peak_rss_kib for e in exits), default=0),
        agent_restarts=agent.restarts,
        unexpected_exits=[e.code for e in exits if not e.acceptable],
        chaos_kills=chaos_kills,
        crash_count=status.crash_count if status else 0,
        phase_seconds={
            PHASES.get(state, state): round(seconds, 2)
            for state, seconds in view.phase_seconds.items()
        },
        reason="" if status and status.current_version == to_version else reason,
        last_failure=last_failure(log_path),
        started_at=_since(view.started_at, run_started_at),
        health_gate=_gate_outcome(cluster, shadow_name(node.name)),
        reboot_hook_failed=any(
            e.reason == "RebootHookFailed" and e.shadow_name == shadow_name(node.name)
            for e in cluster.events.recorded
        ),
        hook_answers=list(hook_answers),
        labels=dict(cluster.nodes.get(node.name).labels),
        wait_reasons=list(wait_reasons or ()),
        active_intervals=list(active_intervals or ()),
        finished_at=(
            _since(view.finished_at, run_started_at)
            if status and status.current_version == to_version
            else None
        ),
        agent_exits=[
            {
                "code": e.code,
                "cause": str(e.cause),
                "sigterm_before_handler": e.sigterm_before_handler,
                "ran_seconds": round(e.ran_seconds, 2),
                "peak_rss_kib": e.peak_rss_kib,
            }
            for e in exits
        ],
    )


def _find_shadow(cluster: SimulatedCluster, node: str) -> Shadow | None:
    try:
        return cluster.shadows.get(shadow_name(node))
    except NotFoundError:
        return None


def _gate_outcome(cluster: SimulatedCluster, shadow: str) -> str | None:
    """`failed` when the controller failed the node's health gate, `passed` when it let the
    node go Idle through it, None when no gate judged it (from the Events it recorded)."""
    reasons = {e.reason for e in cluster.events.recorded if e.shadow_name == shadow}
    if "HealthGateFailed" in reasons:
        return "failed"
    return "passed" if "HealthGatePassed" in reasons else None


def _since(moment: float | None, origin: float) -> float | None:
    return None if moment is None else round(moment - origin, 3)
