"""HttpProber: one GET for the health gate's HTTP probes, bounded in time and in what it reads."""

from __future__ import annotations

from typing import Protocol

from brupop.domain.safety.gate_checks import ProbeAnswer


class HttpProber(Protocol):
    """GETs a URL and says what status it answered; never raises for a failed probe."""

    def probe(self, url: str, timeout_seconds: float) -> ProbeAnswer:
        """The status `url` answered within `timeout_seconds` (redirects are not followed), or
        the error that kept it from answering (refused, timed out, not HTTP, ...)."""
        ...
