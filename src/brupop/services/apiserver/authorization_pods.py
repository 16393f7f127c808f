"""The agent pods, mirrored from one watch, and the issuer's keys, loaded at start and re-read when
due: what local token verification checks a token's pod binding against without a call per
request.

A background thread first loads the issuer's keys (retrying, with the reason kept for
readiness), then lists and watches the agent pods of brupop's namespace. A pod's delete event
takes it out of the mirror at once, so every decision the Authorizer cached for it stops
counting on the next request (the Authorizer asks `bound` on every cache hit).
"""

from __future__ import annotations

import threading

import structlog

from brupop.domain.cluster.objects import Pod, WatchBookmark, WatchEventType
from brupop.ports.errors import PortError, WatchExpiredError
from brupop.ports.token_verifier import AgentPodSource, TokenVerifier
from brupop.services.supervisor import RestartPolicy, Supervisor

log = structlog.get_logger(__name__)


class AgentPodMirror:
    """Agent pods by name from one watch; `problem` says why tokens cannot be checked yet."""

    def __init__(
        self,
        source: AgentPodSource,
        verifier: TokenVerifier,
        *,
        watch_seconds: float = 60.0,
        retry_seconds: float = 2.0,
        restart: RestartPolicy | None = None,
    ) -> None:
        self._source = source
        self._verifier = verifier
        self._watch_seconds = watch_seconds
        self._retry_seconds = retry_seconds
        self._pods: dict[str, Pod] = {}
        self._lock = threading.Lock()
        self._keys_loaded = False
        self._listed = False
        self._problem: str | None = "the issuer's keys have not been loaded yet"
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._supervisor = Supervisor("agent-pods", self._run, self._stopping, policy=restart)

    @property
    def problem(self) -> str | None:
        """Why agents' tokens cannot be verified now (for readiness), or None."""
        if self._supervisor.failing:
            return "the agent pod watch keeps failing"
        return self._problem

    def pod(self, name: str) -> Pod | None:
        """The agent pod of that name as the watch last saw it; None when the mirror does not
        hold it (not listed yet, just created, or gone: the caller reads the cluster)."""
        with self._lock:
            return self._pods.get(name)

    def bound(self, name: str, uid: str) -> bool:
        """The pod `name` with this `uid` still exists (a cached decision for it still holds)."""
        with self._lock:
            pod = self._pods.get(name)
            return pod is not None and pod.uid == uid

    @property
    def keys_generation(self) -> int:
        """The verifier's key generation: it grows when a key is withdrawn."""
        return self._verifier.keys_generation

    def start(self) -> None:
        """Start the thread that loads the keys and then watches the pods."""
        if self._thread is None:
            self._thread = self._supervisor.start()

    def stop(self, wait_seconds: float = 1.0) -> None:
        """Ask the thread to end; it does within one watch period."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(wait_seconds)

    def _run(self) -> None:
        self._load_keys()
        version: str | None = None
        while not self._stopping.is_set():
            try:
                if version is None:
                    listing = self._source.list()
                    self._relisted(listing.items)
                    version = listing.resource_version
                # Cached decisions make verifications rare, so the key set is not re-read on
                # their account: once a watch period, when it is due.
                self._verifier.refresh_keys()
                for event in self._source.watch(version, self._watch_seconds):
                    version = event.resource_version or version
                    if not isinstance(event, WatchBookmark):
                        self._apply(event.type, event.object)
                    if self._stopping.is_set():
                        return
            except WatchExpiredError:
                version = None
            except PortError as error:
                log.warning("agent_pods.watch_failed", error=str(error))
                version = None
                self._stopping.wait(self._retry_seconds)

    def _load_keys(self) -> None:
        """Until it works: fetch the issuer's keys, saying once (and in readiness) why not."""
        said = False
        while not self._keys_loaded and not self._stopping.is_set():
            try:
                self._verifier.load_keys()
            except PortError as error:
                self._problem = f"the issuer's keys could not be loaded: {error}"
                if not said:
                    log.warning("authorization.issuer_keys_unavailable", error=str(error))
                    said = True
                self._stopping.wait(self._retry_seconds)
                continue
            self._keys_loaded = True
            self._problem = None if self._listed else "the agent pods have not been listed yet"
            if said:
                log.info("authorization.issuer_keys_loaded")

    def _apply(self, kind: WatchEventType, pod: Pod) -> None:
        with self._lock:
            if kind is WatchEventType.DELETED:
                self._pods.pop(pod.name, None)
            else:
                self._pods[pod.name] = pod

    def _relisted(self, pods: tuple[Pod, ...]) -> None:
        with self._lock:
            self._pods = {pod.name: pod for pod in pods}
            self._listed = True
        self._problem = None
