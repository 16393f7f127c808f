"""The ServiceAccounts of brupop's namespace, mirrored from one watch: a token names its account
by UID, so it holds only while an account of that name and UID exists (as TokenReview checks).

Deleting the agent ServiceAccount, or re-creating it under its name, reaches the mirror with the
watch event, and every token of the old account is refused from then on. An account the mirror
does not hold, or holds with another UID, is read once from the cluster (the watch may lag).
"""

from __future__ import annotations

from brupop.domain.cluster.objects import ServiceAccount
from brupop.ports.errors import NotFoundError
from brupop.ports.tokens.token_verifier import ServiceAccountSource
from brupop.services.runtime.informer import WATCH_SECONDS, Following, Informer
from brupop.services.runtime.mirror import NAME_OF, Mirror, unversioned
from brupop.services.runtime.supervisor import RestartSchedule


class ServiceAccountMirror:
    """ServiceAccounts by name from one watch; `problem` says why it cannot vouch for any yet."""

    def __init__(
        self,
        source: ServiceAccountSource,
        *,
        watch_seconds: float = WATCH_SECONDS,
        retry_seconds: float = 2.0,
        restart: RestartSchedule | None = None,
    ) -> None:
        self._source = source
        self._store: Mirror[ServiceAccount] = Mirror(NAME_OF, unversioned)
        self._informer = Informer(
            "service-accounts",
            source.list,
            source.watch,
            self._store,
            following=Following(watch_seconds, retry_seconds, restart),
        )

    @property
    def problem(self) -> str | None:
        """Why tokens cannot be checked against their service account now, or None."""
        if self._informer.failing:
            return "the service account watch keeps failing"
        return None if self._store.filled else "the service accounts have not been listed yet"

    def account(self, name: str) -> ServiceAccount | None:
        """The account `name` as the watch last saw it; None when the mirror does not hold it."""
        return self._store.get(name)

    def read(self, name: str) -> ServiceAccount | None:
        """The account `name` read from the cluster (one GET: the mirror may lag); None when
        there is none."""
        try:
            return self._source.get(name)
        except NotFoundError:
            return None

    def start(self) -> None:
        self._informer.start()

    def stop(self, wait_seconds: float = 1.0) -> None:
        self._informer.stop(wait_seconds)
