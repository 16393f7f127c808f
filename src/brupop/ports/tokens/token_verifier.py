"""TokenVerifier: checks a projected service-account token here, with the issuer's public keys.

It answers like a TokenReviewer (the signature, issuer, audience and times are checked; the pod
and node it is bound to come back) without a call to the cluster per token. Whether the bound
pod and the service account still exist is the business of the mirrors fed by AgentPodSource
and ServiceAccountSource, not the verifier's.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from brupop.domain.cluster.objects import (
    Listing,
    Pod,
    ServiceAccount,
    TokenIdentity,
    WatchBookmark,
    WatchEvent,
)


class TokenVerifier(Protocol):
    """Local verification of bearer tokens; refusals are `authenticated=False` identities."""

    def review(self, token: str, audiences: tuple[str, ...]) -> TokenIdentity:
        """The identity behind `token` for `audiences`; UnavailableError when the issuer's
        keys could not be had at all."""
        ...

    def load_keys(self) -> None:
        """Fetch the issuer's keys now (at start); UnavailableError, naming why, on failure."""
        ...

    def refresh_keys(self) -> None:
        """Fetch the keys again if they are older than their refresh period (a failure keeps
        the old keys and is logged; nothing is raised)."""
        ...

    @property
    def keys_generation(self) -> int:
        """Grows each time the issuer withdrew a key: what was decided under an older
        generation may rest on a key that no longer signs."""
        ...


class AgentPodSource(Protocol):
    """The agent pods of brupop's namespace (label-selected), listed and watched."""

    def list(self) -> Listing[Pod]:
        """Every agent pod and the resourceVersion to watch from."""
        ...

    def watch(
        self, resource_version: str | None, timeout_seconds: float
    ) -> Iterator[WatchEvent[Pod] | WatchBookmark]:
        """Changes after `resource_version` until the timeout; WatchExpiredError: re-list."""
        ...


class ServiceAccountSource(Protocol):
    """The ServiceAccounts of brupop's namespace, listed and watched."""

    def list(self) -> Listing[ServiceAccount]:
        """Every ServiceAccount of the namespace and the resourceVersion to watch from."""
        ...

    def get(self, name: str) -> ServiceAccount:
        """The namespace's ServiceAccount `name`; NotFoundError when there is none."""
        ...

    def watch(
        self, resource_version: str | None, timeout_seconds: float
    ) -> Iterator[WatchEvent[ServiceAccount] | WatchBookmark]:
        """Changes after `resource_version` until the timeout; WatchExpiredError: re-list."""
        ...
