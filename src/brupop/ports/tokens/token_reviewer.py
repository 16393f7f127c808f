"""TokenReviewer: asks the cluster who a bearer token belongs to (authentication.k8s.io/v1)."""

from __future__ import annotations

from typing import Protocol

from brupop.domain.cluster.objects import TokenIdentity


class TokenReviewer(Protocol):
    """One TokenReview per call; caching is the caller's business."""

    def review(self, token: str, audiences: tuple[str, ...]) -> TokenIdentity:
        """The identity behind `token` for `audiences`; UnavailableError when the review fails."""
        ...
