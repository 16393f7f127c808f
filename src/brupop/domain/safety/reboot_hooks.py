"""Reboot hooks: the annotation contract between the controller and whatever acts around a
node's reboot (a DaemonSet, an operator, a person with `kubectl`).

Before a staged node may reboot, the controller labels its Node
`brupop.bottlerocket.aws/before-reboot=true` and waits until the Node carries
`brupop.bottlerocket.aws/before-reboot.<name>=done` for every configured hook; after the
reboot, while the node is in MonitoringUpdate, the same with `after-reboot`. Once every hook
answered (or the phase failed) the label and those annotations are removed. Pure: the Node's
annotations, `now` and when the phase began come in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from brupop.domain.policy.update_policy import RebootHooksSpec
from brupop.domain.safety.health_gate import GateVerdict
from brupop.domain.shadow import Shadow
from brupop.domain.states import UpdateState
from brupop.domain.timestamps import later

HOOK_PREFIX = "brupop.bottlerocket.aws/"
HOOK_LABEL_VALUE = "true"
HOOK_DONE = "done"


class HookPhase(StrEnum):
    """When a hook runs; the value is the label's name after the prefix."""

    BEFORE_REBOOT = "before-reboot"
    AFTER_REBOOT = "after-reboot"

    @property
    def label(self) -> str:
        """The Node label that asks this phase's hooks to act."""
        return f"{HOOK_PREFIX}{self.value}"

    def done_annotation(self, hook: str) -> str:
        """The Node annotation by which the hook `hook` answers."""
        return f"{HOOK_PREFIX}{self.value}.{hook}"

    @property
    def check(self) -> str:
        """The check name failures are counted and reported under."""
        return "beforeRebootHook" if self is HookPhase.BEFORE_REBOOT else "afterRebootHook"

    @property
    def words(self) -> str:
        return self.value.replace("-", " ")

    @property
    def event_reason(self) -> str:
        """The Event recorded when the controller asks this phase's hooks to act."""
        return "BeforeRebootHooks" if self is HookPhase.BEFORE_REBOOT else "AfterRebootHooks"


def hook_phase(shadow: Shadow) -> HookPhase | None:
    """The hook phase a node stands in: staged and waiting to be asked to reboot, or rebooted
    and monitored; None elsewhere (the agent has not reported the state asked for)."""
    status = shadow.status
    if status is None or status.current_state is not shadow.spec.state:
        return None
    if status.current_state is UpdateState.STAGED_AND_PERFORMED_UPDATE:
        return HookPhase.BEFORE_REBOOT
    if status.current_state is UpdateState.MONITORING_UPDATE:
        return HookPhase.AFTER_REBOOT
    return None


def hooks_of(hooks: RebootHooksSpec | None, phase: HookPhase) -> tuple[str, ...]:
    """The hook names configured for `phase`."""
    if hooks is None:
        return ()
    return hooks.before_reboot if phase is HookPhase.BEFORE_REBOOT else hooks.after_reboot


@dataclass(frozen=True)
class HookDecision:
    """The phase's verdict, the hook waited for (None once all answered) and the deadline."""

    phase: HookPhase
    verdict: GateVerdict
    deadline: datetime
    waiting_for: str | None = None
    asked: bool = False  # the Node was labelled in this pass (the phase's hooks asked to act)

    @property
    def message(self) -> str:
        """One sentence for a person: which hook is awaited, or which did not answer."""
        if self.verdict is GateVerdict.PASS or self.waiting_for is None:
            return f"{self.phase.words} hooks done"
        answer = f"{self.phase.done_annotation(self.waiting_for)}={HOOK_DONE}"
        if self.verdict is GateVerdict.WAIT:
            return f"waiting for {self.phase.words} hook {self.waiting_for} ({answer})"
        until = self.deadline.isoformat(timespec="seconds")
        return f"{self.phase.words} hook {self.waiting_for} did not answer {answer} by {until}"


def decide_hooks(
    phase: HookPhase,
    hooks: Sequence[str],
    annotations: Mapping[str, str],
    *,
    since: datetime,
    timeout_seconds: float,
    now: datetime,
) -> HookDecision:
    """PASS when every hook answered `done`; else WAIT naming the first that has not, until
    `timeout_seconds` after `since`, then FAIL naming it."""
    deadline = later(since, timedelta(seconds=timeout_seconds))
    missing = next(
        (h for h in hooks if annotations.get(phase.done_annotation(h)) != HOOK_DONE), None
    )
    if missing is None:
        return HookDecision(phase, GateVerdict.PASS, deadline)
    verdict = GateVerdict.FAIL if now >= deadline else GateVerdict.WAIT
    return HookDecision(phase, verdict, deadline, missing)


def hook_cleanup(
    phase: HookPhase, hooks: Sequence[str]
) -> tuple[dict[str, str | None], dict[str, str | None]]:
    """The label and annotation changes that remove the phase's marks from the Node."""
    return {phase.label: None}, {phase.done_annotation(h): None for h in hooks}
