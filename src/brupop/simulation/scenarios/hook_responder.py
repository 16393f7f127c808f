"""The `--hook NAME[:SECONDS|:never]` scenario: an emulated reboot-hook responder.

It does what a hook's DaemonSet would do in a cluster: it watches the Nodes for the
controller's `brupop.bottlerocket.aws/before-reboot=true` (or `after-reboot=true`) label and,
SECONDS after it first saw the label, writes `brupop.bottlerocket.aws/<phase>.NAME=done` on that
Node, for the phases the policy names NAME in; with `never` it never answers, so the node fails
on the policy's hook timeout. A label removed and set again (the next phase, the next update) is
answered again. Stepped from the simulation's loop, in the simulate process, over the in-memory
cluster.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from brupop.domain.safety.reboot_hooks import HOOK_DONE, HOOK_LABEL_VALUE, HookPhase
from brupop.ports.cluster.node_repository import NodeRepository

MAX_HOOKS = 20


@dataclass(frozen=True)
class EmulatedHook:
    """One `--hook`: its name, after how many seconds it answers (None: never), and the
    phases the policy names it in (it answers only those, as a real hook would)."""

    name: str
    after_seconds: float | None = 0.0
    phases: frozenset[HookPhase] = frozenset(HookPhase)


class HookResponder:
    """Answers the emulated hooks on the Nodes that ask for them."""

    def __init__(self, nodes: NodeRepository, hooks: Iterable[EmulatedHook]) -> None:
        self._nodes = nodes
        self._hooks = tuple(hooks)
        self._asked: dict[tuple[str, HookPhase], float] = {}  # when each label was first seen
        self._answered: set[tuple[str, HookPhase, str]] = set()
        self.answers: list[tuple[str, str, str]] = []  # (node, phase, hook), in order

    def step(self, now: float) -> None:
        """Note newly labelled Nodes and answer the hooks whose time has come (`now`:
        monotonic seconds)."""
        if not self._hooks:
            return
        asking: set[tuple[str, HookPhase]] = set()
        for phase in HookPhase:
            for labelled in self._nodes.list({phase.label: HOOK_LABEL_VALUE}).items:
                asking.add((labelled.name, phase))
        for key in asking:
            self._asked.setdefault(key, now)
        for key in list(self._asked):
            if key not in asking:  # the phase ended: a new label is a new question
                del self._asked[key]
                self._answered = {a for a in self._answered if a[:2] != key}
        for (node, phase), since in sorted(self._asked.items()):
            for hook in self._hooks:
                self._answer(node, phase, hook, now - since)

    def _answer(self, node: str, phase: HookPhase, hook: EmulatedHook, waited: float) -> None:
        if hook.after_seconds is None or waited < hook.after_seconds:
            return
        if phase not in hook.phases:
            return
        if (node, phase, hook.name) in self._answered:
            return
        self._nodes.set_annotations(node, {phase.done_annotation(hook.name): HOOK_DONE})
        self._answered.add((node, phase, hook.name))
        self.answers.append((node, phase.value, hook.name))
