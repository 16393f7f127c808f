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

from datetime import datetime

import structlog

from brupop.domain.cluster.objects import Pod
from brupop.domain.cluster.token_binding import deletion_invalidates
from brupop.ports.errors import PortError
from brupop.ports.tokens.token_verifier import AgentPodSource, ServiceAccountSource, TokenVerifier
from brupop.services.apiserver.authorization.accounts import ServiceAccountMirror
from brupop.services.runtime.informer import WATCH_SECONDS, Following, Informer
from brupop.services.runtime.mirror import NAME_OF, Mirror, unversioned
from brupop.services.runtime.supervisor import RestartSchedule

log = structlog.get_logger(__name__)


class AgentPodMirror:
    """Agent pods by name from one watch; `problem` says why tokens cannot be checked yet."""

    def __init__(
        self,
        source: AgentPodSource,
        accounts: ServiceAccountSource,
        verifier: TokenVerifier,
        *,
        watch_seconds: float = WATCH_SECONDS,
        retry_seconds: float = 2.0,
        restart: RestartSchedule | None = None,
    ) -> None:
        self._verifier = verifier
        self._keys_loaded = False
        self._problem: str | None = "the issuer's keys have not been loaded yet"
        self._store: Mirror[Pod] = Mirror(NAME_OF, unversioned)
        self._informer = Informer(
            "agent-pods",
            source.list,
            source.watch,
            self._store,
            following=Following(watch_seconds, retry_seconds, restart),
        )
        self._accounts = ServiceAccountMirror(
            accounts, watch_seconds=watch_seconds, retry_seconds=retry_seconds, restart=restart
        )

    @property
    def problem(self) -> str | None:
        """Why agents' tokens cannot be verified now (for readiness), or None."""
        if self._informer.failing:
            return "the agent pod watch keeps failing"
        return self._problem or self._accounts.problem

    def pod(self, name: str) -> Pod | None:
        """The agent pod of that name as the watch last saw it; None when the mirror does not
        hold it (not listed yet, just created, or gone: the caller reads the cluster)."""
        return self._store.get(name)

    def bound(self, name: str, uid: str, now: datetime) -> bool:
        """The pod `name` with this `uid` still exists and is not deleted past the leeway (a
        cached decision for it still holds)."""
        pod = self._store.get(name)
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
        """Start the threads that load the keys and watch the pods, and watch the accounts.
        Cached decisions make verifications rare, so the key set is not re-read on their
        account: before each watch of the pods, when it is due."""
        self._informer.start(self._listed, first=self._load_keys, each_watch=self._refresh_keys)
        self._accounts.start()

    def stop(self, wait_seconds: float = 1.0) -> None:
        """Ask the threads to end; they do once their watch next yields or ends."""
        self._informer.stop(wait_seconds)
        self._accounts.stop(wait_seconds)

    def _load_keys(self) -> None:
        """Until it works: fetch the issuer's keys, saying once (and in readiness) why not."""
        said = False
        while not self._keys_loaded and not self._informer.stopping.is_set():
            try:
                self._verifier.load_keys()
            except PortError as error:
                self._problem = f"the issuer's keys could not be loaded: {error}"
                if not said:
                    log.warning("authorization.issuer_keys_unavailable", error=str(error))
                    said = True
                self._informer.pause()
                continue
            self._keys_loaded = True
            self._problem = (
                None if self._store.filled else "the agent pods have not been listed yet"
            )
            if said:
                log.info("authorization.issuer_keys_loaded")

    def _refresh_keys(self) -> None:
        self._verifier.refresh_keys()

    def _listed(self) -> None:
        """After a list or an event: the pods are known from now on."""
        if self._keys_loaded:
            self._problem = None
