"""When a token bound to an object being deleted stops holding, by kube-apiserver's rule.

kube-apiserver refuses a service-account token whose pod (or service account) carries a
deletionTimestamp more than its leeway (60 s) in the past. A pod's deletionTimestamp is the end
of its grace period, so a pod a finalizer holds keeps its tokens for its grace period plus 60 s.
"""

from __future__ import annotations

from datetime import datetime, timedelta

DELETION_LEEWAY = timedelta(seconds=60)
"""How long past its deletionTimestamp an object still vouches for its tokens (kube-apiserver's
JWT leeway)."""


def deletion_invalidates(deletion_timestamp: datetime | None, now: datetime) -> bool:
    """Tokens bound to an object deleted at `deletion_timestamp` no longer hold at `now`."""
    return deletion_timestamp is not None and deletion_timestamp < now - DELETION_LEEWAY
