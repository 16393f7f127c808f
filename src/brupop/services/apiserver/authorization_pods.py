"""The agent pods, mirrored from one watch, and the issuer's keys, loaded at start and re-read when
due: what local token verification checks a token's pod binding against without a call per
request.

A background thread first loads the issuer's keys (retrying, with the reason kept for
readiness), then lists and watches the agent pods of brupop's namespace. A pod's delete event
takes it out of the mirror at once, so every decision the Authorizer cached for it stops
counting on the next request (the Authorizer asks `bound` on every cache hit); so does a pod a
finalizer holds, once its deletionTimestamp is past kube-apiserver's leeway. A second thread
watches the namespace's ServiceAccounts (ServiceAccountMirror) for `account_holds`.
"""

from __future__ import annotations

import threading
from datetime import datetime

import structlog

from brupop.domain.cluster.objects import Pod, WatchEvent, WatchEventType
from brupop.domain.cluster.token_binding import deletion_invalidates
from brupop.ports.errors import PortError
from brupop.ports.token_verifier import AgentPodSource, ServiceAccountSource, TokenVerifier
from brupop.services.apiserver.authorization_accounts import ServiceAccountMirror
from brupop.services.list_watch import ListWatchLoop
from brupop.services.supervisor import RestartPolicy

log = structlog.get_logger(__name__)


class AgentPodMirror:
    """Agent pods by name from one watch; `problem` says why tokens cannot be checked yet."""

    def __init__(
        self,
        source: AgentPodSource,
        accounts: ServiceAccountSource,
        verifier: TokenVerifier,
        *,
        watch_seconds: float = 60.0,
        retry_seconds: float = 2.0,
        restart: RestartPolicy | None = None,
    ) -> None:
        self._verifier = verifier
        self._pods: dict[str, Pod] = {}
        self._lock = threading.Lock()
        self._keys_loaded = False
        self._listed = False
        self._problem: str | None = "the issuer's keys have not been loaded yet"
        # Cached decisions make verifications rare, so the key set is not re-read on their
        # account: once a watch period, when it is due.
        self._loop = ListWatchLoop(
            "agent-pods",
            source,
            relisted=self._relisted,
            apply=self._apply,
            watch_seconds=watch_seconds,
            retry_seconds=retry_seconds,
            restart=restart,
            first=self._load_keys,
            each_watch=verifier.refresh_keys,
        )
        self._accounts = ServiceAccountMirror(
            accounts, watch_seconds=watch_seconds, retry_seconds=retry_seconds, restart=restart
        )

    @property
    def problem(self) -> str | None:
        """Why agents' tokens cannot be verified now (for readiness), or None."""
        if self._loop.failing:
            return "the agent pod watch keeps failing"
        return self._problem or self._accounts.problem

    def pod(self, name: str) -> Pod | None:
        """The agent pod of that name as the watch last saw it; None when the mirror does not
        hold it (not listed yet, just created, or gone: the caller reads the cluster)."""
        with self._lock:
            return self._pods.get(name)

    def bound(self, name: str, uid: str, now: datetime) -> bool:
        """The pod `name` with this `uid` still exists and is not deleted past the leeway (a
        cached decision for it still holds)."""
        with self._lock:
            pod = self._pods.get(name)
        return (
            pod is not None
            and pod.uid == uid
            and not deletion_invalidates(pod.deletion_timestamp, now)
        )

    @property
    def accounts(self) -> ServiceAccountMirror:
        """The namespace's ServiceAccounts, watched beside the pods."""
        return self._accounts

    @property
    def keys_generation(self) -> int:
        """The verifier's key generation: it grows when a key is withdrawn."""
        return self._verifier.keys_generation

    def start(self) -> None:
        """Start the threads that load the keys and watch the pods, and watch the accounts."""
        self._loop.start()
        self._accounts.start()

    def stop(self, wait_seconds: float = 1.0) -> None:
        """Ask the threads to end; they do within one watch period."""
        self._loop.stop(wait_seconds)
        self._accounts.stop(wait_seconds)

    def _load_keys(self) -> None:
        """Until it works: fetch the issuer's keys, saying once (and in readiness) why not."""
        said = False
        while not self._keys_loaded and not self._loop.stopping.is_set():
            try:
                self._verifier.load_keys()
            except PortError as error:
                self._problem = f"the issuer's keys could not be loaded: {error}"
                if not said:
                    log.warning("authorization.issuer_keys_unavailable", error=str(error))
                    said = True
                self._loop.pause()
                continue
            self._keys_loaded = True
            self._problem = None if self._listed else "the agent pods have not been listed yet"
            if said:
                log.info("authorization.issuer_keys_loaded")

    def _apply(self, event: WatchEvent[Pod]) -> None:
        pod = event.object
        with self._lock:
            if event.type is WatchEventType.DELETED:
                self._pods.pop(pod.name, None)
            else:
                self._pods[pod.name] = pod

    def _relisted(self, pods: tuple[Pod, ...]) -> None:
        with self._lock:
            self._pods = {pod.name: pod for pod in pods}
            self._listed = True
        self._problem = None
