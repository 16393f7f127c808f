"""What is left of a drain, and which budgets hold it up."""

from brupop.domain.cluster.drain_progress import drain_progress, must_leave
from brupop.domain.cluster.objects import (
    MIRROR_POD_ANNOTATION,
    OwnerReference,
    Pod,
    PodDisruptionBudget,
    PodPhase,
)


def _pod(name: str, **extra: object) -> Pod:
    fields: dict[str, object] = {"namespace": "shop", "uid": name, "node_name": "n1"}
    fields.update(extra)
    return Pod(name=name, **fields)  # type: ignore[arg-type]


def test_daemonset_mirror_finished_and_terminating_pods_do_not_have_to_leave() -> None:
    assert not must_leave(_pod("ds", owners=(OwnerReference("DaemonSet", "agent", True),)))
    assert not must_leave(_pod("static", annotations={MIRROR_POD_ANNOTATION: "x"}))
    assert not must_leave(_pod("job", phase=PodPhase.SUCCEEDED))
    assert not must_leave(_pod("going", terminating=True))
    assert must_leave(_pod("web", owners=(OwnerReference("ReplicaSet", "web-1", True),)))


def test_a_budget_covering_a_remaining_pod_is_named() -> None:
    budget = PodDisruptionBudget("web-pdb", "shop", selector={"app": "web"}, min_available=2)
    other = PodDisruptionBudget("db-pdb", "shop", selector={"app": "db"}, min_available=1)
    progress = drain_progress(
        [_pod("web-1", labels={"app": "web"}), _pod("cache")], [budget, other]
    )
    assert progress.remaining == ("shop/cache", "shop/web-1")
    assert progress.budgets == ("shop/web-pdb",)
    assert progress.describe() == "PodDisruptionBudget shop/web-pdb (pods shop/cache, shop/web-1)"
    assert not progress.done


def test_pods_without_budgets_are_counted() -> None:
    progress = drain_progress([_pod(f"p{i}") for i in range(5)], [])
    assert progress.describe().startswith("5 pods still on the node (shop/p0, shop/p1, shop/p2 ...")


def test_nothing_left_is_done() -> None:
    assert drain_progress([_pod("ds", owners=(OwnerReference("DaemonSet", "a", True),))], []).done
