"""`brupop simulate --report` is checked before the run, so a long run never loses its report."""

from __future__ import annotations

from pathlib import Path

import pytest

from brupop.simulation.flags.options import parse_options
from brupop.simulation.main import EXIT_USAGE, main


def test_a_directory_as_report_stops_the_simulation_at_start_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["--report", str(tmp_path), "--work-dir", str(tmp_path / "work")])

    assert code == EXIT_USAGE
    err = capsys.readouterr().err
    assert f"--report: {tmp_path} is a directory" in err
    assert "Traceback" not in err
    assert not (tmp_path / "work").exists()  # nothing was started


def test_a_report_below_a_regular_file_stops_the_simulation_at_start_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "notes.txt"
    blocker.write_text("a file, not a directory\n")

    code = main(["--report", str(blocker / "out" / "report.json")])

    assert code == EXIT_USAGE
    assert f"{blocker} is a file, not a directory" in capsys.readouterr().err


def test_a_report_in_directories_yet_to_be_made_is_accepted(tmp_path: Path) -> None:
    options = parse_options(["--report", str(tmp_path / "new" / "dir" / "report.json")])

    assert options.report == tmp_path / "new" / "dir" / "report.json"
