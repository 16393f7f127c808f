"""Tolerations match taints as the scheduler matches them."""

from __future__ import annotations

from brupop.domain.cluster.taints import (
    EXISTS,
    NO_EXECUTE,
    NO_SCHEDULE,
    PREFER_NO_SCHEDULE,
    Taint,
    Toleration,
    blocking_taints,
)

GPU = Taint("nvidia.com/gpu", "true", NO_SCHEDULE)


def test_equal_needs_the_same_key_and_value() -> None:
    assert Toleration("nvidia.com/gpu", "Equal", "true").tolerates(GPU)
    assert not Toleration("nvidia.com/gpu", "Equal", "false").tolerates(GPU)
    assert not Toleration("other", "Equal", "true").tolerates(GPU)


def test_an_empty_operator_means_equal() -> None:
    assert Toleration("nvidia.com/gpu", "", "true").tolerates(GPU)
    assert not Toleration("nvidia.com/gpu", "", "").tolerates(GPU)


def test_exists_matches_any_value_of_the_key() -> None:
    assert Toleration("nvidia.com/gpu", EXISTS).tolerates(GPU)
    assert not Toleration("other", EXISTS).tolerates(GPU)


def test_an_empty_key_with_exists_tolerates_every_taint() -> None:
    everything = Toleration("", EXISTS)
    assert everything.tolerates(GPU)
    assert everything.tolerates(Taint("dedicated", "db", NO_EXECUTE))


def test_a_toleration_with_an_effect_matches_only_that_effect() -> None:
    assert not Toleration("nvidia.com/gpu", EXISTS, effect=NO_EXECUTE).tolerates(GPU)
    assert Toleration("nvidia.com/gpu", EXISTS, effect=NO_SCHEDULE).tolerates(GPU)


def test_an_unknown_operator_matches_nothing() -> None:
    assert not Toleration("nvidia.com/gpu", "Gt", "0").tolerates(GPU)


def test_no_schedule_and_no_execute_block_while_prefer_no_schedule_never_does() -> None:
    evicting = Taint("dedicated", "db", NO_EXECUTE)
    soft = Taint("spot", "", PREFER_NO_SCHEDULE)
    assert blocking_taints([GPU, evicting, soft], []) == [GPU, evicting]
    assert blocking_taints([GPU, evicting, soft], [Toleration("dedicated", EXISTS)]) == [GPU]
    assert blocking_taints([soft], []) == []


def test_a_taint_is_written_as_kubectl_shows_it() -> None:
    assert str(GPU) == "nvidia.com/gpu=true:NoSchedule"
    assert str(Taint("spot", "", PREFER_NO_SCHEDULE)) == "spot:PreferNoSchedule"
