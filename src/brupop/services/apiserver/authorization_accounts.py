"""The ServiceAccounts of brupop's namespace, mirrored from one watch: a token names its account
by UID, so it holds only while an account of that name and UID exists (as TokenReview checks).

Deleting the agent ServiceAccount, or re-creating it under its name, reaches the mirror with the
watch event, and every token of the old account is refused from then on. An account the mirror
does not hold, or holds with another UID, is read once from the cluster (the watch may lag).
"""

from __future__ import annotations

import threading

from brupop.domain.cluster.objects import ServiceAccount, WatchEvent, WatchEventType
from brupop.ports.errors import NotFoundError
from brupop.ports.token_verifier import ServiceAccountSource
from brupop.services.list_watch import ListWatchLoop
from brupop.services.supervisor import RestartPolicy


class ServiceAccountMirror:
    """ServiceAccounts by name from one watch; `problem` says why it cannot vouch for any yet."""

    def __init__(
        self,
        source: ServiceAccountSource,
        *,
        watch_seconds: float = 60.0,
        retry_seconds: float = 2.0,
        restart: RestartPolicy | None = None,
    ) -> None:
        self._source = source
        self._accounts: dict[str, ServiceAccount] = {}
        self._lock = threading.Lock()
        self._listed = False
        self._loop = ListWatchLoop(
            "service-accounts",
            source,
            relisted=self._relisted,
            apply=self._apply,
            watch_seconds=watch_seconds,
            retry_seconds=retry_seconds,
            restart=restart,
        )

    @property
    def problem(self) -> str | None:
        """Why tokens cannot be checked against their service account now, or None."""
        if self._loop.failing:
            return "the service account watch keeps failing"
        return None if self._listed else "the service accounts have not been listed yet"

    def account(self, name: str) -> ServiceAccount | None:
        """The account `name` as the watch last saw it; None when the mirror does not hold it."""
        with self._lock:
            return self._accounts.get(name)

    def read(self, name: str) -> ServiceAccount | None:
        """The account `name` read from the cluster (one GET: the mirror may lag); None when
        there is none."""
        try:
            return self._source.get(name)
        except NotFoundError:
            return None

    def start(self) -> None:
        self._loop.start()

    def stop(self, wait_seconds: float = 1.0) -> None:
        self._loop.stop(wait_seconds)

    def _apply(self, event: WatchEvent[ServiceAccount]) -> None:
        account = event.object
        with self._lock:
            if event.type is WatchEventType.DELETED:
                if self._accounts.get(account.name, account).uid == account.uid:
                    self._accounts.pop(account.name, None)
            else:
                self._accounts[account.name] = account

    def _relisted(self, accounts: tuple[ServiceAccount, ...]) -> None:
        with self._lock:
            self._accounts = {account.name: account for account in accounts}
            self._listed = True
