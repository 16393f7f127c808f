"""The agent's settings, read once from the environment with the original variable names.

A frozen dataclass read by hand (`setting_readers`), neither pydantic-settings (about 15 MiB)
nor pydantic (about 50 ms of CPU at each start, under `cpu: 10m`). A bad value stops start-up
with one line that names the variable (`SettingsError`); every number is finite and bounded,
so no value that passes start-up overflows a timer later.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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

APISERVER_SERVICE = "brupop-apiserver"
REQUIRED: Any = dataclasses.MISSING
TOKEN_PATH = Path("/var/run/secrets/tokens/bottlerocket-agent-service-account-token")
CA_PATH = Path("/etc/brupop-tls-keys/ca.crt")
TERMINATION_LOG = Path("/dev/termination-log")


def _source(variable: str, reader: read.Reader) -> dict[str, Any]:
    """A field's metadata: the environment variable it is read from, and its reader."""
    return {"variable": variable, "read": reader}


def _env(variable: str, default: Any, reader: read.Reader) -> Any:
    """A field read from environment variable `variable` by `reader`."""
    if default is REQUIRED:
        return dataclasses.field(metadata=_source(variable, reader))
    return dataclasses.field(default=default, metadata=_source(variable, reader))


def _seconds(variable: str, default: float, *, most: float, zero: bool = False) -> Any:
    return _env(variable, default, read.seconds(most=most, zero=zero))


def _count(variable: str, default: int, *, least: int, most: int, digits: bool = False) -> Any:
    return _env(variable, default, read.whole_number(least=least, most=most, digits_only=digits))


@dataclass(frozen=True)
class AgentSettings:
    """Everything `brupop agent` reads from its environment; numbers are bounded (docs/agent.md)."""

    node_name: str = _env("MY_NODE_NAME", REQUIRED, read.text(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$"))
    namespace: str = _env("BRUPOP_NAMESPACE", DEFAULT_NAMESPACE, read.text())
    apiserver_service_port: int = _count(
        "APISERVER_SERVICE_PORT", 443, least=1, most=65535, digits=True
    )
    apiserver_url: str | None = _env("APISERVER_URL", None, read.text(r"^https?://[^\s/]+"))
    cluster_domain: str = _env("CLUSTER_DOMAIN", "cluster.local", read.text())
    token_path: Path = dataclasses.field(
        default=TOKEN_PATH, metadata=_source("AGENT_TOKEN_PATH", read.path)
    )
    ca_path: Path = dataclasses.field(default=CA_PATH, metadata=_source("AGENT_CA_PATH", read.path))
    apiclient_path: str = _env("APICLIENT_PATH", "apiclient", read.text())
    exclude_from_lb_wait_seconds: int = _count(
        "EXCLUDE_FROM_LB_WAIT_TIME_IN_SEC", 0, least=0, most=int(ONE_HOUR), digits=True
    )
    loop_interval_seconds: float = _seconds("AGENT_LOOP_INTERVAL_SECONDS", 5.0, most=ONE_HOUR)
    update_check_interval_seconds: float = _seconds(
        "UPDATE_CHECK_INTERVAL_SECONDS", 120.0, most=ONE_DAY
    )
    reboot_wait_seconds: float = _seconds("REBOOT_WAIT_SECONDS", 180.0, most=ONE_HOUR, zero=True)
    shadow_wait_seconds: float = _seconds("SHADOW_WAIT_SECONDS", 30.0, most=ONE_HOUR)
    apiclient_timeout_seconds: float = _seconds("APICLIENT_TIMEOUT_SECONDS", 60.0, most=ONE_HOUR)
    host_command_deadline_seconds: float = _seconds(
        "HOST_COMMAND_DEADLINE_SECONDS", 600.0, most=ONE_DAY
    )
    host_poll_interval_seconds: float = _seconds("HOST_POLL_INTERVAL_SECONDS", 2.0, most=ONE_MINUTE)
    apiclient_rate_period_seconds: float = _seconds(
        "APICLIENT_RATE_PERIOD_SECONDS", 10.0, most=ONE_HOUR, zero=True
    )
    apiclient_rate_burst: int = _count("APICLIENT_RATE_BURST", 2, least=1, most=1000)
    apiclient_retries: int = _count("APICLIENT_RETRIES", 5, least=0, most=100)
    apiclient_retry_base_seconds: float = _seconds(
        "APICLIENT_RETRY_BASE_SECONDS", 10.0, most=ONE_HOUR, zero=True
    )
    apiclient_retry_max_seconds: float = _seconds(
        "APICLIENT_RETRY_MAX_SECONDS", 60.0, most=ONE_HOUR, zero=True
    )
    apiserver_client_timeout_seconds: float = _seconds(
        "APISERVER_CLIENT_TIMEOUT_SECONDS", 10.0, most=ONE_HOUR
    )
    drain_timeout_seconds: float = _seconds("DRAIN_TIMEOUT_SECONDS", 900.0, most=ONE_WEEK)
    termination_log: Path = dataclasses.field(
        default=TERMINATION_LOG, metadata=_source("TERMINATION_LOG", read.path)
    )
    logging_formatter: str = _env("LOGGING_FORMATTER", "auto", read.logging_formatter)
    tracing_filter_directive: str = _env("TRACING_FILTER_DIRECTIVE", "info", read.filter_directive)

    def apiserver_base_url(self) -> str:
        """APISERVER_URL if set, else the apiserver Service's in-cluster HTTPS address."""
        if self.apiserver_url:
            return self.apiserver_url.rstrip("/")
        host = f"{APISERVER_SERVICE}.{self.namespace}.svc.{self.cluster_domain}"
        return f"https://{host}:{self.apiserver_service_port}"


def variables() -> tuple[str, ...]:
    """The environment variables the agent reads, in the order it checks them."""
    return tuple(field.metadata["variable"] for field in dataclasses.fields(AgentSettings))


def load_settings(
    environ: Mapping[str, str], namespace_file: Path = SERVICE_ACCOUNT_NAMESPACE_FILE
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
    for field in dataclasses.fields(AgentSettings):
        variable = field.metadata["variable"]
        if variable in values:
            try:
                read_values[field.name] = field.metadata["read"](values[variable])
            except ValueError as error:
                raise SettingsError.of_value(variable, str(error), values[variable]) from None
        elif field.default is REQUIRED:
            raise SettingsError(variable, "required but not set")
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
