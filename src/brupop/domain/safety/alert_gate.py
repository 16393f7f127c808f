"""The alert gate: what firing alerts (or an unreachable Prometheus) mean for the rollout.

While an alert that matches every matcher fires (its name not ignored), no node starts and a
node finishing its update fails its health gate. When Prometheus cannot be asked, the gate
fails closed: nothing starts, with the reason shown, and a finishing node waits (it fails only
if the gate's timeout passes first).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from brupop.domain.policy.alert_matcher import AlertMatcher
from brupop.domain.safety.health_gate import CheckOutcome, CheckResult, GateCheck

ALERTS_NAMED_MAX = 3  # a message names a few alerts, then counts the rest


@dataclass(frozen=True)
class FiringAlert:
    """One firing alert: its name and its labels."""

    name: str
    labels: Mapping[str, str] = field(default_factory=dict)


def matching_alerts(
    alerts: Iterable[FiringAlert], matchers: Sequence[AlertMatcher], ignore: Iterable[str]
) -> tuple[FiringAlert, ...]:
    """The alerts that hold the rollout: every matcher satisfied, name not ignored."""
    ignored = frozenset(ignore)
    return tuple(
        alert
        for alert in alerts
        if alert.name not in ignored and all(m.matches(alert.labels) for m in matchers)
    )


@dataclass(frozen=True)
class AlertGateState:
    """What the alert source said: the alerts that hold, or why it could not be asked."""

    firing: tuple[FiringAlert, ...] = ()
    unreachable: str | None = None

    @property
    def holds(self) -> bool:
        """No node may start."""
        return bool(self.firing) or self.unreachable is not None

    @property
    def reason(self) -> str | None:
        """One clause saying why the gate holds; None when it does not."""
        if self.unreachable is not None:
            return f"Prometheus cannot be asked ({self.unreachable}); holding until it answers"
        if not self.firing:
            return None
        names = sorted({alert.name for alert in self.firing})
        shown = ", ".join(names[:ALERTS_NAMED_MAX])
        more = f" and {len(names) - ALERTS_NAMED_MAX} more" if len(names) > ALERTS_NAMED_MAX else ""
        return f"alert{'s' if len(names) > 1 else ''} firing: {shown}{more}"

    def as_check(self) -> CheckResult:
        """The gate's alert check for a finishing node: a firing alert fails it, an unreachable
        Prometheus keeps it waiting, no alert passes it."""
        if self.firing:
            return CheckResult(GateCheck.ALERT_GATE, CheckOutcome.FAILED, self.reason or "")
        if self.unreachable is not None:
            return CheckResult(GateCheck.ALERT_GATE, CheckOutcome.PENDING, self.reason or "")
        return CheckResult(GateCheck.ALERT_GATE, CheckOutcome.PASSED, "no matching alert fires")
