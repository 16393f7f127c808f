"""Whether the pod and the ServiceAccount a token is bound to still vouch for it, as TokenReview
checks: present with the UIDs the token names, and not deleted past kube-apiserver's leeway.

With local verification both are looked up in the watch-fed mirrors; one the mirror does not
hold costs one GET (it may be too new for the watch). A UID found gone is remembered (bounded
in count and time; a UID never comes back), so a replayed token of a deleted pod or account
costs no further call: without this, each of its requests cost kube-apiserver a GET.
"""

from __future__ import annotations

from datetime import datetime

from brupop.domain.cluster.objects import Pod, ServiceAccount, TokenIdentity
from brupop.domain.cluster.token_binding import deletion_invalidates
from brupop.ports.clock import Clock
from brupop.ports.cluster.pod_repository import PodRepository
from brupop.ports.errors import NotFoundError
from brupop.services.apiserver.authorization.cache import ExpiringCache
from brupop.services.apiserver.authorization.errors import UnauthenticatedError
from brupop.services.apiserver.authorization.pods import AgentPodMirror

GONE_KEPT = 4096
"""UIDs of pods and accounts found gone that are remembered (the oldest go first)."""
GONE_SECONDS = 600.0
"""How long a UID found gone is remembered; then a replay costs one GET again."""


class TokenBindings:
    """Looks up a verified token's pod and checks its ServiceAccount, remembering refusals."""

    def __init__(
        self,
        pods: PodRepository,
        namespace: str,
        clock: Clock,
        service_account: str,
        mirror: AgentPodMirror | None,
    ) -> None:
        self._pods = pods
        self._namespace = namespace
        self._clock = clock
        self._service_account = service_account
        self._mirror = mirror
        self._gone: ExpiringCache[bool] = ExpiringCache(clock, GONE_KEPT)

    def pod(self, identity: TokenIdentity) -> Pod | None:
        """The token's pod, or None when it is gone (deleted, re-created, or deleted past the
        leeway while a finalizer holds it)."""
        name, uid = identity.pod_name or "", identity.pod_uid
        mirrored = self._mirror.pod(name) if self._mirror is not None else None
        if mirrored is not None and not _same(mirrored.uid, uid):
            return None  # the mirror may lag a re-created pod: refused, not remembered
        if self._known_gone(uid):
            return None
        pod = mirrored if mirrored is not None else self._read_pod(name)
        if pod is None or not _same(pod.uid, uid) or self._deleted(pod.deletion_timestamp):
            self._remember_gone(uid)
            return None
        return pod

    def check_account(self, identity: TokenIdentity) -> None:
        """UnauthenticatedError unless the agent ServiceAccount with the token's UID exists
        (local verification only: TokenReview checks it itself)."""
        if self._mirror is None:
            return
        uid = identity.service_account_uid
        accounts = self._mirror.accounts
        if self._vouches(accounts.account(self._service_account), uid):
            return
        if uid is not None and not self._known_gone(uid):
            if self._vouches(accounts.read(self._service_account), uid):
                return
            self._remember_gone(uid)
        raise UnauthenticatedError("the token's service account was deleted or re-created")

    def still_bound(self, pod_name: str, pod_uid: str, account_uid: str | None) -> bool:
        """A cached decision's pod and account are still in the mirrors as they were (no
        cluster call: the caller decides afresh when not)."""
        mirror = self._mirror
        if mirror is None:
            return True
        now = self._clock.now()
        account = mirror.accounts.account(self._service_account)
        return mirror.bound(pod_name, pod_uid, now) and self._vouches(account, account_uid)

    def _vouches(self, account: ServiceAccount | None, uid: str | None) -> bool:
        return (
            account is not None
            and uid is not None
            and account.uid == uid
            and not self._deleted(account.deletion_timestamp)
        )

    def _deleted(self, deletion_timestamp: datetime | None) -> bool:
        return deletion_invalidates(deletion_timestamp, self._clock.now())

    def _read_pod(self, name: str) -> Pod | None:
        try:
            return self._pods.get(self._namespace, name)
        except NotFoundError:
            return None

    def _known_gone(self, uid: str | None) -> bool:
        return uid is not None and self._gone.get(uid) is not None

    def _remember_gone(self, uid: str | None) -> None:
        if uid is not None:
            self._gone.put(uid, True, GONE_SECONDS)


def _same(found_uid: str, token_uid: str | None) -> bool:
    """The object is the token's (a token that names no UID matches any)."""
    return token_uid is None or found_uid == token_uid
