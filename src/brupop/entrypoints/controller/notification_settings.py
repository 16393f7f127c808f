"""The controller's notification settings, read once at start from the environment.

`CLUSTER_NAME` (in every message), up to `MAX_WEBHOOKS` webhooks numbered from 1:
`NOTIFICATION_WEBHOOK_<n>_URL` (http or https), `NOTIFICATION_WEBHOOK_<n>_FORMAT` (json | slack)
and `NOTIFICATION_WEBHOOK_<n>_EVENTS` (a comma-separated list of kinds, or `all`), and the bounds
of delivery: `NOTIFICATION_QUEUE_SIZE` (each webhook's own queue), `NOTIFICATION_TIMEOUT_SECONDS`
(the deadline of one whole exchange: connect, send, headers and body), `NOTIFICATION_ATTEMPTS`.
A bad value stops the process with one line naming the variable (exit 2). The Helm chart writes
these from `notifications.webhooks`, a `urlFromSecret` as an env var from a Secret's key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from brupop.adapters.notifications.webhook import DeliveryBounds, WebhookTarget
from brupop.domain.reporting.notification_formats import NotificationFormat
from brupop.domain.reporting.notifications import NotificationKind
from brupop.entrypoints.environment_values import read_settings
from brupop.entrypoints.settings_error import ONE_MINUTE, SettingsError, seconds, whole_number

MAX_WEBHOOKS = 8
URL_LIMIT = 2048
CLUSTER_NAME_LIMIT = 128
_PREFIX = "NOTIFICATION_WEBHOOK_"


class _Delivery(BaseModel):
    """The numeric bounds, checked by the shared helpers."""

    model_config = ConfigDict(populate_by_name=False, extra="ignore")

    cluster_name: str = Field("", alias="CLUSTER_NAME", max_length=CLUSTER_NAME_LIMIT)
    queue_size: int = whole_number("NOTIFICATION_QUEUE_SIZE", 256, least=1, most=10_000)
    timeout_seconds: float = seconds("NOTIFICATION_TIMEOUT_SECONDS", 5.0, most=ONE_MINUTE)
    attempts: int = whole_number("NOTIFICATION_ATTEMPTS", 4, least=1, most=10)


@dataclass(frozen=True)
class NotificationSettings:
    """Who hears about the rollout, and how hard delivery tries."""

    cluster_name: str = ""
    targets: tuple[WebhookTarget, ...] = ()
    delivery: DeliveryBounds = field(default_factory=DeliveryBounds)


def load_notification_settings(environ: Mapping[str, str]) -> NotificationSettings:
    """Read and check the notification variables of `environ`."""
    bounds = read_settings(_Delivery, environ)
    numbered = {
        key.removeprefix(_PREFIX).split("_", 1)[0]
        for key in environ
        if key.startswith(_PREFIX) and key.endswith("_URL")
    }
    for index in sorted(numbered):
        if not index.isdigit() or not 1 <= int(index) <= MAX_WEBHOOKS:
            raise SettingsError(
                f"{_PREFIX}{index}_URL", f"webhooks are numbered 1 to {MAX_WEBHOOKS}"
            )
    targets = tuple(
        _target(environ, index)
        for index in range(1, MAX_WEBHOOKS + 1)
        if environ.get(f"{_PREFIX}{index}_URL")
    )
    delivery = DeliveryBounds(
        queue_size=bounds.queue_size,
        timeout_seconds=bounds.timeout_seconds,
        attempts=bounds.attempts,
    )
    return NotificationSettings(bounds.cluster_name, targets, delivery)


def _target(environ: Mapping[str, str], index: int) -> WebhookTarget:
    name = f"{_PREFIX}{index}"
    url = environ[f"{name}_URL"].strip()
    problem = url_problem(url)
    if problem:
        raise SettingsError(f"{name}_URL", problem)
    form = environ.get(f"{name}_FORMAT", "json").strip().lower()
    if form not in {f.value for f in NotificationFormat}:
        raise SettingsError(f"{name}_FORMAT", f"json or slack (got {form[:40]!r})")
    return WebhookTarget(
        f"webhook-{index}",
        url,
        NotificationFormat(form),
        parse_kinds(f"{name}_EVENTS", environ.get(f"{name}_EVENTS", "all")),
    )


def url_problem(url: str) -> str | None:
    """Why `url` cannot be a webhook, or None (the URL itself is never echoed: it may hold a
    secret token)."""
    if len(url) > URL_LIMIT:
        return f"longer than {URL_LIMIT} characters"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError as error:
        return f"not a URL ({error})"
    if parts.scheme not in ("http", "https"):
        return "must start with http:// or https://"
    if not parts.hostname:
        return "has no host"
    if any(c.isspace() for c in url):
        return "contains white space"
    return None


def parse_kinds(variable: str, text: str) -> frozenset[NotificationKind]:
    """`all`, or a comma-separated list of notification kinds."""
    words = [w.strip().lower() for w in text.split(",") if w.strip()]
    if not words or words == ["all"]:
        return frozenset(NotificationKind)
    known = {k.value for k in NotificationKind}
    for word in words:
        if word not in known:
            accepted = ", ".join(sorted(known))
            raise SettingsError(variable, f"unknown event {word[:40]!r} (all, or of: {accepted})")
    return frozenset(NotificationKind(w) for w in words)
