"""Ask the alert source what the alert gate must do now: fail closed when it cannot tell."""

from __future__ import annotations

import structlog

from brupop.domain.policy.update_policy import AlertGate
from brupop.domain.safety.alert_gate import AlertGateState
from brupop.ports.alert_source import AlertSource, AlertSourceError

log = structlog.get_logger(__name__)


def read_alert_gate(source: AlertSource, gate: AlertGate | None) -> AlertGateState:
    """The firing alerts that hold the rollout under `gate` (None: no alert gate, nothing
    holds); when the source cannot be asked, a state that holds and says why."""
    if gate is None:
        return AlertGateState()
    try:
        firing = source.firing(gate.prometheus_url, gate.alert_matchers, gate.ignore)
    except AlertSourceError as error:
        log.warning("alert_gate.unreachable", reason=str(error))
        return AlertGateState(unreachable=str(error))
    return AlertGateState(firing=firing)
