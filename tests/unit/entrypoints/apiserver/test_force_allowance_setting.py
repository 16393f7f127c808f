"""APISERVER_FORCE_NAMESPACES_ALLOWED: the protected namespaces a forced drain may delete pods
in (none by default); the apiserver's own namespace is protected; a bad value stops the
apiserver naming the variable."""

from __future__ import annotations

import pytest

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.entrypoints.apiserver.container import ApiserverContainer, options_from
from brupop.entrypoints.apiserver.settings import load_settings
from brupop.entrypoints.settings_error import SettingsError
from brupop.ports.errors import DrainFailedError
from tests.unit.services.apiserver.drain_fakes import SteppingClock

NS = "update-ops"


def _forcing_cluster(clock: SteppingClock) -> InMemoryCluster:
    """n1 holds one pod its budget never lets go in each of kube-system, NS and apps; the
    policy forces all three after 10 s."""
    cluster = InMemoryCluster(NS, clock=clock)
    cluster.add_node("n1")
    for namespace in ("kube-system", NS, "apps"):
        cluster.add_pod(namespace, "blocker", "n1", labels={"app": "blocker"})
        cluster.add_disruption_budget(namespace, "pdb", {"app": "blocker"}, min_available=1)
    forced = ["kube-system", NS, "apps"]
    drain = {"timeoutSeconds": 10, "onTimeout": "force", "forceNamespaces": forced}
    cluster.policies.apply({"metadata": {"name": "default"}, "spec": {"drain": drain}})
    return cluster


def _blockers_left(monkeypatch: pytest.MonkeyPatch, allowed: str | None) -> tuple[str, ...]:
    """The pods a drain through the container built from the environment leaves on n1."""
    monkeypatch.setenv("BRUPOP_CLUSTER", "memory")
    monkeypatch.setenv("BRUPOP_NAMESPACE", NS)
    if allowed is not None:
        monkeypatch.setenv("APISERVER_FORCE_NAMESPACES_ALLOWED", allowed)
    clock = SteppingClock()
    container = ApiserverContainer(options=options_from(load_settings()))
    container.cluster.override(_forcing_cluster(clock))
    container.clock.override(clock)
    with pytest.raises(DrainFailedError) as failure:
        container.drainer().drain("n1")
    return tuple(sorted(failure.value.blockers))


def test_by_default_the_apiserver_forces_neither_kube_system_nor_its_own_namespace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert _blockers_left(monkeypatch, None) == ("kube-system/blocker", f"{NS}/blocker")


def test_the_setting_lets_the_apiserver_force_the_namespaces_it_lists(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert _blockers_left(monkeypatch, "kube-system") == (f"{NS}/blocker",)


def test_a_bad_allowance_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRUPOP_CLUSTER", "memory")
    monkeypatch.setenv("APISERVER_FORCE_NAMESPACES_ALLOWED", "kube-system,Kube_Public")

    with pytest.raises(SettingsError, match="APISERVER_FORCE_NAMESPACES_ALLOWED") as refused:
        load_settings()

    assert "'Kube_Public' is not a namespace name" in str(refused.value)
