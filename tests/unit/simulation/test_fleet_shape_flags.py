"""`brupop simulate --zones N --pods-per-node SPEC --do-not-disrupt-pod NODE`: each bounded, a
bad value stops simulate with one line naming its flag (exit code 2), and a good one is kept as
the fleet's shape."""

from __future__ import annotations

import pytest

from brupop.cli.fleet_description.fleet_shape import FleetShape, PodCounts
from brupop.simulation.flags.options import OptionError, parse_options
from brupop.simulation.main import main
from tests.unit.simulation.test_options import UNUSABLE


def test_without_the_flags_the_fleet_has_no_zones_and_the_standard_workloads() -> None:
    assert parse_options([]).shape == FleetShape(zones=None, pods=None, do_not_disrupt=())


def test_zones_are_given_round_robin_from_zone_a() -> None:
    shape = parse_options(["--nodes", "5", "--zones", "3"]).shape

    assert [shape.zone_of(index) for index in range(5)] == [
        "zone-a", "zone-b", "zone-c", "zone-a", "zone-b",
    ]  # fmt: skip


def test_twenty_six_zones_end_at_zone_z() -> None:
    shape = parse_options(["--nodes", "26", "--zones", "26"]).shape

    assert shape.zone_of(25) == "zone-z"


@pytest.mark.parametrize("value", [*UNUSABLE, "0", "27", "two", ""])
def test_an_unusable_zone_count_is_refused_naming_the_flag(value: str) -> None:
    with pytest.raises(OptionError, match=r"^--zones: "):
        parse_options([f"--zones={value}"])


def test_pods_per_node_names_some_nodes_and_gives_the_others_the_default() -> None:
    options = parse_options(["--nodes", "4", "--pods-per-node", "node-02=0, node-01=7,default=4"])
    pods = options.shape.pods

    assert pods == PodCounts(named=(("node-01", 7), ("node-02", 0)), default=4)
    assert [pods.on(name) for name in options.node_names()] == [7, 0, 4, 4]


def test_nodes_not_named_run_no_pods_when_no_default_is_given() -> None:
    pods = parse_options(["--nodes", "3", "--pods-per-node", "node-03=2"]).shape.pods

    assert pods is not None
    assert [pods.on(name) for name in ("node-01", "node-02", "node-03")] == [0, 0, 2]


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        ("node-09=1", "no node 'node-09' in this fleet (node-01..node-03)"),
        ("node-01", "'node-01' is not NODE=COUNT"),
        ("=3", "'=3' is not NODE=COUNT"),
        ("node-01=1,,default=2", "'' is not NODE=COUNT"),
        ("node-01=1,node-01=2", "'node-01' is given twice"),
        ("default=1,default=2", "'default' is given twice"),
        ("node-01=many", "node-01='many' is not a whole number"),
        ("node-01=-1", "node-01=-1 is outside 0..50"),
        ("default=51", "default=51 is outside 0..50"),
        ("default=" + "9" * 30, "is outside 0..50"),
        ("node-01=1," * 5000, "longer than 20000 characters"),
    ],
)
def test_a_bad_pods_per_node_spec_is_refused_with_its_reason(spec: str, reason: str) -> None:
    with pytest.raises(OptionError, match=r"^--pods-per-node: ") as refused:
        parse_options(["--nodes", "3", "--pods-per-node", spec])

    assert reason in str(refused.value)


def test_do_not_disrupt_pods_are_kept_once_per_node_in_the_order_given() -> None:
    argv = ["--nodes", "3"]
    for node in ("node-03", "node-01", "node-03"):
        argv += ["--do-not-disrupt-pod", node]

    assert parse_options(argv).shape.do_not_disrupt == ("node-03", "node-01")


def test_a_do_not_disrupt_pod_on_an_unknown_node_is_refused_naming_the_flag() -> None:
    with pytest.raises(OptionError, match=r"^--do-not-disrupt-pod: no node 'node-7'"):
        parse_options(["--nodes", "3", "--do-not-disrupt-pod", "node-7"])


@pytest.mark.parametrize(
    "argv",
    [["--zones", "99"], ["--pods-per-node", "nobody=1"], ["--do-not-disrupt-pod", "nobody"]],
)
def test_a_bad_shape_flag_ends_with_one_line_and_exit_2(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2

    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"brupop simulate: {argv[0]}: ")
    assert "Traceback" not in err
