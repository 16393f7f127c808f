"""The docs' policy examples and walkthroughs are what `brupop simulate` really does: every
policy example says how a simulated run of it ends, and a run ends that way; the halt
walkthrough of docs/safety.md is compared with a real run of its command."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.e2e.simulate_run import run_simulate
from tests.support.doc_policies import DOCS, PolicyExample, policy_examples

EXAMPLES = policy_examples()


def test_every_policy_example_in_the_docs_says_how_it_ends_in_simulate() -> None:
    silent = [example.name for example in EXAMPLES if example.flags is None]

    assert len(EXAMPLES) >= 9
    assert silent == [], "add a `*Simulated:* `brupop simulate ... --policy FILE` ends `...`` line"


@pytest.mark.e2e
@pytest.mark.parametrize("example", EXAMPLES, ids=[example.name for example in EXAMPLES])
def test_each_policy_example_ends_in_simulate_as_its_doc_says(
    example: PolicyExample, tmp_path: Path
) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(example.yaml, encoding="utf-8")
    flags = [str(policy) if flag == "FILE" else flag for flag in example.flags or ()]

    run = run_simulate(tmp_path, *flags)

    said = next((v for v in example.verdicts if run.last_line.startswith(v)), None)
    assert said is not None, f"{example.name} says {example.verdicts}; the run: {run.last_line}"
    assert run.returncode == (0 if said.startswith("OK") else 1), run.stderr[-2000:]


def _walkthrough() -> tuple[list[str], str]:
    """The halt walkthrough of docs/safety.md: its command's flags, and the output it shows."""
    text = (DOCS / "safety.md").read_text(encoding="utf-8")
    section = text[text.index("## Walkthrough: a simulated rollout that halts") :]
    command = re.search(r"`brupop simulate ([^`]*--policy policy\.yaml[^`]*)`", section)
    shown = re.search(r"^```\n(brupop simulate: summary.*?)^```$", section, re.M | re.S)
    assert command is not None and shown is not None
    return command[1].split(), shown[1]


@pytest.mark.e2e
def test_the_halt_walkthrough_of_safety_md_matches_a_real_run_of_its_command(
    tmp_path: Path,
) -> None:
    flags, shown = _walkthrough()
    example = next(
        e for e in EXAMPLES if e.page == "safety.md" and "--unhealthy" in (e.flags or ())
    )
    policy = tmp_path / "policy.yaml"
    policy.write_text(example.yaml, encoding="utf-8")

    run = run_simulate(tmp_path, *[str(policy) if f == "policy.yaml" else f for f in flags])

    assert run.returncode == 1, run.stdout[-3000:]
    doc_lines = shown.strip().splitlines()
    assert run.last_line == doc_lines[-1]
    doc_rows = [line.split()[:6] for line in doc_lines if line.startswith(" node-")]
    run_rows = [line.split()[:6] for line in run.stdout.splitlines() if line.startswith(" node-")]
    assert run_rows == doc_rows, "node, from, to, state, reboots, restarts"
    doc_reasons = [line for line in doc_lines if re.match(r"node-\d+: ", line)]
    assert doc_reasons == [
        line for line in run.stdout.splitlines() if re.match(r"node-\d+: ", line)
    ]
    assert run.node("node-02")["health_gate"] == "failed"
    assert [n["name"] for n in run.report["nodes"] if n["started_at"] is not None] == ["node-02"]
