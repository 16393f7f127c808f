"""DrainPolicySource: the `drain` section of the `default` update policy, as a drain starts.

Read through the UpdatePolicyRepository port and kept for a few seconds, so a wave of drains
costs one read. A policy that cannot be used (absent, a spec that does not validate, an API
error) means the environment's drain settings; that is logged once when it starts being the
case (and once more when it changes), never with a traceback and never at every drain. So is a
`forceNamespaces` that names protected namespaces (see DrainRules): a WARN once per change.
"""

from __future__ import annotations

import threading

import structlog

from brupop.domain.policy.drain_rules import (
    CLUSTER_NAMESPACES,
    FORCE_ALLOWANCE_SETTING,
    DrainRules,
    drain_rules,
)
from brupop.domain.policy.policy_object import PolicyObjectError
from brupop.domain.policy.scheduling_policy import DrainSpec
from brupop.domain.policy.update_policy import DEFAULT_POLICY_NAME
from brupop.ports.clock import Clock
from brupop.ports.cluster.update_policy_repository import UpdatePolicyRepository
from brupop.ports.errors import NotFoundError, PortError

log = structlog.get_logger(__name__)

DEFAULT_CACHE_SECONDS = 5.0
MAX_CACHE_SECONDS = 300.0


class DrainPolicySource:
    """The drain section in force (None: the environment's), read at most once per interval."""

    def __init__(
        self,
        policies: UpdatePolicyRepository,
        clock: Clock,
        *,
        cache_seconds: float = DEFAULT_CACHE_SECONDS,
        protected_namespaces: frozenset[str] = CLUSTER_NAMESPACES,
    ) -> None:
        if not 0 <= cache_seconds <= MAX_CACHE_SECONDS:
            raise ValueError(f"cache_seconds must be from 0 to {MAX_CACHE_SECONDS:g}")
        self._policies = policies
        self._clock = clock
        self._cache_seconds = cache_seconds
        self._protected = protected_namespaces
        self._lock = threading.Lock()
        self._read_at: float | None = None
        self._drain: DrainSpec | None = None
        self._outcome: tuple[str, object] | None = None
        self._refused: frozenset[str] = frozenset()

    def rules(self, environment_timeout_seconds: float) -> DrainRules:
        """The rules of a drain starting now: the policy's section over the environment's
        timeout, never forcing the protected namespaces."""
        return drain_rules(self.current(), environment_timeout_seconds, self._protected)

    def current(self) -> DrainSpec | None:
        """The policy's `drain` section, or None when the environment's settings apply."""
        with self._lock:  # concurrent drains starting together share one read
            now = self._clock.monotonic()
            if self._read_at is None or now - self._read_at >= self._cache_seconds:
                self._drain = self._read()
                self._read_at = now
            return self._drain

    def _read(self) -> DrainSpec | None:
        try:
            policy = self._policies.get()
        except NotFoundError:
            self._tell(("absent", None), False, "drain.policy_absent")
            return None
        except (PortError, PolicyObjectError) as error:
            self._tell(
                ("error", None),
                True,
                "drain.policy_unreadable",
                error=str(error),
                using="the environment's drain settings until a read succeeds",
            )
            return None
        if policy.spec is None:
            self._tell(
                ("invalid", policy.problem),
                True,
                "drain.policy_invalid",
                problem=policy.problem,
                using="the environment's drain settings",
            )
            return None
        drain = policy.spec.drain
        self._tell(("read", drain), False, "drain.policy_in_force", **_described(drain))
        self._tell_refused(drain_rules(drain, 0.0, self._protected).refused_namespaces)
        return drain

    def _tell_refused(self, refused: frozenset[str]) -> None:
        """Warn when the policy starts (or goes on, differently) to force protected namespaces."""
        if refused == self._refused:
            return
        self._refused = refused
        if refused:
            log.warning(
                "drain.force_namespaces_refused",
                policy=DEFAULT_POLICY_NAME,
                namespaces=sorted(refused),
                reason="the cluster's and brupop's own namespaces are never forced unless "
                f"the apiserver's {FORCE_ALLOWANCE_SETTING} lists them",
            )

    def _tell(
        self, outcome: tuple[str, object], warn: bool, message: str, **fields: object
    ) -> None:
        """Log `message` only when the outcome differs from the last read's."""
        if outcome == self._outcome:
            return
        self._outcome = outcome
        (log.warning if warn else log.info)(message, policy=DEFAULT_POLICY_NAME, **fields)


def _described(drain: DrainSpec | None) -> dict[str, object]:
    if drain is None:
        return {"drain": "the environment's (the policy has no drain section)"}
    return {"drain": drain.model_dump(mode="json", exclude_defaults=True) or "the defaults"}
