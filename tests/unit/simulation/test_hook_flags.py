"""`brupop simulate --hook NAME[:SECONDS|:never]`: the flag names a hook of the --policy and a
bounded delay, and the emulated responder answers, on the Nodes the controller labelled, only
the phases the policy names the hook in, once per label, after its delay."""

from __future__ import annotations

from pathlib import Path

import pytest

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.safety.reboot_hooks import HookPhase
from brupop.simulation.flags.options import OptionError, parse_options
from brupop.simulation.scenarios.hook_responder import EmulatedHook, HookResponder
from tests.support.policy_file import write_policy_file

SPEC = """\
  hooks:
    beforeReboot: [ceph-noout]
    afterReboot: [ceph-noout, ticket]
"""
BEFORE, AFTER = HookPhase.BEFORE_REBOOT, HookPhase.AFTER_REBOOT


def _policy(tmp_path: Path) -> str:
    return write_policy_file(tmp_path, SPEC)


def test_hook_flags_give_a_delay_or_never_and_the_phases_the_policy_names(
    tmp_path: Path,
) -> None:
    options = parse_options(
        ["--policy", _policy(tmp_path), "--hook", "ceph-noout:2.5", "--hook", "ticket:never"]
    )
    assert options.hooks == (
        EmulatedHook("ceph-noout", 2.5, frozenset({BEFORE, AFTER})),
        EmulatedHook("ticket", None, frozenset({AFTER})),
    )
    assert parse_options(["--policy", _policy(tmp_path), "--hook", "ticket"]).hooks == (
        EmulatedHook("ticket", 0.0, frozenset({AFTER})),
    )


@pytest.mark.parametrize(
    "flag", ["unknown:1", "ticket:soon", "ticket:-1", "ticket:86401", "ticket:nan"]
)
def test_a_bad_hook_flag_is_refused_naming_it(tmp_path: Path, flag: str) -> None:
    with pytest.raises(OptionError, match=r"^--hook"):
        parse_options(["--policy", _policy(tmp_path), "--hook", flag])


def test_a_hook_flag_without_a_policy_naming_it_is_refused() -> None:
    with pytest.raises(OptionError, match=r"--hook: 'ticket' is not a hook of the --policy"):
        parse_options(["--hook", "ticket"])


def test_the_responder_answers_a_labelled_node_after_its_delay_in_the_phases_named() -> None:
    cluster = InMemoryCluster()
    cluster.add_node("node-01")
    cluster.add_node("node-02")
    hooks = [
        EmulatedHook("ceph-noout", 2.0, frozenset({BEFORE})),
        EmulatedHook("ticket", None, frozenset({BEFORE})),
    ]
    responder = HookResponder(cluster.nodes, hooks)
    cluster.nodes.set_labels("node-01", {BEFORE.label: "true"})
    cluster.nodes.set_labels("node-02", {AFTER.label: "true"})

    responder.step(10.0)
    responder.step(11.9)
    assert responder.answers == []
    responder.step(12.0)

    assert responder.answers == [("node-01", "before-reboot", "ceph-noout")]
    assert cluster.nodes.get("node-01").annotations == {
        BEFORE.done_annotation("ceph-noout"): "done"
    }
    assert cluster.nodes.get("node-02").annotations == {}, "ceph-noout is no after-reboot hook"


def test_the_responder_answers_again_when_the_label_comes_back() -> None:
    cluster = InMemoryCluster()
    cluster.add_node("node-01")
    responder = HookResponder(cluster.nodes, [EmulatedHook("ceph-noout", 0.0)])
    cluster.nodes.set_labels("node-01", {BEFORE.label: "true"})
    responder.step(1.0)
    cluster.nodes.set_labels("node-01", {BEFORE.label: None})
    cluster.nodes.set_annotations("node-01", {BEFORE.done_annotation("ceph-noout"): None})
    responder.step(2.0)
    cluster.nodes.set_labels("node-01", {BEFORE.label: "true"})
    responder.step(3.0)

    assert responder.answers == [("node-01", "before-reboot", "ceph-noout")] * 2
    assert cluster.nodes.get("node-01").annotations == {
        BEFORE.done_annotation("ceph-noout"): "done"
    }
