"""A pod's effective request is what the scheduler reserves; amounts are said in cores and Gi/Mi."""

from __future__ import annotations

from brupop.domain.cluster.resources import (
    NO_RESOURCES,
    InitContainerRequest,
    Resources,
    describe_cpu,
    describe_memory,
    effective_request,
)

MI = 1024**2
GI = 1024**3


def test_a_pod_without_containers_requests_nothing() -> None:
    assert effective_request([]) == NO_RESOURCES


def test_containers_requests_add_up() -> None:
    total = effective_request([Resources(250, 64 * MI), Resources(500, 128 * MI)])
    assert total == Resources(750, 192 * MI)


def test_a_larger_init_container_sets_the_request_per_resource() -> None:
    total = effective_request(
        [Resources(250, 64 * MI), Resources(250, 64 * MI)],
        [InitContainerRequest(Resources(1000, 32 * MI)), InitContainerRequest(Resources(100, MI))],
    )
    assert total == Resources(1000, 128 * MI)


def test_sidecars_run_beside_the_containers_and_the_later_init_containers() -> None:
    total = effective_request(
        [Resources(100, 10 * MI)],
        [
            InitContainerRequest(Resources(200, 20 * MI), sidecar=True),
            InitContainerRequest(Resources(250, 5 * MI)),
        ],
    )
    # containers + sidecar = 300m / 30 Mi; the init container beside the sidecar = 450m / 25 Mi
    assert total == Resources(450, 30 * MI)


def test_cpu_is_said_in_cores_with_at_most_one_decimal_rounded_up() -> None:
    assert describe_cpu(2500) == "2.5"
    assert describe_cpu(2000) == "2"
    assert describe_cpu(50) == "0.1"
    assert describe_cpu(1234) == "1.3"


def test_memory_is_said_in_gi_from_one_gi_and_in_mi_below() -> None:
    assert describe_memory(3 * GI // 2) == "1.5 Gi"
    assert describe_memory(2 * GI) == "2 Gi"
    assert describe_memory(512 * MI) == "512 Mi"
    assert describe_memory(1) == "1 Mi"


def test_an_amount_names_only_what_it_has() -> None:
    assert Resources(2500, 3 * GI // 2).describe() == "2.5 CPU, 1.5 Gi memory"
    assert Resources(0, 256 * MI).describe() == "256 Mi memory"
    assert NO_RESOURCES.describe() == "none"


def test_an_amount_covers_another_only_with_enough_of_both() -> None:
    assert Resources(1000, GI).covers(Resources(1000, GI))
    assert not Resources(1000, GI).covers(Resources(1001, 1))
    assert not Resources(1000, GI).covers(Resources(1, GI + 1))
