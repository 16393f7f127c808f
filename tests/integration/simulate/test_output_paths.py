"""Every path flag of `brupop simulate` (--report, --timeline, --log-dir, --work-dir) is checked
at start by one rule: missing folders are made, the nearest existing folder must take a new
file (tested by making one), and a refusal is one line naming the flag, exit 2, before any
process starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from brupop.simulation.flags.options import parse_options
from brupop.simulation.main import EXIT_USAGE, main

FILE_FLAGS = {"--report": "report.json", "--timeline": "timeline.svg"}
FOLDER_FLAGS = {"--log-dir": "logs", "--work-dir": "work"}
EVERY_FLAG = {**FILE_FLAGS, **FOLDER_FLAGS}


def _refusal(capsys: pytest.CaptureFixture[str], flag: str, value: str) -> str:
    """The one line `brupop simulate FLAG VALUE` prints; it must exit 2 at once."""
    assert main([flag, value]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"brupop simulate: {flag}: "), err
    assert "Errno" not in err
    return err


@pytest.mark.parametrize(("flag", "name"), EVERY_FLAG.items())
def test_a_folder_that_refuses_files_is_refused_at_start_naming_the_flag(
    flag: str, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # /proc's permission bits say root may write; only making a file there shows it cannot.
    err = _refusal(capsys, flag, f"/proc/brupop-nope/{name}")

    assert "/proc refuses new files" in err


@pytest.mark.parametrize(("flag", "name"), EVERY_FLAG.items())
def test_a_path_below_a_regular_file_is_refused_at_start_naming_the_flag(
    flag: str, name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "notes.txt"
    blocker.write_text("a file, not a directory\n")

    err = _refusal(capsys, flag, str(blocker / "sub" / name))

    assert f"{blocker} is a file, not a directory" in err


@pytest.mark.parametrize("flag", FILE_FLAGS)
def test_a_file_flag_given_a_directory_is_refused(
    flag: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "out.svg"  # a name the picture would accept
    folder.mkdir()

    assert "is a directory" in _refusal(capsys, flag, str(folder))


@pytest.mark.parametrize("flag", FOLDER_FLAGS)
def test_a_folder_flag_given_a_file_is_refused(
    flag: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    existing = tmp_path / "a-file"
    existing.write_text("")

    assert "is a file, not a directory" in _refusal(capsys, flag, str(existing))


@pytest.mark.parametrize(("flag", "name"), EVERY_FLAG.items())
def test_missing_folders_are_accepted_for_every_path_flag_alike(
    flag: str, name: str, tmp_path: Path
) -> None:
    wanted = tmp_path / "new" / "dir" / name

    options = parse_options([flag, str(wanted)])

    assert getattr(options, flag.removeprefix("--").replace("-", "_")) == wanted
    assert not (tmp_path / "new").exists(), "made when the run writes, not while checking"
    assert list(tmp_path.iterdir()) == [], "the check's trial file is removed"
