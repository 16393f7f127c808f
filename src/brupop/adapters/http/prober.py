"""UrlProber: the HttpProber port over a bounded GET; the body is read up to a small cap and
thrown away, since only the status counts."""

from __future__ import annotations

from brupop.adapters.http.bounded_get import BoundedGetError, bounded_get
from brupop.domain.safety.gate_checks import ProbeAnswer
from brupop.ports.http_prober import HttpProber

PROBE_BODY_MAX_BYTES = 64 * 1024


class UrlProber:
    """Probes real URLs."""

    def probe(self, url: str, timeout_seconds: float) -> ProbeAnswer:
        try:
            answer = bounded_get(url, timeout_seconds, limit=PROBE_BODY_MAX_BYTES)
        except BoundedGetError as error:
            return ProbeAnswer(error=str(error))
        return ProbeAnswer(status=answer.status)


_: HttpProber = UrlProber()
