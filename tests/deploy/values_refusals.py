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


def _hook(**fields: Any) -> dict[str, Any]:
    return {"notifications": {"webhooks": [{"url": "https://hooks.example/x", **fields}]}}


REFUSALS: dict[str, Refusal] = {
    "cron of 5 fields": Refusal(
        {"scheduler_cron_expression": "0 2 * * *"},
        "/scheduler_cron_expression",
        "SCHEDULER_CRON_EXPRESSION",
    ),
    "cron of 8 fields": Refusal(
        {"scheduler_cron_expression": "0 0 2 * * * * *"},
        "/scheduler_cron_expression",
        "SCHEDULER_CRON_EXPRESSION",
    ),
    "cron in words": Refusal(
        {"scheduler_cron_expression": "every night at two"},
        "/scheduler_cron_expression",
        "SCHEDULER_CRON_EXPRESSION",
    ),
    "time zone with a space": Refusal(
        {"scheduler_time_zone": "Europe Paris"}, "/scheduler_time_zone", "SCHEDULER_TIME_ZONE"
    ),
    "limit of zero": Refusal(
        {"max_concurrent_updates": "0"}, "/max_concurrent_updates", "MAX_CONCURRENT_UPDATE"
    ),
    "limit of zero as a number": Refusal(
        {"max_concurrent_updates": 0}, "/max_concurrent_updates", "MAX_CONCURRENT_UPDATE"
    ),
    "limit in words": Refusal(
        {"max_concurrent_updates": "all"}, "/max_concurrent_updates", "MAX_CONCURRENT_UPDATE"
    ),
    "quorum of zero": Refusal(
        {"release_age_quorum": "0"}, "/release_age_quorum", "RELEASE_AGE_QUORUM"
    ),
    "quorum past its bound": Refusal(
        {"release_age_quorum": "1000001"}, "/release_age_quorum", "RELEASE_AGE_QUORUM"
    ),
    "grace below zero": Refusal(
        {"variant_offer_grace_seconds": -1},
        "/variant_offer_grace_seconds",
        "VARIANT_OFFER_GRACE_SECONDS",
    ),
    "grace past thirty days": Refusal(
        {"variant_offer_grace_seconds": "2592001"},
        "/variant_offer_grace_seconds",
        "VARIANT_OFFER_GRACE_SECONDS",
    ),
    "grace in words": Refusal(
        {"variant_offer_grace_seconds": "six hours"},
        "/variant_offer_grace_seconds",
        "VARIANT_OFFER_GRACE_SECONDS",
    ),
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
    "internal port zero": Refusal(
        {"apiserver_internal_port": "0"}, "/apiserver_internal_port", "APISERVER_INTERNAL_PORT"
    ),
    "internal port past 65535": Refusal(
        {"apiserver_internal_port": 65536}, "/apiserver_internal_port", "APISERVER_INTERNAL_PORT"
    ),
    "webhook port past 65535": Refusal(
        {"apiserver_webhook_port": "70000"}, "/apiserver_webhook_port", "APISERVER_WEBHOOK_PORT"
    ),
    "service port zero": Refusal(
        {"apiserver_service_port": "0"}, "/apiserver_service_port", "APISERVER_SERVICE_PORT"
    ),
    "no connections": Refusal(
        {"apiserver_max_connections": "0"},
        "/apiserver_max_connections",
        "APISERVER_MAX_CONNECTIONS",
    ),
    "webhook connections past their bound": Refusal(
        {"apiserver_webhook_max_connections": "65537"},
        "/apiserver_webhook_max_connections",
        "APISERVER_WEBHOOK_MAX_CONNECTIONS",
    ),
    "no connections per address": Refusal(
        {"apiserver_max_connections_per_address": "0"},
        "/apiserver_max_connections_per_address",
        "APISERVER_MAX_CONNECTIONS_PER_ADDRESS",
    ),
    "load balancer wait past an hour": Refusal(
        {"exclude_from_lb_wait_time_in_sec": "3601"},
        "/exclude_from_lb_wait_time_in_sec",
        "EXCLUDE_FROM_LB_WAIT_TIME_IN_SEC",
    ),
    "drain timeout zero": Refusal(
        {"drain_timeout_seconds": "0"}, "/drain_timeout_seconds", "DRAIN_TIMEOUT_SECONDS"
    ),
    "drain timeout past a week": Refusal(
        {"drain_timeout_seconds": "604801"}, "/drain_timeout_seconds", "DRAIN_TIMEOUT_SECONDS"
    ),
    "drain timeout within the eviction retry": Refusal(
        {"drain_timeout_seconds": "5"},
        "/drain_timeout_seconds",
        "EVICTION_RETRY_INTERVAL_SECONDS",
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
    "force allowance not namespaces": Refusal(
        {"apiserver_force_namespaces_allowed": "kube-system,Team_A"},
        "/apiserver_force_namespaces_allowed",
        "APISERVER_FORCE_NAMESPACES_ALLOWED",
    ),
    "log formatter unknown": Refusal(
        {"logging": {"formatter": "xml"}}, "/logging/formatter", "LOGGING_FORMATTER"
    ),
    "log filter level unknown": Refusal(
        {"logging": {"controller": {"tracing_filter": "info,controller=loud"}}},
        "/logging/controller/tracing_filter",
        "TRACING_FILTER_DIRECTIVE",
    ),
    "namespace empty": Refusal({"namespace": ""}, "/namespace", "BRUPOP_NAMESPACE"),
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
