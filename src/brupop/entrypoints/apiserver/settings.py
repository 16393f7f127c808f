"""The apiserver's settings, read once from the environment (original variable names kept).

A bad value stops the process at start with one line naming the variable (exit 2); every
number is finite and bounded (docs/apiserver.md), so none can overflow a timer later.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from brupop.adapters.apiserver_http.serving.admission import ConnectionLimits
from brupop.adapters.apiserver_http.serving.http_protocol import HeadLimits
from brupop.adapters.apiserver_http.serving.server import ServerLimits
from brupop.domain.object_names import DNS_LABEL_MAX, DNS_LABEL_PATTERN
from brupop.domain.policy.drain_rules import (
    FORCE_ALLOWANCE_SETTING,
    ForceAllowanceError,
    read_force_allowance,
)
from brupop.entrypoints.environment_values import (
    SETTINGS_CONFIG,
    default_bind_address,
    read_settings,
)
from brupop.entrypoints.logging.log_fields import FilterDirective, LoggingFormatter
from brupop.entrypoints.pod_namespace import pod_namespace
from brupop.entrypoints.settings_error import (
    ONE_DAY,
    ONE_HOUR,
    ONE_MINUTE,
    ONE_WEEK,
    rule_broken,
    seconds,
    whole_number,
)
from brupop.services.apiserver.drain.drainer import DrainTimings

TLS_DIR = Path("/etc/brupop-tls-keys")


class ApiserverSettings(BaseModel):
    """Environment variables of `brupop apiserver` (each field's alias), defaults checked too."""

    model_config = SETTINGS_CONFIG

    internal_port: int = whole_number("APISERVER_INTERNAL_PORT", 8443, least=1, most=65535)
    webhook_port: int | None = Field(None, ge=1, le=65535, alias="APISERVER_WEBHOOK_PORT")
    bind_address: str = Field(
        default_factory=default_bind_address, min_length=1, alias="APISERVER_BIND_ADDRESS"
    )
    # The agents' listener (the only one without a webhook port); the webhook port's is its own.
    max_connections: int = whole_number("APISERVER_MAX_CONNECTIONS", 4096, least=1, most=65536)
    webhook_max_connections: int = whole_number(
        "APISERVER_WEBHOOK_MAX_CONNECTIONS", 512, least=1, most=65536
    )
    max_connections_per_address: int = whole_number(
        "APISERVER_MAX_CONNECTIONS_PER_ADDRESS", 64, least=1, most=65536
    )
    probe_reserve_connections: int = whole_number(
        "APISERVER_PROBE_RESERVE_CONNECTIONS", 16, least=0, most=1024
    )
    handshake_timeout_seconds: float = seconds(
        "APISERVER_TLS_HANDSHAKE_TIMEOUT_SECONDS", 5.0, most=ONE_MINUTE
    )
    header_timeout_seconds: float = seconds(
        "APISERVER_HEADER_TIMEOUT_SECONDS", 5.0, most=ONE_MINUTE
    )
    tls_cert_path: Path = Field(TLS_DIR / "tls.crt", alias="APISERVER_TLS_CERT_PATH")
    tls_key_path: Path = Field(TLS_DIR / "tls.key", alias="APISERVER_TLS_KEY_PATH")
    drain_timeout_seconds: float = seconds("DRAIN_TIMEOUT_SECONDS", 900.0, most=ONE_WEEK)
    eviction_retry_interval_seconds: float = seconds(
        "EVICTION_RETRY_INTERVAL_SECONDS", 5.0, most=ONE_HOUR
    )
    pod_deletion_timeout_seconds: float = seconds(
        "POD_DELETION_TIMEOUT_SECONDS", 300.0, most=ONE_DAY
    )
    token_review_cache_seconds: float = seconds(
        "TOKEN_REVIEW_CACHE_SECONDS", 30.0, most=ONE_HOUR, zero=True
    )
    token_refusal_cache_seconds: float = seconds(
        "TOKEN_REFUSAL_CACHE_SECONDS", 5.0, most=300.0, zero=True
    )
    token_review_threads: int = whole_number("TOKEN_REVIEW_THREADS", 8, least=1, most=64)
    token_verification: Literal["local", "tokenreview"] = Field(
        "local", alias="APISERVER_TOKEN_VERIFICATION"
    )
    namespace: str = Field(
        default_factory=pod_namespace,
        pattern=DNS_LABEL_PATTERN,
        max_length=DNS_LABEL_MAX,
        alias="BRUPOP_NAMESPACE",
    )
    cluster: Literal["kubernetes", "memory"] = Field("kubernetes", alias="BRUPOP_CLUSTER")
    logging_formatter: LoggingFormatter = Field("auto", alias="LOGGING_FORMATTER")
    tracing_filter_directive: FilterDirective = Field("info", alias="TRACING_FILTER_DIRECTIVE")
    termination_log: Path = Field(Path("/dev/termination-log"), alias="TERMINATION_LOG")
    # Protected namespaces (kube-system, ...) a forced drain may delete pods in (docs/policy.md).
    force_allowance: str = Field("", alias=FORCE_ALLOWANCE_SETTING)

    @field_validator("force_allowance")
    @classmethod
    def _force_allowance_parses(cls, value: str) -> str:
        try:
            read_force_allowance(value)
        except ForceAllowanceError as error:
            raise ValueError(f"{error} (expected namespace names, comma-separated)") from None
        return value

    @property
    def force_namespaces_allowed(self) -> frozenset[str]:
        """The namespaces APISERVER_FORCE_NAMESPACES_ALLOWED lists."""
        return read_force_allowance(self.force_allowance)

    @model_validator(mode="after")
    def _rules_across_settings(self) -> ApiserverSettings:
        if self.cluster == "kubernetes" and "internal_port" not in self.model_fields_set:
            raise rule_broken("APISERVER_INTERNAL_PORT", "required when BRUPOP_CLUSTER=kubernetes")
        if self.eviction_retry_interval_seconds >= self.drain_timeout_seconds:
            raise rule_broken(
                "EVICTION_RETRY_INTERVAL_SECONDS",
                "must be shorter than DRAIN_TIMEOUT_SECONDS"
                f" ({self.eviction_retry_interval_seconds:g} >= {self.drain_timeout_seconds:g})",
            )
        return self

    @model_validator(mode="after")
    def _webhook_port_is_its_own(self) -> ApiserverSettings:
        if self.webhook_port == self.internal_port:
            raise rule_broken("APISERVER_WEBHOOK_PORT", "must differ from APISERVER_INTERNAL_PORT")
        return self

    def server_limits(self) -> ServerLimits:
        """Bounds on connections and request heads."""
        return ServerLimits(
            connections=ConnectionLimits(
                max_connections=self.max_connections,
                webhook_max_connections=self.webhook_max_connections,
                per_address=self.max_connections_per_address,
                probe_reserve=self.probe_reserve_connections,
                handshake_timeout_seconds=self.handshake_timeout_seconds,
            ),
            head=HeadLimits(header_timeout_seconds=self.header_timeout_seconds),
        )

    def drain_timings(self) -> DrainTimings:
        """The drain's bounds and retry interval."""
        return DrainTimings(
            timeout_seconds=self.drain_timeout_seconds,
            retry_interval_seconds=self.eviction_retry_interval_seconds,
            deletion_timeout_seconds=self.pod_deletion_timeout_seconds,
        )


def load_settings(environ: Mapping[str, str] | None = None) -> ApiserverSettings:
    """Read the environment (`os.environ` unless given); SettingsError with one line naming
    the variable on a bad value."""
    return read_settings(ApiserverSettings, os.environ if environ is None else environ)
