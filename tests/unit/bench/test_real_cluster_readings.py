"""The real-cluster bench's pure readings: audit-log counting and the goal judgement."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[3] / "bench"


def bench_module(name: str) -> ModuleType:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    return importlib.import_module(f"real_cluster.{name}")


def audit_line(verb: str, stage: str, at: str, user: str = "system:serviceaccount:ns:a") -> str:
    return json.dumps(
        {
            "verb": verb,
            "stage": stage,
            "requestReceivedTimestamp": at,
            "user": {"username": user},
            "objectRef": {"resource": "nodes"},
        }
    )


def test_audit_counts_a_watch_once_when_opened_and_other_requests_when_complete() -> None:
    scrape = bench_module("scrape")
    lines = [
        audit_line("watch", "ResponseStarted", "2026-12-01T12:00:01.000000Z"),
        audit_line("watch", "ResponseComplete", "2026-12-01T12:00:01.000000Z"),
        audit_line("get", "ResponseComplete", "2026-12-01T12:00:02.000000Z"),
        audit_line("get", "ResponseComplete", "2026-12-01T12:10:00.000000Z"),  # after the window
    ]
    start = 1796126400.0  # 2026-12-01T12:00:00Z
    counts = scrape.audit_counts(lines, start, start + 60)
    user = "system:serviceaccount:ns:a"
    assert counts == {(user, "watch", "nodes"): 1, (user, "get", "nodes"): 1}


def test_a_goal_with_a_measurement_over_its_bound_is_missed_with_the_largest_requests_named() -> (
    None
):
    goals = bench_module("goals")
    figures = {
        "nodes": 100,
        "kube_apiserver_load": {
            "brupop_requests_per_second": 12.0,
            "brupop_by_user_verb_resource_per_second": {"apiserver create tokenreviews": 9.0},
        },
    }
    verdict = goals.judge(figures)["brupop_kube_load"]
    assert verdict["met"] is False
    assert "apiserver create tokenreviews 9.00/s" in verdict["cause"]
    assert verdict["at_goal_size"] is False


def test_a_missed_load_goal_says_how_much_the_apiservers_per_request_checks_take() -> None:
    goals = bench_module("goals")
    account = "brupop-apiserver-service-account"
    load = {
        "brupop_requests_per_second": 11.0,
        "brupop_by_user_verb_resource_per_second": {
            f"{account} create tokenreviews": 3.0,
            f"{account} get pods": 3.0,
            f"{account} get nodes": 3.0,
            "brupop-controller-service-account get leases": 2.0,
        },
    }
    cause = goals.load_cause(load)
    assert "9.00/s of it is the apiserver's TokenReview" in cause
    assert "2.00/s without them" in cause


def test_pass_cpu_is_the_mean_cpu_of_the_ticks_in_the_window() -> None:
    figures = bench_module("figures")
    assert figures.pass_cpu_ms(40, 0.12) == 3.0
    assert figures.pass_cpu_ms(0, 0.0) is None


def test_one_change_costs_the_ticks_cpu_less_as_many_quiet_ticks_per_change() -> None:
    figures = bench_module("figures")
    # 12 ticks spent 60 ms; quiet ticks cost 3 ms each (36 ms); 4 changes: 6 ms each.
    assert figures.change_cpu_ms(12, 0.060, 3.0, 4) == 6.0
    assert figures.change_cpu_ms(12, 0.010, 3.0, 4) == 0.0
    assert figures.change_cpu_ms(12, 0.060, None, 4) is None


def test_tick_shares_read_the_cumulative_buckets_of_a_window() -> None:
    cumulative = {"0.001": 10.0, "0.002": 60.0, "0.005": 98.0, "0.1": 99.0, "2.5": 100.0,
                  "+Inf": 100.0}  # fmt: skip

    shares = bench_module("figures").tick_shares(cumulative)

    assert shares == {
        "ticks": 100.0,
        "within_5_ms_share": 0.98,
        "above_5_ms": 2.0,
        "above_100_ms": 1.0,
        "median_at_most_ms": 2.0,
    }


def test_informer_lists_are_read_per_kind_and_way_from_a_controller_log(tmp_path: Path) -> None:
    log = tmp_path / "controller.log"
    log.write_text(
        '{"event": "watch.listed", "kind": "shadows", "by": "objects", "cpu_ms": 900.5}\n'
        "not json, a traceback line\n"
        '{"event": "controller.pass_due", "kind": "shadows"}\n'
        '{"event": "watch.listed", "kind": "shadows", "by": "versions", "cpu_ms": 150.0}\n'
        '{"event": "watch.listed", "kind": "shadows", "by": "versions", "cpu_ms": 170.0}\n'
    )

    lists = bench_module("readings").informer_lists(log)

    assert lists == {
        "shadows by objects": {"count": 1, "cpu_ms": [900.5], "max_cpu_ms": 900.5},
        "shadows by versions": {"count": 2, "cpu_ms": [150.0, 170.0], "max_cpu_ms": 170.0},
    }


def test_the_replica_memory_cause_splits_the_base_from_each_agents_share() -> None:
    goals = bench_module("goals")
    replicas = {"a": {"rss_mib": 300.0, "connections": 1024}, "b": {"rss_mib": 200.0,
                "connections": 10}}  # fmt: skip

    cause = goals.rss_cause(replicas, base_mib=172.0)

    assert "300.0 MiB with 1024 connections" in cause
    assert "172.0 MiB before any agent connects" in cause
    assert "about 128 KiB per agent" in cause


def test_the_quiet_tick_bound_leaves_out_a_resync_and_never_undercounts() -> None:
    figures = bench_module("figures")
    # 3 ticks at 1 ms, 1 at 4 ms, and one resync of 3 s: 3.007 s in all
    cumulative = {"0.001": 3.0, "0.002": 3.0, "0.005": 4.0, "0.1": 4.0, "2.5": 4.0,
                  "10.0": 5.0, "+Inf": 5.0}  # fmt: skip

    bound = figures.quiet_tick_bound_ms(cumulative, cpu_seconds=3.007)

    true_mean = (3 * 1 + 4) / 4
    assert true_mean <= bound <= 2.0  # buckets: (3 x 1 + 5) / 4; the sum: (3.007 - 2.5) / 4


def test_brupops_load_counts_the_watches_it_opened_per_minute_apart_from_other_users() -> None:
    figures = bench_module("figures")
    prefix = figures.BRUPOP_USER_PREFIX
    audit = {
        (f"{prefix}brupop-controller", "watch", "nodes"): 3,
        (f"{prefix}brupop-controller", "update", "leases"): 24,
        (f"{prefix}brupop-apiserver", "watch", "pods"): 1,
        ("system:serviceaccount:kube-system:other", "watch", "nodes"): 50,
    }

    load = figures.brupop_load(audit, 120.0, 20)

    assert load["brupop_watches_opened_per_minute"] == 2.0
    assert load["brupop_requests_per_second"] == 0.233


def test_open_watches_are_those_started_and_not_ended_for_the_users_asked() -> None:
    scrape = bench_module("scrape")
    at, brupop, other = "2026-12-01T12:00:01.000000Z", "system:serviceaccount:ns:a", "kwok"

    def watch(audit_id: str, stage: str, user: str = brupop) -> str:
        return json.dumps(json.loads(audit_line("watch", stage, at, user)) | {"auditID": audit_id})

    lines = [
        watch("1", "ResponseStarted"),
        watch("2", "ResponseStarted"),
        watch("2", "ResponseComplete"),  # ended
        watch("3", "ResponseStarted", other),  # not brupop's
        watch("4", "ResponseStarted"),
        "not json",
    ]
    assert scrape.open_watches(lines, [brupop]) == {(brupop, "nodes"): 2}
