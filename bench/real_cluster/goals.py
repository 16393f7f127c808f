"""The issue's goals, judged from the measured figures: each one met or missed, with the
measurement, and when missed the measured cause. Goals stated for 10,000 nodes are judged
against the same bound at any size, and say the size they were measured at."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

GOAL_NODES = 10_000
APISERVER_RSS_MIB = 256.0
SPEC_SEEN_P99_SECONDS = 2.0
BRUPOP_REQUESTS_PER_SECOND = 10.0
CONTROLLER_RSS_MIB = 256.0
QUIET_PASS_MS = 5.0
CHANGE_MS = 2.0
APISERVER_USER = "brupop-apiserver-service-account"
PER_REQUEST_CHECKS = tuple(
    f"{APISERVER_USER} {what}" for what in ("create tokenreviews", "get pods", "get nodes")
)


@dataclass(frozen=True)
class Verdict:
    goal: str
    bound: float
    measured: float | None
    cause: str | None = None

    @property
    def met(self) -> bool:
        return self.measured is not None and self.measured <= self.bound

    def as_json(self, nodes: int) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "goal": self.goal,
            "bound": self.bound,
            "measured": self.measured,
            "met": self.met,
            "measured_at_nodes": nodes,
            "at_goal_size": nodes >= GOAL_NODES,
        }
        if self.measured is None:
            entry["cause"] = "not measured in this run"
        elif not self.met:
            entry["cause"] = self.cause or "measured above the bound"
        return entry


def top_rates(rates: Mapping[str, float], count: int = 3) -> str:
    """The largest entries of a {what: per second} map, as one line."""
    ranked = sorted(rates.items(), key=lambda item: -item[1])[:count]
    return ", ".join(f"{what} {rate:.2f}/s" for what, rate in ranked)


def load_cause(load: Mapping[str, Any]) -> str:
    """The largest of brupop's requests, and how much of the rate is the apiserver's checks of
    each agent request (TokenReview, pod GET, node GET), which local token verification and
    an authorization cache remove."""
    rates = load.get("brupop_by_user_verb_resource_per_second", {})
    checks = sum(rate for what, rate in rates.items() if what in PER_REQUEST_CHECKS)
    total = load.get("brupop_requests_per_second") or 0.0
    return (
        f"largest: {top_rates(rates)}; {checks:.2f}/s of it is the apiserver's TokenReview,"
        " pod GET and Node GET for agent requests (none with local token verification):"
        f" {max(0.0, total - checks):.2f}/s without them"
    )


def quiet_cause(controller: Mapping[str, Any]) -> str:
    """What the idle ticks held besides quiet passes (see controller.idle_ticks)."""
    ticks = controller.get("idle_ticks") or {}
    if not ticks:
        return (
            "the idle window's mean tick, which holds any full resync (every"
            " CONTROLLER_RESYNC_SECONDS, 600 s; about 2 s of CPU at 10,000 nodes) and the Lease"
            " renewals; this run kept no buckets to leave the resync out"
        )
    return (
        f"{ticks.get('within_5_ms_share', 0):.1%} of idle ticks within 5 ms, median at most"
        f" {ticks.get('median_at_most_ms')} ms; the mean left out {ticks.get('above_100_ms')}"
        " ticks above 100 ms"
    )


def rss_cause(apiservers: Mapping[str, Any], base_mib: float | None) -> str:
    """The largest replica's RSS, and (given a replica's RSS over the same cluster before any
    agent connects, `real_cluster_base_memory.py`) what each connected agent costs."""
    if not apiservers:
        return "no replica measured"
    largest = max(apiservers.values(), key=lambda r: r["rss_mib"])
    said = (
        f"the largest replica: {largest['rss_mib']} MiB with {largest['connections']} connections"
    )
    if base_mib is None or not largest["connections"]:
        return said + "; run real_cluster_base_memory.py for the part before any agent connects"
    per_agent = (largest["rss_mib"] - base_mib) * 1024 / largest["connections"]
    return (
        f"{said}: {base_mib} MiB before any agent connects (the shadow feed, the agent pod"
        f" mirror, the Kubernetes client) and about {per_agent:.0f} KiB per agent. What would"
        " close it: long-polls answered below Starlette (about 13 KiB less per agent) and a"
        " leaner feed (a full shadow model each)"
    )


def judge(figures: Mapping[str, Any], base_mib: float | None = None) -> dict[str, dict[str, Any]]:
    """Every goal's verdict from the run's figures (missing figures are missed goals);
    `base_mib`: a replica's RSS over a cluster of this size before any agent connects."""
    nodes = int(figures["nodes"])
    apiservers = figures.get("apiserver_replicas", {})
    load = figures.get("kube_apiserver_load", {})
    controller = figures.get("controller", {})
    rollout = figures.get("rollout")
    rss = max((r["rss_mib"] for r in apiservers.values()), default=None)
    verdicts = {
        "apiserver_rss": Verdict(
            f"each of 3 replicas <= {APISERVER_RSS_MIB:g} MiB",
            APISERVER_RSS_MIB,
            rss,
            rss_cause(apiservers, base_mib),
        ),
        "spec_seen_p99": Verdict(
            f"agent sees a shadow change within {SPEC_SEEN_P99_SECONDS:g} s (p99)",
            SPEC_SEEN_P99_SECONDS,
            figures.get("spec_change_seen_seconds", {}).get("p99"),
        ),
        "brupop_kube_load": Verdict(
            f"brupop's requests to kube-apiserver <= {BRUPOP_REQUESTS_PER_SECOND:g}/s at idle",
            BRUPOP_REQUESTS_PER_SECOND,
            load.get("brupop_requests_per_second"),
            load_cause(load),
        ),
        "controller_rss": Verdict(
            f"controller <= {CONTROLLER_RSS_MIB:g} MiB",
            CONTROLLER_RSS_MIB,
            controller.get("rss_mib"),
        ),
        "controller_quiet_pass": Verdict(
            f"quiet pass <= {QUIET_PASS_MS:g} ms CPU",
            QUIET_PASS_MS,
            controller.get("quiet_pass_cpu_ms"),
            controller.get("quiet_pass_cause") or quiet_cause(controller),
        ),
        "controller_one_change": Verdict(
            f"one change <= {CHANGE_MS:g} ms CPU",
            CHANGE_MS,
            controller.get("one_change_cpu_ms"),
            "the pass CPU of a tick after one shadow's change, less a quiet tick's; see"
            " controller.one_change_kinds",
        ),
    }
    judged = {name: verdict.as_json(nodes) for name, verdict in verdicts.items()}
    judged["rollout"] = _rollout(rollout, nodes)
    return judged


def _rollout(rollout: Mapping[str, Any] | None, nodes: int) -> dict[str, Any]:
    goal = "a rollout at maxConcurrent 10% completes and never exceeds the limit"
    if rollout is None:
        return {"goal": goal, "met": False, "cause": "no rollout in this run (--no-rollout)",
                "measured_at_nodes": nodes}  # fmt: skip
    met = bool(rollout["completed"]) and rollout["max_in_progress"] <= rollout["limit"]
    entry = {"goal": goal, "met": met, "measured_at_nodes": nodes,
             "completed": rollout["completed"], "max_in_progress": rollout["max_in_progress"],
             "limit": rollout["limit"]}  # fmt: skip
    if not met:
        entry["cause"] = rollout.get("cause", "see rollout")
    return entry
