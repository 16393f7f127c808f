"""`brupop simulate --policy FILE` with a window in a tzdata folder (`US`): exit 2 and one line
naming the field, as the controller would refuse it; never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from brupop.simulation.main import main

POLICY = """\
apiVersion: brupop.bottlerocket.aws/v1
kind: BottlerocketUpdatePolicy
metadata:
  name: default
spec:
  windows:
    - cron: "* * 2-4 * * * *"
      timeZone: {zone}
"""


@pytest.mark.parametrize("zone", ["US", "America", "'../../etc/passwd'"])
def test_a_window_zoneinfo_cannot_load_stops_simulate_with_exit_2_and_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], zone: str
) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(POLICY.format(zone=zone), encoding="utf-8")

    assert main(["--policy", str(path)]) == 2

    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"brupop simulate: --policy: {path}: spec.windows.0.timeZone: ")
