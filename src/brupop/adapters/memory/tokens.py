"""InMemoryTokenReviewer: service-account tokens bound to pods, reviewed like TokenReview does:
refused once the pod or the service account is gone (or re-created), or deleted more than
kube-apiserver's leeway ago."""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta

from brupop.adapters.memory.store import VersionedStore
from brupop.domain.cluster.objects import Pod, ServiceAccount, TokenIdentity
from brupop.domain.cluster.token_binding import deletion_invalidates
from brupop.ports.clock import Clock
from brupop.ports.errors import UnavailableError


@dataclass(frozen=True)
class _Grant:
    username: str
    audiences: tuple[str, ...]
    expires_at: datetime
    pod_key: str | None
    pod_uid: str | None
    account_key: str | None = None
    account_uid: str | None = None


class InMemoryTokenReviewer:
    """The TokenReviewer port, and the TokenVerifier port's fake (the same checks, and the pod
    binding); counts reviews so tests can check the apiserver's cache."""

    def __init__(
        self,
        clock: Clock,
        pods: VersionedStore[Pod],
        accounts: VersionedStore[ServiceAccount],
    ) -> None:
        self._clock = clock
        self._pods = pods
        self._accounts = accounts
        self._grants: dict[str, _Grant] = {}
        self._lock = threading.Lock()
        self.review_count = 0
        self.unavailable = False
        self._withdrawn = 0

    def issue_for_pod(self, pod: Pod, audiences: tuple[str, ...], ttl_seconds: float) -> str:
        account = pod.service_account or "default"
        account_key = f"{pod.namespace}/{account}"
        held = self._accounts.find(account_key)
        grant = _Grant(
            username=f"system:serviceaccount:{pod.namespace}:{account}",
            audiences=audiences,
            expires_at=self._clock.now() + timedelta(seconds=ttl_seconds),
            pod_key=f"{pod.namespace}/{pod.name}",
            pod_uid=pod.uid,
            account_key=account_key if held is not None else None,
            account_uid=held.uid if held is not None else None,
        )
        return self._remember(grant)

    def issue_for_user(self, username: str, audiences: tuple[str, ...], ttl_seconds: float) -> str:
        expires = self._clock.now() + timedelta(seconds=ttl_seconds)
        return self._remember(_Grant(username, audiences, expires, None, None))

    def load_keys(self) -> None:
        """The TokenVerifier port's start: nothing to fetch, unless set to fail."""
        if self.unavailable:
            raise UnavailableError("the in-memory cluster is set to fail")

    def refresh_keys(self) -> None:
        """Nothing to fetch: tokens here are withdrawn at once (`withdraw`)."""

    @property
    def keys_generation(self) -> int:
        return self._withdrawn

    def withdraw(self, token: str) -> None:
        """Stop accepting `token`, as when the key that signed it is withdrawn."""
        with self._lock:
            self._grants.pop(token, None)
            self._withdrawn += 1

    def review(self, token: str, audiences: tuple[str, ...]) -> TokenIdentity:
        with self._lock:
            self.review_count += 1
            grant = self._grants.get(token)
        if self.unavailable:
            raise UnavailableError("TokenReview failed: the in-memory cluster is set to fail")
        if grant is None or grant.expires_at <= self._clock.now():
            return TokenIdentity(authenticated=False, error="invalid bearer token")
        shared = tuple(a for a in audiences if a in grant.audiences)
        if audiences and not shared:
            return TokenIdentity(authenticated=False, error="token audiences do not match")
        if not self._account_holds(grant):
            return TokenIdentity(authenticated=False, error="the service account was deleted")
        pod = self._pods.find(grant.pod_key) if grant.pod_key else None
        if grant.pod_key is not None and (
            pod is None
            or pod.uid != grant.pod_uid
            or deletion_invalidates(pod.deletion_timestamp, self._clock.now())
        ):
            return TokenIdentity(authenticated=False, error="the token's pod no longer exists")
        return TokenIdentity(
            authenticated=True,
            username=grant.username,
            audiences=shared or grant.audiences,
            pod_name=pod.name if pod else None,
            pod_uid=pod.uid if pod else None,
            node_name=pod.node_name if pod else None,
            expires_at=grant.expires_at,
            service_account_uid=grant.account_uid,
        )

    def _account_holds(self, grant: _Grant) -> bool:
        """The grant's service account is the one it was issued for and not long deleted."""
        if grant.account_key is None:
            return True
        held = self._accounts.find(grant.account_key)
        return (
            held is not None
            and held.uid == grant.account_uid
            and not deletion_invalidates(held.deletion_timestamp, self._clock.now())
        )

    def _remember(self, grant: _Grant) -> str:
        token = secrets.token_urlsafe(24)
        with self._lock:
            self._grants[token] = grant
        return token
