"""The chart on a real control plane: its namespace, CRDs and RBAC applied from the one-file
manifest (the chart rendered with its defaults), and KubernetesClusters that call the API as
the chart's ServiceAccounts, with TokenRequest tokens, so RBAC is enforced for real."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from brupop.adapters.kubernetes.cluster import KubernetesCluster, bounded
from tests.support.polling import wait_until

MANIFEST = Path(__file__).resolve().parents[3] / "deploy" / "bottlerocket-update-operator.yaml"
NAMESPACE = "brupop-bottlerocket-aws"
CONTROLLER_ACCOUNT = "brupop-controller-service-account"
APISERVER_ACCOUNT = "brupop-apiserver-service-account"
RBAC_KINDS = ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")
Doc = dict[str, Any]


def chart_documents(*kinds: str) -> list[Doc]:
    """The manifest's documents of these kinds, in the manifest's order."""
    with MANIFEST.open() as stream:
        return [doc for doc in yaml.safe_load_all(stream) if doc and doc["kind"] in kinds]


def apply_chart(api: client.ApiClient) -> None:
    """The chart's Namespace, CRDs (created when absent: a test elsewhere may have installed
    them with a webhook) and every RBAC document (created, or replaced when present)."""
    for namespace in chart_documents("Namespace"):
        _create_or_keep(client.CoreV1Api(api).create_namespace, namespace)
    extensions = client.ApiextensionsV1Api(api)
    for crd in chart_documents("CustomResourceDefinition"):
        _create_or_keep(extensions.create_custom_resource_definition, _no_webhook(crd))
        name = crd["metadata"]["name"]
        wait_until(
            functools.partial(crd_established, extensions, name),
            f"CRD {name} established",
            seconds=30,
        )
    for doc in chart_documents(*RBAC_KINDS):
        apply_rbac_document(api, doc)


def apply_rbac_document(api: client.ApiClient, doc: Doc) -> None:
    """Create one ServiceAccount, Role, ClusterRole or binding; replace it when it exists."""
    core, rbac = client.CoreV1Api(api), client.RbacAuthorizationV1Api(api)
    name, namespace = doc["metadata"]["name"], doc["metadata"].get("namespace")
    create, replace = {
        "ServiceAccount": (core.create_namespaced_service_account, None),
        "Role": (rbac.create_namespaced_role, rbac.replace_namespaced_role),
        "RoleBinding": (rbac.create_namespaced_role_binding, rbac.replace_namespaced_role_binding),
        "ClusterRole": (rbac.create_cluster_role, rbac.replace_cluster_role),
        "ClusterRoleBinding": (rbac.create_cluster_role_binding, rbac.replace_cluster_role_binding),
    }[doc["kind"]]
    scope = (namespace,) if namespace else ()
    try:
        create(*scope, doc)
    except ApiException as error:
        if error.status != 409:
            raise
        if replace is not None:  # a ServiceAccount is kept: replacing it changes nothing here
            replace(name, *scope, doc)


def service_account_token(
    api: client.ApiClient, account: str, namespace: str = NAMESPACE, seconds: int = 3600
) -> str:
    """A TokenRequest token of `account`, for the API's own audience."""
    request = client.AuthenticationV1TokenRequest(
        spec=client.V1TokenRequestSpec(audiences=[], expiration_seconds=seconds)
    )
    answer = client.CoreV1Api(api).create_namespaced_service_account_token(
        account, namespace, request
    )
    return str(answer.status.token)


def token_api_client(server: str, ca: Path, token: str) -> client.ApiClient:
    """An ApiClient that presents `token` and trusts the cluster's CA, bounded as brupop's."""
    configuration = bounded(client.Configuration())
    configuration.host = server
    configuration.ssl_ca_cert = str(ca)
    configuration.api_key = {"authorization": f"Bearer {token}"}
    return client.ApiClient(configuration)


def cluster_as(
    api: client.ApiClient, ca: Path, account: str, *, component: str = "brupop"
) -> KubernetesCluster:
    """brupop's KubernetesCluster calling the API as the chart's ServiceAccount `account`."""
    token = service_account_token(api, account)
    return KubernetesCluster(
        token_api_client(api.configuration.host, ca, token), NAMESPACE, component=component
    )


def _create_or_keep(create: Callable[[Doc], object], doc: Doc) -> None:
    try:
        create(doc)
    except ApiException as error:
        if error.status != 409:
            raise


def _no_webhook(crd: Doc) -> Doc:
    """The CRD without its conversion webhook: no brupop apiserver serves it here, and these
    tests read and write the stored version only."""
    spec = dict(crd["spec"]) | {"conversion": {"strategy": "None"}}
    metadata = {k: v for k, v in crd["metadata"].items() if k != "annotations"}
    return crd | {"metadata": metadata, "spec": spec}


def crd_established(extensions: client.ApiextensionsV1Api, name: str) -> bool:
    """The kube-apiserver serves CRD `name` (its Established condition is True)."""
    conditions = extensions.read_custom_resource_definition(name).status.conditions or []
    return any(c.type == "Established" and c.status == "True" for c in conditions)
