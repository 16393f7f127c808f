"""AlertSource: the alerts firing now, as the alert gate asks for them (Prometheus in a cluster)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from brupop.domain.policy.alert_matcher import AlertMatcher
from brupop.domain.safety.alert_gate import FiringAlert
from brupop.ports.errors import PortError


class AlertSourceError(PortError):
    """The alert source could not be asked or gave an answer that cannot be read; the message
    says why in a sentence (the alert gate then holds, failing closed)."""


class AlertSource(Protocol):
    """Firing alerts that satisfy every matcher, their names not in `ignore`."""

    def firing(
        self,
        source_url: str,
        matchers: Sequence[AlertMatcher],
        ignore: Sequence[str],
        timeout_seconds: float,
    ) -> tuple[FiringAlert, ...]:
        """The matching alerts firing at `source_url` now; AlertSourceError when it cannot
        tell within `timeout_seconds` (the call returns by then) and the adapter's size
        limits."""
        ...
