"""`brupop simulate --policy FILE --pause-at S --resume-at S`: the file goes through the
controller's own reader (a spec the controller would not use stops simulate with exit code 2
and one line saying why), and the pause moments are bounded and ordered."""

from __future__ import annotations

from pathlib import Path

import pytest

from brupop.cli.fleet_description.policy_file import POLICY_FILE_MAX_BYTES
from brupop.simulation.flags.options import OptionError, parse_options
from brupop.simulation.main import main
from tests.unit.simulation.test_options import UNUSABLE

GOOD = """\
apiVersion: brupop.bottlerocket.aws/v1
kind: BottlerocketUpdatePolicy
metadata:
  name: default
  namespace: brupop-bottlerocket-aws
spec:
  paused: true
  haltAfterFailures: 3
"""


def _file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "policy.yaml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_a_good_policy_file_is_kept_as_the_object_to_apply(tmp_path: Path) -> None:
    options = parse_options(["--policy", _file(tmp_path, GOOD)])
    assert options.policy is not None
    assert options.policy["metadata"]["name"] == "default"
    assert options.policy["spec"] == {"paused": True, "haltAfterFailures": 3}


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (GOOD.replace("haltAfterFailures: 3", "haltAfterFailures: 0"), "spec.haltAfterFailures"),
        (GOOD + "  canary: {selector: 'zone in (a'}\n", "spec.canary.selector: unbalanced"),
        (GOOD + "  surprise: 1\n", "spec.surprise"),
        (GOOD.replace("name: default", "name: staging"), "only the policy named 'default'"),
        (
            GOOD.replace("kind: BottlerocketUpdatePolicy", "kind: Pod"),
            "expected apiVersion brupop.bottlerocket.aws/v1 and kind BottlerocketUpdatePolicy, "
            "not apiVersion 'brupop.bottlerocket.aws/v1' and kind 'Pod'",
        ),
        (
            "apiVersion: x\n",
            "not apiVersion 'x' and kind (none)",
        ),
        ("spec: [unclosed\n", "not valid YAML (line 2)"),
        (GOOD + "---\n" + GOOD, "expected one BottlerocketUpdatePolicy object"),
        ("- a list\n", "expected one BottlerocketUpdatePolicy object"),
        (GOOD + "  hooks: &loop [*loop]\n", "more than 65536 values once its aliases are expanded"),
    ],
)
def test_a_policy_the_controller_would_not_use_is_refused_with_its_reason(
    tmp_path: Path, text: str, reason: str
) -> None:
    with pytest.raises(OptionError, match=r"^--policy: ") as refused:
        parse_options(["--policy", _file(tmp_path, text)])
    assert reason in str(refused.value)


@pytest.mark.parametrize(
    ("text", "key", "line"),
    [
        (GOOD + "  haltAfterFailures: 5\n", "haltAfterFailures", 9),
        (GOOD.replace("  name: default\n", "  name: default\n  name: staging\n"), "name", 5),
        (GOOD + "  canary: {count: 1, count: 2}\n", "count", 9),
    ],
    ids=["in-spec", "in-metadata", "in-a-flow-mapping"],
)
def test_a_policy_file_with_a_key_written_twice_is_refused_naming_the_key(
    tmp_path: Path, text: str, key: str, line: int
) -> None:
    with pytest.raises(OptionError) as refused:
        parse_options(["--policy", _file(tmp_path, text)])
    assert f"the key '{key}' appears twice in one mapping (line {line})" in str(refused.value)


def test_a_policy_file_may_repeat_a_key_in_other_mappings_and_override_a_merged_one(
    tmp_path: Path,
) -> None:
    text = (
        GOOD
        + "  healthGate: &gate {timeoutSeconds: 60}\n  hooks: {<<: *gate, timeoutSeconds: 30}\n"
    )
    options = parse_options(["--policy", _file(tmp_path, text)])
    assert options.policy is not None
    assert options.policy["spec"]["healthGate"] == {"timeoutSeconds": 60}
    assert options.policy["spec"]["hooks"] == {"timeoutSeconds": 30}


def test_a_missing_or_huge_policy_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(OptionError, match="cannot be read"):
        parse_options(["--policy", str(tmp_path / "absent.yaml")])
    huge = _file(tmp_path, GOOD + "#" * POLICY_FILE_MAX_BYTES)
    with pytest.raises(OptionError, match="larger than"):
        parse_options(["--policy", huge])


def test_a_bad_policy_stops_simulate_with_exit_code_2_and_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _file(tmp_path, GOOD.replace("haltAfterFailures: 3", "haltAfterFailures: -1"))

    assert main(["--policy", path]) == 2

    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"brupop simulate: --policy: {path}: spec.haltAfterFailures: ")


@pytest.mark.parametrize("value", UNUSABLE)
@pytest.mark.parametrize("flag", ["--pause-at", "--resume-at"])
def test_an_unusable_pause_moment_is_refused_naming_its_flag(flag: str, value: str) -> None:
    with pytest.raises(OptionError, match=f"^{flag}: "):
        parse_options([f"{flag}={value}"])


def test_the_resume_must_come_after_the_pause() -> None:
    with pytest.raises(OptionError, match=r"^--resume-at: 2 must be later than --pause-at"):
        parse_options(["--pause-at", "3", "--resume-at", "2"])
    options = parse_options(["--pause-at", "0", "--resume-at", "2.5"])
    assert (options.pause_at, options.resume_at) == (0.0, 2.5)


def test_unhealthy_names_nodes_of_the_fleet_and_refuses_others(tmp_path: Path) -> None:
    gate = _file(tmp_path, GOOD + "  healthGate:\n    timeoutSeconds: 3\n")
    argv = ["--nodes", "3", "--policy", gate, "--unhealthy", "node-02", "--unhealthy", "node-03"]
    options = parse_options(argv)
    assert options.unhealthy == ("node-02", "node-03")
    with pytest.raises(OptionError, match="--unhealthy"):
        parse_options(["--nodes", "3", "--unhealthy", "node-09"])
