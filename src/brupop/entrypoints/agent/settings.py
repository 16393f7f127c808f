"""The agent's settings, read once from the environment with the original variable names.

A frozen pydantic model rather than pydantic-settings: the latter costs the agent ~15 MiB.
A bad value stops start-up with one line that names the variable (`SettingsError`); every
number is finite and bounded, so no value that passes start-up overflows a timer later.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from brupop.entrypoints.logging.log_settings import FilterDirective, LoggingFormatter
from brupop.entrypoints.pod_namespace import (
    DEFAULT_NAMESPACE,
    SERVICE_ACCOUNT_NAMESPACE_FILE,
    service_account_namespace,
)
from brupop.entrypoints.settings_error import (
    ONE_DAY,
    ONE_HOUR,
    ONE_MINUTE,
    ONE_WEEK,
    SettingsError,
    rule_broken,
    seconds,
    whole_number,
)

APISERVER_SERVICE = "brupop-apiserver"


def _env(name: str, default: Any = ..., **constraints: Any) -> Any:
    """A field read from environment variable `name`."""
    return Field(default, validation_alias=AliasChoices(name), **constraints)


class AgentSettings(BaseModel):
    """Everything `brupop agent` reads from its environment; numbers are bounded (docs/agent.md)."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=False)

    node_name: str = _env("MY_NODE_NAME", pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
    namespace: str = _env("BRUPOP_NAMESPACE", DEFAULT_NAMESPACE, min_length=1)
    apiserver_service_port: int = whole_number("APISERVER_SERVICE_PORT", 443, least=1, most=65535)
    apiserver_url: str | None = _env("APISERVER_URL", None, pattern=r"^https?://[^\s/]+")
    cluster_domain: str = _env("CLUSTER_DOMAIN", "cluster.local", min_length=1)
    token_path: Path = _env(
        "AGENT_TOKEN_PATH",
        Path("/var/run/secrets/tokens/bottlerocket-agent-service-account-token"),
    )
    ca_path: Path = _env("AGENT_CA_PATH", Path("/etc/brupop-tls-keys/ca.crt"))
    apiclient_path: str = _env("APICLIENT_PATH", "apiclient", min_length=1)
    exclude_from_lb_wait_seconds: int = whole_number(
        "EXCLUDE_FROM_LB_WAIT_TIME_IN_SEC", 0, least=0, most=int(ONE_HOUR)
    )
    loop_interval_seconds: float = seconds("AGENT_LOOP_INTERVAL_SECONDS", 5.0, most=ONE_HOUR)
    update_check_interval_seconds: float = seconds(
        "UPDATE_CHECK_INTERVAL_SECONDS", 120.0, most=ONE_DAY
    )
    reboot_wait_seconds: float = seconds("REBOOT_WAIT_SECONDS", 180.0, most=ONE_HOUR, zero=True)
    shadow_wait_seconds: float = seconds("SHADOW_WAIT_SECONDS", 30.0, most=ONE_HOUR)
    apiclient_timeout_seconds: float = seconds("APICLIENT_TIMEOUT_SECONDS", 60.0, most=ONE_HOUR)
    host_command_deadline_seconds: float = seconds(
        "HOST_COMMAND_DEADLINE_SECONDS", 600.0, most=ONE_DAY
    )
    host_poll_interval_seconds: float = seconds("HOST_POLL_INTERVAL_SECONDS", 2.0, most=ONE_MINUTE)
    apiclient_rate_period_seconds: float = seconds(
        "APICLIENT_RATE_PERIOD_SECONDS", 10.0, most=ONE_HOUR, zero=True
    )
    apiclient_rate_burst: int = whole_number("APICLIENT_RATE_BURST", 2, least=1, most=1000)
    apiclient_retries: int = whole_number("APICLIENT_RETRIES", 5, least=0, most=100)
    apiclient_retry_base_seconds: float = seconds(
        "APICLIENT_RETRY_BASE_SECONDS", 10.0, most=ONE_HOUR, zero=True
    )
    apiclient_retry_max_seconds: float = seconds(
        "APICLIENT_RETRY_MAX_SECONDS", 60.0, most=ONE_HOUR, zero=True
    )
    apiserver_client_timeout_seconds: float = seconds(
        "APISERVER_CLIENT_TIMEOUT_SECONDS", 10.0, most=ONE_HOUR
    )
    drain_timeout_seconds: float = seconds("DRAIN_TIMEOUT_SECONDS", 900.0, most=ONE_WEEK)
    termination_log: Path = _env("TERMINATION_LOG", Path("/dev/termination-log"))
    logging_formatter: LoggingFormatter = _env("LOGGING_FORMATTER", "auto")
    tracing_filter_directive: FilterDirective = _env("TRACING_FILTER_DIRECTIVE", "info")

    @field_validator("exclude_from_lb_wait_seconds", "apiserver_service_port", mode="before")
    @classmethod
    def _whole_number(cls, value: object) -> object:
        # The original parses these as integers: "1.5" or "30s" must be refused, not rounded.
        if isinstance(value, str) and not value.strip().isdigit():
            raise ValueError("must be a whole number")
        return value

    @model_validator(mode="after")
    def _rules_across_settings(self) -> AgentSettings:
        if self.apiclient_retry_base_seconds > self.apiclient_retry_max_seconds:
            raise rule_broken(
                "APICLIENT_RETRY_BASE_SECONDS",
                "must not exceed APICLIENT_RETRY_MAX_SECONDS"
                f" ({self.apiclient_retry_base_seconds:g} > {self.apiclient_retry_max_seconds:g})",
            )
        if self.host_poll_interval_seconds > self.host_command_deadline_seconds:
            raise rule_broken(
                "HOST_POLL_INTERVAL_SECONDS",
                "must not exceed HOST_COMMAND_DEADLINE_SECONDS"
                f" ({self.host_poll_interval_seconds:g} > {self.host_command_deadline_seconds:g})",
            )
        return self

    def apiserver_base_url(self) -> str:
        """APISERVER_URL if set, else the apiserver Service's in-cluster HTTPS address."""
        if self.apiserver_url:
            return self.apiserver_url.rstrip("/")
        host = f"{APISERVER_SERVICE}.{self.namespace}.svc.{self.cluster_domain}"
        return f"https://{host}:{self.apiserver_service_port}"


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
    try:
        return AgentSettings.model_validate(values)
    except ValidationError as error:
        raise SettingsError.first_of(error) from None
