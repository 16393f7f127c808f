"""The reason `brupop simulate --kubeconfig` gives when its fleet does not come up."""

from __future__ import annotations

from types import SimpleNamespace

from brupop.simulation.fleet.real_cluster.start_up import lag_phrase


def named(name: str, namespace: str | None = None) -> SimpleNamespace:
    return SimpleNamespace(metadata=SimpleNamespace(name=name, namespace=namespace))


def test_a_kind_all_done_adds_nothing_to_the_reason() -> None:
    nodes = [named("node-01"), named("node-02")]

    assert lag_phrase("Nodes Ready", 2, nodes, nodes) == ""


def test_the_reason_gives_the_count_and_names_the_first_three_not_done() -> None:
    pods = [named(f"web-{i}", "default") for i in range(5)]

    phrase = lag_phrase("pods Ready", 5, pods[:1], pods)

    assert phrase == "pods Ready 1/5 (default/web-1, default/web-2, default/web-3)"


def test_objects_not_created_yet_are_counted_though_they_cannot_be_named() -> None:
    created = [named("node-01")]

    assert lag_phrase("Nodes Ready", 4, created, created) == "Nodes Ready 1/4"
