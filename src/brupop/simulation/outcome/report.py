"""The outcome of one simulated rollout: per-node facts, the verdict, and its JSON report.

The verdict is strict: every node on the target version, Idle, schedulable, every agent exit
acceptable, no traceback, the concurrency limit never exceeded, and no timeout.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from brupop.domain.policy.update_policy_status import HaltReason
from brupop.domain.reason import Reason
from brupop.domain.states import UpdateState

# REASON codes of a host that cannot take the update: left on its version, it is no failure as
# long as it stayed Idle, was never started and never failed (no backoff against it).
CANNOT_UPDATE = frozenset(reason.value for reason in Reason if reason.cannot_update)

# The phases of one update, named as the summary's columns and the report's `phase_seconds`:
# the time the controller asked for each state, until the node left it.
PHASES: dict[str, str] = {
    UpdateState.STAGED_AND_PERFORMED_UPDATE: "stage",
    UpdateState.REBOOTED_INTO_UPDATE: "reboot",
    UpdateState.MONITORING_UPDATE: "monitor",
    UpdateState.IDLE: "finish",  # asked back to Idle, until the agent reports Idle
}


@dataclass(frozen=True)
class NodeOutcome:
    """What happened to one node."""

    name: str
    initial_version: str
    final_version: str | None
    final_state: str | None
    unschedulable: bool
    reboots: int
    agent_exit_codes: list[int]
    agent_peak_rss_kib: int
    agent_restarts: int = 0
    unexpected_exits: list[int] = field(default_factory=list)
    chaos_kills: int = 0
    crash_count: int = 0
    phase_seconds: dict[str, float] = field(default_factory=dict)  # by PHASES' names
    reason: str = ""
    last_failure: str = ""
    agent_exits: list[dict[str, object]] = field(default_factory=list)
    started_at: float | None = None  # seconds since the run started: first left Idle
    finished_at: float | None = None  # ... last came back to Idle on the target version
    health_gate: str | None = None  # "passed", "failed", or None: never judged by a gate
    reboot_hook_failed: bool = False  # a reboot hook did not answer in time
    hook_answers: list[str] = field(default_factory=list)  # "<phase>.<hook>" --hook answered
    labels: dict[str, str] = field(default_factory=dict)  # the Node's labels at the end
    # The REASON codes and sentences it showed while waiting, first seen first, each once.
    wait_reasons: list[dict[str, str]] = field(default_factory=list)
    # [from, to] seconds since the run started, each span outside Idle; to None: still out.
    active_intervals: list[tuple[float, float | None]] = field(default_factory=list)

    def cannot_update(self) -> str | None:
        """The REASON code of a node whose host cannot take the update and was rightly left
        alone (Idle, schedulable, never started, no crash); None otherwise."""
        code = self.reason.split(":", 1)[0].strip()
        left_alone = (
            self.final_state == UpdateState.IDLE
            and not self.unschedulable
            and self.started_at is None
            and self.crash_count == 0
            and self.final_version == self.initial_version
        )
        return code if left_alone and code in CANNOT_UPDATE else None

    def updated_to(self, target: str) -> bool:
        return (
            self.final_version == target
            and self.final_state == UpdateState.IDLE
            and not self.unschedulable
        )


@dataclass(frozen=True)
class SimulationReport:
    """The whole run; `ok` and `verdict` follow from the rest (see `judge`)."""

    ok: bool
    duration_seconds: float
    max_concurrent_allowed: int | None  # None: unlimited
    max_concurrent_observed: int
    tracebacks: int
    nodes: list[NodeOutcome]
    from_version: str
    to_version: str
    verdict: str  # one line, at most VERDICT_CHARS
    failures: list[str] = field(default_factory=list)
    failures_in_verdict: int = 0  # the first of `failures` the verdict names
    timed_out: bool = False
    chaos_kills_sent: int = 0
    controller_restarts: int = 0
    log_dir: str | None = None
    policy_phase: str | None = None  # the update policy's status.phase; None: no policy
    pauses: list[dict[str, object]] = field(default_factory=list)  # --pause-at/--resume-at
    halted: bool = False  # the controller halted the fleet (the policy's status says so)
    halt_reason: dict[str, str] | None = None  # node, check, detail of the failure that did
    # The run's own clock, when --start-at or --clock-rate moved it: started_at, ended_at (ISO
    # 8601 in the zone a --start-at was read in), zone, rate, fast_forward_seconds.
    clock: dict[str, object] | None = None

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=False)

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.to_json() + "\n", encoding="utf-8")


@dataclass(frozen=True)
class RunFacts:
    """The measurements the verdict is drawn from."""

    duration_seconds: float
    max_concurrent_allowed: int | None
    max_concurrent_observed: int
    tracebacks: int
    nodes: list[NodeOutcome]
    from_version: str
    to_version: str
    timed_out: bool = False
    interrupted: bool = False
    chaos_kills_sent: int = 0
    controller_restarts: int = 0
    log_dir: str | None = None
    policy_phase: str | None = None
    pauses: list[dict[str, object]] = field(default_factory=list)
    halt: HaltReason | None = None
    clock: dict[str, object] | None = None


def judge(facts: RunFacts) -> SimulationReport:
    """Draw the verdict: the list of failures, in the order a person should read them."""
    failures: list[str] = []
    if facts.interrupted:
        failures.append(f"interrupted after {facts.duration_seconds:.0f} s")
    if facts.timed_out:
        failures.append(f"timed out after {facts.duration_seconds:.0f} s")
    limit = facts.max_concurrent_allowed
    if limit is not None and facts.max_concurrent_observed > limit:
        failures.append(
            f"concurrency limit exceeded: {facts.max_concurrent_observed} nodes outside Idle "
            f"at once (limit {limit})"
        )
    for node in facts.nodes:
        failures.extend(_node_failures(node, facts.to_version))
    if facts.tracebacks:
        failures.append(f"{facts.tracebacks} traceback(s) in agent logs")
    updated = sum(node.updated_to(facts.to_version) for node in facts.nodes)
    tally = f"({updated}/{len(facts.nodes)} nodes updated)"
    halt = facts.halt
    named = 0
    if halt is not None:
        detail = f": {halt.detail}" if halt.detail else ""
        failures.insert(0, f"HALTED: node {halt.node} failed {halt.check}{detail}")
        verdict, named = _halted_verdict(tally, halt), 1
    elif failures:
        verdict, named = _fit(f"FAILED {tally}: ", failures)
    else:
        shown = "unlimited" if limit is None else str(limit)
        verdict = (
            f"OK: {updated}/{len(facts.nodes)} nodes updated {facts.from_version} -> "
            f"{facts.to_version} in {facts.duration_seconds:.1f} s, at most "
            f"{facts.max_concurrent_observed} updating at once (limit {shown})"
            + _cannot_update_tally(facts.nodes)
        )
    return SimulationReport(
        ok=not failures,
        duration_seconds=round(facts.duration_seconds, 3),
        max_concurrent_allowed=limit,
        max_concurrent_observed=facts.max_concurrent_observed,
        tracebacks=facts.tracebacks,
        nodes=facts.nodes,
        from_version=facts.from_version,
        to_version=facts.to_version,
        verdict=verdict,
        failures=failures,
        failures_in_verdict=named,
        timed_out=facts.timed_out,
        chaos_kills_sent=facts.chaos_kills_sent,
        controller_restarts=facts.controller_restarts,
        log_dir=facts.log_dir,
        policy_phase=facts.policy_phase,
        pauses=facts.pauses,
        halted=halt is not None,
        halt_reason=halt.model_dump(by_alias=True) if halt is not None else None,
        clock=facts.clock,
    )


# The verdict is one line of at most VERDICT_CHARS: the first failures that fit, and how many
# more the lines above (and the report's `failures`) hold.
VERDICT_CHARS = 200
_HALT_TAIL = "; no node starts until `brupop resume`"


def _halted_verdict(tally: str, halt: HaltReason) -> str:
    head = f"HALTED {tally}: node {halt.node} failed {halt.check}"
    room = VERDICT_CHARS - len(head) - len(_HALT_TAIL) - 2
    detail = f": {_shortened(halt.detail, room)}" if halt.detail and room > 3 else ""
    return head + detail + _HALT_TAIL


def _fit(head: str, failures: list[str]) -> tuple[str, int]:
    """`head` and the first failures that fit in VERDICT_CHARS, then `; and K more`; and how
    many it names."""
    shown: list[str] = []
    for index, failure in enumerate(failures):
        rest = len(failures) - index - 1
        tail = f"; and {rest} more (listed above)" if rest else ""
        candidate = "; ".join([*shown, failure])
        if len(head) + len(candidate) + len(tail) <= VERDICT_CHARS:
            shown.append(failure)
            continue
        if not shown:  # the first alone is too long: shorten it
            shown.append(_shortened(failure, VERDICT_CHARS - len(head) - len(tail)))
            continue
        more = f"; and {len(failures) - len(shown)} more (listed above)"
        return head + "; ".join(shown) + more, len(shown)
    return head + "; ".join(shown), len(shown)


def _shortened(text: str, most: int) -> str:
    return text if len(text) <= most else text[: max(0, most - 3)] + "..."


def _cannot_update_tally(nodes: list[NodeOutcome]) -> str:
    """`; 2 cannot update: 1 no_in_place_updates, 1 no_offer_for_variant` ('' if none)."""
    codes = Counter(code for node in nodes if (code := node.cannot_update()))
    if not codes:
        return ""
    each = ", ".join(f"{count} {code}" for code, count in sorted(codes.items()))
    return f"; {codes.total()} cannot update: {each}"


def reason_failure(node: NodeOutcome, target: str) -> str | None:
    """The failure that says `node` was left behind, naming its REASON code only (the
    summary's line for the node, and the report's `reason`, hold the sentence). A host that
    cannot take the update, rightly left alone, is not left behind."""
    if node.final_version == target or node.cannot_update():
        return None
    code = node.reason.split(":", 1)[0].strip() if node.reason else "no REASON given"
    return f"{node.name} still on {node.final_version or 'unknown'} ({code})"


def _node_failures(node: NodeOutcome, target: str) -> list[str]:
    problems: list[str] = []
    left_behind = reason_failure(node, target)
    if left_behind is not None:
        problems.append(left_behind)
    elif node.final_state != UpdateState.IDLE:
        problems.append(f"{node.name} ended in {node.final_state}")
    if node.unschedulable:
        problems.append(f"{node.name} left cordoned")
    if node.unexpected_exits:
        codes = ", ".join(str(code) for code in node.unexpected_exits)
        problems.append(f"{node.name} agent exited with {codes}")
    return problems
