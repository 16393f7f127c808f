"""Values the chart's schema must refuse: one or more per value a process validates, each with
the schema path Helm names and the variable the process refuses at start (None: the process
never reads it, the chart or Kubernetes does)."""

from __future__ import annotations

from typing import Any, NamedTuple


class Refusal(NamedTuple):
    """One bad setting of the chart's values."""

    values: dict[str, Any]
    path: str
    variable: str | None
    named: str = ""  # what else Helm's message must name (a misspelt key)


def _setting(key: str, value: Any, variable: str = "") -> Refusal:
    """A bad top-level `key`, refused at `/key` and, by the process, as `variable` (by default
    the key in capitals)."""
    return Refusal({key: value}, f"/{key}", variable or key.upper())


def _hook(**fields: Any) -> dict[str, Any]:
    return {"notifications": {"webhooks": [{"url": "https://hooks.example/x", **fields}]}}


REFUSALS: dict[str, Refusal] = {
    "cron of 5 fields": _setting("scheduler_cron_expression", "0 2 * * *"),
    "cron of 8 fields": _setting("scheduler_cron_expression", "0 0 2 * * * * *"),
    "cron in words": _setting("scheduler_cron_expression", "every night at two"),
    "time zone with a space": _setting("scheduler_time_zone", "Europe Paris"),
    "limit of zero": _setting("max_concurrent_updates", "0", "MAX_CONCURRENT_UPDATE"),
    "limit of zero as a number": _setting("max_concurrent_updates", 0, "MAX_CONCURRENT_UPDATE"),
    "limit in words": _setting("max_concurrent_updates", "all", "MAX_CONCURRENT_UPDATE"),
    "quorum of zero": _setting("release_age_quorum", "0"),
    "quorum past its bound": _setting("release_age_quorum", "1000001"),
    "grace below zero": _setting("variant_offer_grace_seconds", -1),
    "grace past thirty days": _setting("variant_offer_grace_seconds", "2592001"),
    "grace in words": _setting("variant_offer_grace_seconds", "six hours"),
    "window start not a time": Refusal(
        {"update_window_start": "25:00:00", "update_window_stop": "3:0:0"},
        "/update_window_start",
        "UPDATE_WINDOW_START",
    ),
    "window start without its stop": Refusal(
        {"update_window_start": "9:0:0"},
        "/update_window_stop",
        "UPDATE_WINDOW_STOP",
    ),
    "cluster domain with a path": _setting("cluster_domain", "cluster.local/x"),
    "cluster domain with a user": _setting("cluster_domain", "agent@cluster.local"),
    "internal port zero": _setting("apiserver_internal_port", "0"),
    "internal port past 65535": _setting("apiserver_internal_port", 65536),
    "webhook port past 65535": _setting("apiserver_webhook_port", "70000"),
    "service port zero": _setting("apiserver_service_port", "0"),
    "no connections": _setting("apiserver_max_connections", "0"),
    "webhook connections past their bound": _setting("apiserver_webhook_max_connections", "65537"),
    "no connections per address": _setting("apiserver_max_connections_per_address", "0"),
    "load balancer wait past an hour": _setting("exclude_from_lb_wait_time_in_sec", "3601"),
    "drain timeout zero": _setting("drain_timeout_seconds", "0"),
    "drain timeout past a week": _setting("drain_timeout_seconds", "604801"),
    "drain timeout within the eviction retry": _setting(
        "drain_timeout_seconds", "5", "EVICTION_RETRY_INTERVAL_SECONDS"
    ),
    "idle timeout zero": Refusal(
        {"state_timeouts": {"idle_seconds": "0"}},
        "/state_timeouts/idle_seconds",
        "TIMEOUT_IDLE_SECONDS",
    ),
    "monitoring timeout past a week": Refusal(
        {"state_timeouts": {"monitoring_update_seconds": "604801"}},
        "/state_timeouts/monitoring_update_seconds",
        "TIMEOUT_MONITORING_UPDATE_SECONDS",
    ),
    "force allowance not namespaces": _setting(
        "apiserver_force_namespaces_allowed", "kube-system,Team_A"
    ),
    "log formatter unknown": Refusal(
        {"logging": {"formatter": "xml"}}, "/logging/formatter", "LOGGING_FORMATTER"
    ),
    "log filter level unknown": Refusal(
        {"logging": {"controller": {"tracing_filter": "info,controller=loud"}}},
        "/logging/controller/tracing_filter",
        "TRACING_FILTER_DIRECTIVE",
    ),
    "namespace empty": _setting("namespace", "", "BRUPOP_NAMESPACE"),
    "webhook url not http": Refusal(
        _hook(url="ftp://hooks.example/x"),
        "/notifications/webhooks/0/url",
        "NOTIFICATION_WEBHOOK_1_URL",
    ),
    "webhook format unknown": Refusal(
        _hook(format="xml"), "/notifications/webhooks/0/format", "NOTIFICATION_WEBHOOK_1_FORMAT"
    ),
    "webhook event unknown": Refusal(
        _hook(events=["node_exploded"]),
        "/notifications/webhooks/0/events/0",
        "NOTIFICATION_WEBHOOK_1_EVENTS",
    ),
    # Misspelt or unknown values, which the processes never see.
    "misspelt limit": Refusal(
        {"max_concurent_updates": 3}, "", None, "'max_concurent_updates' not allowed"
    ),
    "misspelt timeout": Refusal(
        {"state_timeouts": {"idle_second": "60"}}, "/state_timeouts", None, "'idle_second'"
    ),
    "misspelt log filter": Refusal(
        {"logging": {"agent": {"tracing_filtr": "debug"}}},
        "/logging/agent",
        None,
        "'tracing_filtr'",
    ),
    "misspelt webhook field": Refusal(
        _hook(event=["node_failed"]), "/notifications/webhooks/0", None, "'event'"
    ),
    "namespace Kubernetes refuses": Refusal(
        {"namespace": "Team_A"}, "/namespace", None, "'Team_A'"
    ),
}
