"""Ask the alert source what the alert gate must do now: fail closed when it cannot tell."""

from __future__ import annotations

import structlog

from brupop.domain.policy.update_policy import AlertGateSpec
from brupop.domain.printable import printable
from brupop.domain.safety.alert_gate import AlertGateState
from brupop.ports.monitoring.alert_source import AlertSource, AlertSourceError

log = structlog.get_logger(__name__)

ALERT_TIMEOUT_SECONDS = 5.0  # the longest a pass waits for Prometheus, its budget allowing
UNREACHABLE_MAX_LENGTH = 300  # how much of the source's reason goes into statuses and logs


def read_alert_gate(
    source: AlertSource, gate: AlertGateSpec | None, timeout_seconds: float = ALERT_TIMEOUT_SECONDS
) -> AlertGateState:
    """The firing alerts that hold the rollout under `gate` (None: no alert gate, nothing
    holds), asked within `timeout_seconds`; when the source cannot be asked, a state that
    holds and says why."""
    if gate is None:
        return AlertGateState()
    try:
        firing = source.firing(
            gate.prometheus_url, gate.alert_matchers, gate.ignore, timeout_seconds
        )
    except AlertSourceError as error:
        reason = printable(str(error), UNREACHABLE_MAX_LENGTH)
        log.warning("alert_gate.unreachable", reason=reason)
        return AlertGateState(unreachable=reason)
    return AlertGateState(firing=firing)
