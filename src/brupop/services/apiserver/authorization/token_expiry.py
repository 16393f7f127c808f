"""When a bearer token expires, read from its JWT `exp` claim.

TokenReview does not say when a token expires; the token itself does. It is read only after the
review accepted the token (so the claim is genuine) and only to end a cache entry in time.
"""

from __future__ import annotations

import base64
import binascii
import json
from datetime import UTC, datetime


def token_expiry(token: str) -> datetime | None:
    """The `exp` of a JWT, or None when the token is not a JWT with a numeric `exp`."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    payload = parts[1] + "=" * (-len(parts[1]) % 4)
    try:
        claims = json.loads(base64.urlsafe_b64decode(payload))
    except (ValueError, binascii.Error, RecursionError):
        return None
    expiry = claims.get("exp") if isinstance(claims, dict) else None
    if isinstance(expiry, bool) or not isinstance(expiry, int | float):
        return None
    try:
        return datetime.fromtimestamp(expiry, UTC)
    except (OverflowError, OSError, ValueError):
        return None
