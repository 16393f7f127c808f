"""The counters a measuring window is the difference of (kube-apiserver's request and watch
counters, the replicas' request counters, the leader's CPU and pass CPU histogram), read at one
moment, and the window's figures from two readings."""

from __future__ import annotations

import time
from typing import Any

from real_cluster import proc_stats, readings, scrape
from real_cluster.session import Session

REQUESTS = ("apiserver_request_total", ("verb", "resource", "subresource"))


def snapshot(session: Session) -> dict[str, Any]:
    """Every counter the windows are differences of, at one moment."""
    text = readings.kube_metrics(session.access)
    leader = next(p for p in session.brupop.controllers if _leads(p.port))
    return {
        "at": time.time(),
        "requests": scrape.samples(text, REQUESTS[0], REQUESTS[1]),
        "watch_events": scrape.samples(text, "apiserver_watch_events_total", ("resource",)),
        # Answered 2xx only: a refusal (429, 503) is counted by the generator as it is sent,
        # and some never reach the counter (a connection refused at admission).
        "apiserver_requests": sum(
            value
            for url in session.urls
            for (status,), value in scrape.samples(
                readings.http_text(f"{url}/metrics", str(session.tls.ca_cert)),
                "brupop_apiserver_requests_total",
                ("status",),
            ).items()
            if status.startswith("2")
        ),
        "leader_pid": leader.pid,
        "leader_cpu": proc_stats.cpu_seconds(leader.pid),
        **_pass_cpu(leader.port),
    }


def _leads(port: int) -> bool:
    text = readings.http_text(f"http://127.0.0.1:{port}/metrics")
    return scrape.single(text, "brupop_controller_leader") >= 1


def _pass_cpu(port: int) -> dict[str, Any]:
    """The leader's pass CPU histogram: ticks so far and their CPU seconds."""
    text = readings.http_text(f"http://127.0.0.1:{port}/metrics")
    buckets = scrape.samples(text, "brupop_controller_pass_cpu_seconds_bucket", ("le",))
    return {
        "pass_count": scrape.single(text, "brupop_controller_pass_cpu_seconds_count"),
        "pass_cpu": scrape.single(text, "brupop_controller_pass_cpu_seconds_sum"),
        "pass_buckets": {le: count for (le,), count in buckets.items()},
    }


def wait_for_leader(session: Session, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not any(_leads(p.port) for p in session.brupop.controllers):
        if time.monotonic() > deadline:
            raise RuntimeError("no controller replica leads")
        time.sleep(1.0)


def window(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    seconds = after["at"] - before["at"]
    requests = scrape.delta(after["requests"], before["requests"])
    events = scrape.delta(after["watch_events"], before["watch_events"])
    return {
        "seconds": round(seconds, 1),
        "all_clients_requests_per_second": round(sum(requests.values()) / seconds, 2),
        "all_clients_by_verb_resource_per_second": {
            " ".join(filter(None, k)): round(v / seconds, 3)
            for k, v in sorted(requests.items(), key=lambda i: -i[1])
        },
        "watch_events_per_second": round(sum(events.values()) / seconds, 3),
        "watch_events_by_resource_per_second": {
            k[0]: round(v / seconds, 3) for k, v in events.items()
        },
        "leader_cpu_seconds": after["leader_cpu"] - before["leader_cpu"],
        "ticks": after["pass_count"] - before["pass_count"],
        "ticks_cpu_seconds": after["pass_cpu"] - before["pass_cpu"],
        "ticks_by_cpu_bucket": {  # cumulative, as Prometheus keeps them: ticks with CPU <= le
            le: count - before["pass_buckets"].get(le, 0.0)
            for le, count in after["pass_buckets"].items()
        },
        "brupop_apiserver_requests": after["apiserver_requests"] - before["apiserver_requests"],
    }


def processes(session: Session) -> dict[str, Any]:
    return {
        p.name: {"rss_mib": round(proc_stats.rss_mib(p.pid), 1),
                 "connections": proc_stats.connections(p.pid, p.port)}
        for p in session.brupop.apiservers
    }  # fmt: skip
