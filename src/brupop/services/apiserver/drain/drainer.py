"""Drain a node like `kubectl drain`: cordon, evict (at most five at a time), wait until gone.

Every wait is bounded: evictions a PodDisruptionBudget refuses are retried at an interval until
the drain timeout, evicted pods get the pod-deletion timeout to disappear. A drain never reports
success while a pod that had to leave is still on the node, except for the pods the update
policy's `drain.onTimeout: force` deleted at the timeout; a failure names the pods left and the
budgets that hold them. The policy's `drain` section, read as the drain starts, sets the timeout
and the grace period evictions ask for (see DrainRules).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import NamedTuple

import structlog

from brupop.domain.cluster.objects import Pod
from brupop.domain.policy.drain_rules import DrainRules, drain_rules
from brupop.ports.clock import Clock
from brupop.ports.cluster.pod_repository import PodRepository
from brupop.ports.errors import DrainFailedError, NotFoundError, PortError, TooManyRequestsError
from brupop.services.apiserver.drain.evicted_workloads import EvictedWorkloadRecorder
from brupop.services.apiserver.drain.eviction_refusals import EvictionRefusals
from brupop.services.apiserver.drain.forced_removal import ForcedRemoval
from brupop.services.apiserver.drain.node_actions import NodeActions
from brupop.services.apiserver.drain.plan import DrainPlan, plan_drain, pod_ref
from brupop.services.apiserver.drain.policy_source import DrainPolicySource

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class DrainTimings:
    """How long a drain may take and how often it retries (the original's values by default)."""

    timeout_seconds: float = 900.0  # the policy's drain.timeoutSeconds replaces it
    retry_interval_seconds: float = 5.0
    deletion_timeout_seconds: float = 300.0
    concurrent_evictions: int = 5
    refusal_summary_seconds: float = 60.0  # one line per interval while a budget holds pods


class _Removal(NamedTuple):
    """One pod to remove: evicted (PodDisruptionBudgets apply), else deleted."""

    pod: Pod
    evicting: bool


@dataclass
class DrainReport:
    """What a successful drain removed."""

    node_name: str
    evicted: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    forced: list[str] = field(default_factory=list)


class Drainer:
    """Cordons a node and empties it of every pod that has to leave, or says why it could not."""

    def __init__(
        self,
        *,
        actions: NodeActions,
        pods: PodRepository,
        clock: Clock,
        timings: DrainTimings,
        recorder: EvictedWorkloadRecorder | None = None,
        policy: DrainPolicySource | None = None,
        forced: ForcedRemoval | None = None,
    ) -> None:
        self._actions = actions
        self._pods = pods
        self._clock = clock
        self._timings = timings
        self._recorder = recorder
        self._policy = policy
        self._forced = forced

    def drain(self, node_name: str) -> DrainReport:
        """Cordon and drain `node_name`; DrainFailedError when pods are still there in the end."""
        rules = self._rules()
        deadline = self._clock.monotonic() + rules.timeout_seconds
        self._actions.cordon(node_name)
        log.info("drain.started", node=node_name, **_described(rules))
        report = DrainReport(node_name)
        refusals: dict[str, str] = {}
        refusal_log = EvictionRefusals(
            node_name, self._clock, summary_interval_seconds=self._timings.refusal_summary_seconds
        )
        first = True
        while True:
            plan = plan_drain(self._pods.list_on_node(node_name))
            if first and self._recorder is not None:
                # Before the first eviction: what the health gate will wait to see again.
                self._recorder.record(node_name, plan.evict)
            first = False
            if plan.is_done:
                log.info("drain.finished", node=node_name, evicted=len(report.evicted))
                return report
            if self._clock.monotonic() >= deadline:
                return self._timed_out(node_name, plan, rules, refusals, report)
            refused = self._remove_once(plan, rules, report, refusal_log)
            refusals.update(refused)
            refusal_log.summarize_if_due(refused)
            removed = [p for p in plan.evict + plan.delete if pod_ref(p) not in refused]
            self._await_gone(node_name, removed + list(plan.await_gone))
            if refused:
                pause = min(
                    self._timings.retry_interval_seconds, deadline - self._clock.monotonic()
                )
                self._clock.sleep(max(pause, 0.0))

    def _rules(self) -> DrainRules:
        """The policy's drain section (read now, or cached) over the environment's timeout."""
        if self._policy is None:
            return drain_rules(None, self._timings.timeout_seconds)
        return self._policy.rules(self._timings.timeout_seconds)

    def _timed_out(
        self,
        node_name: str,
        plan: DrainPlan,
        rules: DrainRules,
        refusals: dict[str, str],
        report: DrainReport,
    ) -> DrainReport:
        """At the timeout: force what the rules allow, then finish or give up on the rest."""
        left = list(plan.remaining)
        if rules.forcing and self._forced is not None:
            forced, left = self._forced.force(node_name, left, rules)
            report.forced.extend(forced)
        if left:
            raise self._gave_up(node_name, left, refusals, rules, forced=report.forced)
        log.info(
            "drain.finished", node=node_name, evicted=len(report.evicted), forced=report.forced
        )
        return report

    def _remove_once(
        self,
        plan: DrainPlan,
        rules: DrainRules,
        report: DrainReport,
        refusal_log: EvictionRefusals,
    ) -> dict[str, str]:
        """Evict or delete each pod once, at most N at a time; return the refusals by pod."""
        jobs = [_Removal(pod, evicting=True) for pod in plan.evict]
        jobs += [_Removal(pod, evicting=False) for pod in plan.delete]
        workers = max(1, min(self._timings.concurrent_evictions, len(jobs)))
        grace = rules.grace_period_seconds
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="evict") as pool:
            outcomes = list(
                pool.map(lambda job: self._remove(job.pod, job.evicting, grace, refusal_log), jobs)
            )
        refused: dict[str, str] = {}
        for (pod, evicting), reason in zip(jobs, outcomes, strict=True):
            if reason is not None:
                refused[pod_ref(pod)] = reason
            else:
                (report.evicted if evicting else report.deleted).append(pod_ref(pod))
        return refused

    def _remove(
        self, pod: Pod, evicting: bool, grace: int | None, refusal_log: EvictionRefusals
    ) -> str | None:
        """Evict (or delete) one pod; None when it is gone or going, else why not."""
        try:
            if evicting:
                self._pods.evict(pod.namespace, pod.name, grace_period_seconds=grace)
            else:
                self._pods.delete(pod.namespace, pod.name)
        except NotFoundError:
            return None
        except TooManyRequestsError as refusal:
            refusal_log.refused(pod_ref(pod), str(refusal))
            return "a PodDisruptionBudget refuses the eviction"
        except PortError as error:
            log.info("drain.eviction_failed", pod=pod_ref(pod), error=str(error))
            return f"last error: {error}"
        refused = refusal_log.count(pod_ref(pod))
        extra = {"after_refusals": refused} if refused else {}
        log.info(
            "drain.pod_evicted" if evicting else "drain.pod_deleted", pod=pod_ref(pod), **extra
        )
        return None

    def _await_gone(self, node_name: str, pods: Sequence[Pod]) -> None:
        """Wait, bounded by the deletion timeout, until these pods have left the node."""
        deadline = self._clock.monotonic() + self._timings.deletion_timeout_seconds
        waiting = list(pods)
        while True:
            waiting = [pod for pod in waiting if not self._is_gone(pod, node_name)]
            if not waiting:
                return
            if self._clock.monotonic() >= deadline:
                names = ", ".join(pod_ref(pod) for pod in waiting)
                seconds = self._timings.deletion_timeout_seconds
                raise DrainFailedError(
                    f"drain of node {node_name} failed: evicted pods still running after "
                    f"{seconds:g}s: {names}",
                    blockers=tuple(pod_ref(pod) for pod in waiting),
                )
            self._clock.sleep(self._timings.retry_interval_seconds)

    def _is_gone(self, pod: Pod, node_name: str) -> bool:
        try:
            current = self._pods.get(pod.namespace, pod.name)
        except NotFoundError:
            return True
        except PortError:
            return False
        return current.uid != pod.uid or current.node_name != node_name

    def _gave_up(
        self,
        node_name: str,
        pods: Iterable[Pod],
        refusals: dict[str, str],
        rules: DrainRules,
        *,
        forced: Sequence[str] = (),
    ) -> DrainFailedError:
        left = list(pods)
        budgets = self._budget_names(left)
        described = []
        for pod in left:
            reason = refusals.get(pod_ref(pod), "still on the node")
            if pod_ref(pod) in budgets:
                reason = f"blocked by PodDisruptionBudget {budgets[pod_ref(pod)]}"
            described.append(f"{pod_ref(pod)} ({reason})")
        seconds = rules.timeout_seconds
        message = (
            f"drain of node {node_name} gave up after {seconds:g}s; pods still on the node: "
            + ", ".join(described)
        )
        if forced:
            message += "; deleted without eviction (drain.onTimeout: force): " + ", ".join(forced)
        log.warning("drain.failed", node=node_name, pods=[pod_ref(pod) for pod in left])
        return DrainFailedError(message, blockers=tuple(pod_ref(pod) for pod in left))

    def _budget_names(self, pods: Sequence[Pod]) -> dict[str, str]:
        """`namespace/pod` -> the `namespace/name` of the budgets that select it."""
        names: dict[str, str] = {}
        for namespace in sorted({pod.namespace for pod in pods}):
            try:
                budgets = self._pods.list_disruption_budgets(namespace)
            except PortError:
                continue
            for pod in pods:
                chosen = [f"{b.namespace}/{b.name}" for b in budgets if b.selects(pod)]
                if chosen:
                    names[pod_ref(pod)] = ", ".join(chosen)
        return names


def _described(rules: DrainRules) -> dict[str, object]:
    """The drain.started fields that say which rules apply (nothing extra for the default)."""
    if not rules.from_policy:
        return {}
    described: dict[str, object] = {"timeout_seconds": rules.timeout_seconds}
    if rules.grace_period_seconds is not None:
        described["grace_period_seconds"] = rules.grace_period_seconds
    described["on_timeout"] = str(rules.on_timeout)
    if rules.forcing:
        described["force_namespaces"] = sorted(rules.force_namespaces)
    if rules.refused_namespaces:
        described["never_forced"] = sorted(rules.refused_namespaces)
    return described
