"""The agent's settings, read once from the environment with the original variable names.

A frozen value object read by hand (`setting_readers`), neither pydantic-settings (about 15 MiB)
nor pydantic (about 50 ms of CPU at each start, under `cpu: 10m`). A bad value stops start-up
with one line that names the variable (`SettingsError`); every number is finite and bounded,
so no value that passes start-up overflows a timer later.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from brupop.domain.value_objects import value_object
from brupop.entrypoints.agent import setting_readers as read
from brupop.entrypoints.pod_namespace import (
    DEFAULT_NAMESPACE,
    SERVICE_ACCOUNT_NAMESPACE_FILE,
    service_account_namespace,
)
from brupop.entrypoints.setting_refusal import (
    ONE_DAY,
    ONE_HOUR,
    ONE_MINUTE,
    ONE_WEEK,
    SettingsError,
)

TYPE_CHECKING = False  # keep `typing` out of the agent's start
if TYPE_CHECKING:
    from typing import Any

APISERVER_SERVICE = "brupop-apiserver"
TOKEN_PATH = "/var/run/secrets/tokens/bottlerocket-agent-service-account-token"
CA_PATH = "/etc/brupop-tls-keys/ca.crt"
TERMINATION_LOG = "/dev/termination-log"


@value_object
class Source:
    """Where one setting comes from: its field, its environment variable, and its reader."""

    field: str
    variable: str
    read: read.Reader


def _seconds(field: str, variable: str, *, most: float, zero: bool = False) -> Source:
    return Source(field, variable, read.seconds(most=most, zero=zero))


def _count(field: str, variable: str, *, least: int, most: int, digits: bool = False) -> Source:
    return Source(field, variable, read.whole_number(least=least, most=most, digits_only=digits))


@value_object
class AgentSettings:
    """Everything `brupop agent` reads from its environment; numbers are bounded (docs/agent.md).
    `SOURCES` names each field's variable and reader."""

    node_name: str
    namespace: str = DEFAULT_NAMESPACE
    apiserver_service_port: int = 443
    apiserver_url: str | None = None
    cluster_domain: str = "cluster.local"
    token_path: str = TOKEN_PATH
    ca_path: str = CA_PATH
    apiclient_path: str = "apiclient"
    exclude_from_lb_wait_seconds: int = 0
    loop_interval_seconds: float = 5.0
    update_check_interval_seconds: float = 120.0
    reboot_wait_seconds: float = 180.0
    shadow_wait_seconds: float = 30.0
    apiclient_timeout_seconds: float = 60.0
    host_command_deadline_seconds: float = 600.0
    host_poll_interval_seconds: float = 2.0
    apiclient_rate_period_seconds: float = 10.0
    apiclient_rate_burst: int = 2
    apiclient_retries: int = 5
    apiclient_retry_base_seconds: float = 10.0
    apiclient_retry_max_seconds: float = 60.0
    apiserver_client_timeout_seconds: float = 10.0
    drain_timeout_seconds: float = 900.0
    termination_log: str = TERMINATION_LOG
    logging_formatter: str = "auto"
    tracing_filter_directive: str = "info"

    def apiserver_base_url(self) -> str:
        """APISERVER_URL if set, else the apiserver Service's in-cluster HTTPS address."""
        if self.apiserver_url:
            return self.apiserver_url.rstrip("/")
        host = f"{APISERVER_SERVICE}.{self.namespace}.svc.{self.cluster_domain}"
        return f"https://{host}:{self.apiserver_service_port}"


SOURCES: tuple[Source, ...] = (
    Source("node_name", "MY_NODE_NAME", read.dns_name),
    Source("namespace", "BRUPOP_NAMESPACE", read.namespace),
    _count("apiserver_service_port", "APISERVER_SERVICE_PORT", least=1, most=65535, digits=True),
    Source("apiserver_url", "APISERVER_URL", read.base_url),
    Source("cluster_domain", "CLUSTER_DOMAIN", read.dns_name),
    Source("token_path", "AGENT_TOKEN_PATH", read.path),
    Source("ca_path", "AGENT_CA_PATH", read.path),
    Source("apiclient_path", "APICLIENT_PATH", read.path),
    _count(
        "exclude_from_lb_wait_seconds",
        "EXCLUDE_FROM_LB_WAIT_TIME_IN_SEC",
        least=0,
        most=int(ONE_HOUR),
        digits=True,
    ),
    _seconds("loop_interval_seconds", "AGENT_LOOP_INTERVAL_SECONDS", most=ONE_HOUR),
    _seconds("update_check_interval_seconds", "UPDATE_CHECK_INTERVAL_SECONDS", most=ONE_DAY),
    _seconds("reboot_wait_seconds", "REBOOT_WAIT_SECONDS", most=ONE_HOUR, zero=True),
    _seconds("shadow_wait_seconds", "SHADOW_WAIT_SECONDS", most=ONE_HOUR),
    _seconds("apiclient_timeout_seconds", "APICLIENT_TIMEOUT_SECONDS", most=ONE_HOUR),
    _seconds("host_command_deadline_seconds", "HOST_COMMAND_DEADLINE_SECONDS", most=ONE_DAY),
    _seconds("host_poll_interval_seconds", "HOST_POLL_INTERVAL_SECONDS", most=ONE_MINUTE),
    _seconds(
        "apiclient_rate_period_seconds", "APICLIENT_RATE_PERIOD_SECONDS", most=ONE_HOUR, zero=True
    ),
    _count("apiclient_rate_burst", "APICLIENT_RATE_BURST", least=1, most=1000),
    _count("apiclient_retries", "APICLIENT_RETRIES", least=0, most=100),
    _seconds(
        "apiclient_retry_base_seconds", "APICLIENT_RETRY_BASE_SECONDS", most=ONE_HOUR, zero=True
    ),
    _seconds(
        "apiclient_retry_max_seconds", "APICLIENT_RETRY_MAX_SECONDS", most=ONE_HOUR, zero=True
    ),
    _seconds("apiserver_client_timeout_seconds", "APISERVER_CLIENT_TIMEOUT_SECONDS", most=ONE_HOUR),
    _seconds("drain_timeout_seconds", "DRAIN_TIMEOUT_SECONDS", most=ONE_WEEK),
    Source("termination_log", "TERMINATION_LOG", read.path),
    Source("logging_formatter", "LOGGING_FORMATTER", read.logging_formatter),
    Source("tracing_filter_directive", "TRACING_FILTER_DIRECTIVE", read.filter_directive),
)
REQUIRED = frozenset({"node_name"})  # the fields without a default


def variables() -> tuple[str, ...]:
    """The environment variables the agent reads, in the order it checks them."""
    return tuple(source.variable for source in SOURCES)


def reader_of(variable: str) -> read.Reader:
    """The reader of environment variable `variable` (the chart's values schema takes its
    bounds from it); KeyError when the agent does not read it."""
    for source in SOURCES:
        if source.variable == variable:
            return source.read
    raise KeyError(variable)


def load_settings(
    environ: Mapping[str, str],
    namespace_file: str | os.PathLike[str] = SERVICE_ACCOUNT_NAMESPACE_FILE,
) -> AgentSettings:
    """Read the settings from `environ`; raise SettingsError naming the first bad variable.

    Empty values count as unset. The namespace defaults to the pod's own (its service-account
    namespace file), else brupop's usual one.
    """
    values = {key: value.strip() for key, value in environ.items() if value.strip()}
    if "BRUPOP_NAMESPACE" not in values:
        pod_namespace = service_account_namespace(namespace_file)
        if pod_namespace:
            values["BRUPOP_NAMESPACE"] = pod_namespace
    read_values: dict[str, Any] = {}
    for source in SOURCES:
        if source.variable in values:
            text = values[source.variable]
            try:
                read_values[source.field] = source.read(text)
            except ValueError as error:
                raise SettingsError.of_value(source.variable, str(error), text) from None
        elif source.field in REQUIRED:
            raise SettingsError(source.variable, "required but not set")
    settings = AgentSettings(**read_values)
    _check_rules_across(settings)
    return settings


def _check_rules_across(settings: AgentSettings) -> None:
    """Rules that relate two settings; SettingsError names the one to change."""
    if settings.apiclient_retry_base_seconds > settings.apiclient_retry_max_seconds:
        raise SettingsError(
            "APICLIENT_RETRY_BASE_SECONDS",
            "must not exceed APICLIENT_RETRY_MAX_SECONDS"
            f" ({settings.apiclient_retry_base_seconds:g} > "
            f"{settings.apiclient_retry_max_seconds:g})",
        )
    if settings.host_poll_interval_seconds > settings.host_command_deadline_seconds:
        raise SettingsError(
            "HOST_POLL_INTERVAL_SECONDS",
            "must not exceed HOST_COMMAND_DEADLINE_SECONDS"
            f" ({settings.host_poll_interval_seconds:g} > "
            f"{settings.host_command_deadline_seconds:g})",
        )
