"""The chart's `notifications` values: CLUSTER_NAME and one numbered set of variables per
webhook on the controller, a `urlFromSecret` as an env var from that Secret's key, bad lists
refused at render; the controller accepts what the chart renders."""

from __future__ import annotations

from typing import Any

import pytest

from brupop.domain.reporting.notification_formats import NotificationFormat
from brupop.domain.reporting.notifications import NotificationKind
from brupop.entrypoints.controller.notification_settings import load_notification_settings
from tests.deploy.kube_validation import kubernetes_problems, kubernetes_versions
from tests.deploy.rendering import Helm, Rendered

# The values this file checks; test_chart.py counts them as covered.
NOTIFICATION_VALUES = ("notifications.clusterName", "notifications.webhooks")
CONTROLLER = ("Deployment", "brupop-controller-deployment")
WEBHOOKS = [
    {"url": "https://hooks.example/a", "events": ["node_failed", "fleet_halted"]},
    {"urlFromSecret": {"name": "brupop-slack", "key": "url"}, "format": "slack"},
]


def _env(rendered: Rendered) -> dict[str, dict[str, Any]]:
    return {item["name"]: item for item in rendered.container(*CONTROLLER).get("env", [])}


@pytest.fixture(scope="module")
def notifying(helm: Helm) -> Rendered:
    values = {"notifications": {"clusterName": "prod-eu", "webhooks": WEBHOOKS}}
    return Rendered(helm.template(values))


def test_each_webhook_becomes_numbered_variables_and_the_cluster_is_named(
    notifying: Rendered,
) -> None:
    env = _env(notifying)
    assert env["CLUSTER_NAME"]["value"] == "prod-eu"
    assert env["NOTIFICATION_WEBHOOK_1_URL"]["value"] == "https://hooks.example/a"
    assert env["NOTIFICATION_WEBHOOK_1_FORMAT"]["value"] == "json"
    assert env["NOTIFICATION_WEBHOOK_1_EVENTS"]["value"] == "node_failed,fleet_halted"
    assert env["NOTIFICATION_WEBHOOK_2_FORMAT"]["value"] == "slack"
    assert env["NOTIFICATION_WEBHOOK_2_EVENTS"]["value"] == "all"


def test_a_url_from_a_secret_is_an_env_var_from_that_secrets_key(notifying: Rendered) -> None:
    item = _env(notifying)["NOTIFICATION_WEBHOOK_2_URL"]
    assert "value" not in item
    assert item["valueFrom"] == {"secretKeyRef": {"name": "brupop-slack", "key": "url"}}


def test_the_controller_accepts_the_rendered_settings(notifying: Rendered) -> None:
    env = {
        k: v.get("value", "https://from-the-secret.example/x") for k, v in _env(notifying).items()
    }
    settings = load_notification_settings(env)
    assert settings.cluster_name == "prod-eu"
    first, second = settings.targets
    assert first.kinds == {NotificationKind.NODE_FAILED, NotificationKind.FLEET_HALTED}
    assert second.format is NotificationFormat.SLACK


def test_the_default_render_sets_no_notification_variable(manifest: Rendered) -> None:
    names = set(_env(manifest))
    assert not {n for n in names if n.startswith("NOTIFICATION_") or n == "CLUSTER_NAME"}


@pytest.mark.parametrize("version", [kubernetes_versions()[0], kubernetes_versions()[-1]])
def test_the_render_with_webhooks_validates(version: str, notifying: Rendered) -> None:
    assert kubernetes_problems(notifying.get(*CONTROLLER), version) in ([], None)


@pytest.mark.parametrize(
    ("webhooks", "message"),
    [
        ([{"format": "slack"}], "missing property 'url'"),
        ([{"urlFromSecret": {"name": "s"}}], "urlFromSecret': missing property 'key'"),
        ([{"url": f"https://hooks.example/{i}"} for i in range(9)], "maxItems: got 9, want 8"),
    ],
)
def test_a_webhook_list_the_controller_could_not_use_is_refused_at_render(
    helm: Helm, webhooks: list[dict[str, Any]], message: str
) -> None:
    with pytest.raises(AssertionError, match=message):
        helm.template({"notifications": {"webhooks": webhooks}})
