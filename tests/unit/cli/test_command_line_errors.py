"""Short errors on the command line: a bad flag is its error line and where the usage is (not
argparse's whole usage block), with a suggestion when a word is a near miss of a known one."""

from __future__ import annotations

import pytest

from brupop.cli import main as cli
from brupop.cli.near_miss import closest
from brupop.cli.status import main as status
from brupop.simulation.flags.options import OptionError, parse_options


def _refused(capsys: pytest.CaptureFixture[str], argv: list[str]) -> list[str]:
    """The stderr lines of `brupop ARGV`, which must exit 2 and print nothing on stdout."""
    assert cli.main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    return captured.err.splitlines()


@pytest.mark.parametrize(
    "argv",
    [
        ["simulate", "--bogus"],
        ["status", "--bogus"],
        ["pause", "--bogus"],
        ["resume", "extra"],
        ["crd", "--bogus"],
        ["status", "--timeout"],
    ],
)
def test_an_argparse_error_is_two_lines_not_the_usage_block(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(argv)

    assert exited.value.code == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2, lines
    assert lines[0].startswith(f"brupop {argv[0]}: ")
    assert lines[1] == f"see `brupop {argv[0]} --help`"


def test_a_mistyped_flag_suggests_the_flag_meant(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["simulate", "--nodse", "3"])

    first = capsys.readouterr().err.splitlines()[0]
    assert first == "brupop simulate: unrecognized arguments: --nodse 3; did you mean '--nodes'?"


def test_a_mistyped_choice_suggests_the_choice_meant(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        status.main(["-o", "tabel"])

    assert capsys.readouterr().err.splitlines()[0].endswith("; did you mean 'table'?")


def test_a_mistyped_command_suggests_the_command_meant(
    capsys: pytest.CaptureFixture[str],
) -> None:
    lines = _refused(capsys, ["stauts"])

    assert lines == [
        "brupop: unknown command 'stauts'; did you mean 'status'?",
        "see `brupop --help`",
    ]


def test_max_concurrent_unlimted_suggests_unlimited() -> None:
    with pytest.raises(OptionError, match=r"did you mean 'unlimited'\?"):
        parse_options(["--max-concurrent", "unlimted"])


def test_a_mistyped_node_suggests_the_node_meant() -> None:
    with pytest.raises(OptionError, match=r"no node 'node2' .*did you mean 'node-02'\?"):
        parse_options(["--nodes", "4", "--unhealthy", "node2"])


def test_a_word_far_from_every_known_one_gets_no_suggestion() -> None:
    assert closest("10", ["unlimited"]) is None
    assert closest("xyz", ["status", "simulate", "pause"]) is None


@pytest.mark.parametrize("url", ["notaurl", "http://", "ftp://host", "http://host:99999"])
def test_status_refuses_a_url_that_is_not_an_http_address_in_plain_words(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        status.main(["--url", url])

    assert exited.value.code == 2
    first = capsys.readouterr().err.splitlines()[0]
    assert first.startswith("brupop status: argument --url: ")
    assert "is not an http:// or https:// address with a host" in first
    assert "unknown url type" not in first
