"""The ServiceAccount watch of local token verification says why it cannot vouch for tokens, in
the words readiness gives, as the agent pod watch does: not listed yet (the account list
fails: RBAC, a cluster down), or the watch keeps failing (restarted over and over)."""

from __future__ import annotations

from collections.abc import Iterator

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.cluster.objects import Listing, ServiceAccount, WatchBookmark, WatchEvent
from brupop.ports.errors import ForbiddenError
from brupop.services.apiserver.authorization.pods import AgentPodMirror
from brupop.services.runtime.supervisor import RestartSchedule
from tests.support.polling import wait_until

QUICK_RESTARTS = RestartSchedule(first_seconds=0.01, cap_seconds=0.05, failing_after=3)


class FailingAccounts:
    """A ServiceAccountSource whose every call raises `error`."""

    def __init__(self, error: Exception) -> None:
        self._error = error

    def list(self) -> Listing[ServiceAccount]:
        raise self._error

    def get(self, name: str) -> ServiceAccount:
        raise self._error

    def watch(
        self, resource_version: str | None, timeout_seconds: float
    ) -> Iterator[WatchEvent[ServiceAccount] | WatchBookmark]:
        raise self._error


def _mirror(error: Exception) -> AgentPodMirror:
    cluster = InMemoryCluster()
    return AgentPodMirror(
        cluster.agent_pods,
        FailingAccounts(error),
        cluster.token_verifier,
        watch_seconds=0.2,
        retry_seconds=0.05,
        restart=QUICK_RESTARTS,
    )


def test_readiness_says_the_accounts_are_not_listed_while_their_list_is_refused() -> None:
    mirror = _mirror(ForbiddenError("serviceaccounts is forbidden"))
    mirror.start()
    try:
        wait_until(
            lambda: mirror.problem == "the service accounts have not been listed yet",
            "the unlisted accounts reported once the keys are loaded and the pods listed",
        )
    finally:
        mirror.stop()


def test_readiness_says_the_account_watch_keeps_failing_when_it_is_restarted_over_and_over() -> (
    None
):
    mirror = _mirror(RuntimeError("a surprise no adapter translates"))
    mirror.start()
    try:
        wait_until(
            lambda: mirror.problem == "the service account watch keeps failing",
            "the watch reported as failing",
        )
    finally:
        mirror.stop()
