"""`brupop status --url` and `brupop doctor --controller-url` bound the whole exchange: a
server that trickles its answer, or sends more than any controller would, is one line (exit 1
for status, a failed check for doctor), never a command that waits for ever or reads without
end."""

from __future__ import annotations

import pytest

from brupop.cli.doctor.metrics import check_metrics_at
from brupop.cli.status import reaching
from brupop.cli.status.main import main
from tests.support.trickling_server import trickling_server

SLOW = b" " * 600 + b"{}"  # a byte a tenth of a second: a minute in all


def test_a_status_answer_that_trickles_is_cut_off_at_the_deadline(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with trickling_server(SLOW, pause=0.1) as url:
        assert main(["--url", url, "--timeout", "1"]) == 1

    err = capsys.readouterr().err
    assert err == f"brupop status: cannot read {url}/status: no answer within 1 s\n"


def test_a_status_answer_larger_than_any_status_is_refused(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reaching, "STATUS_MAX_BYTES", 1000)
    with trickling_server(b"{" + b" " * 2000 + b"}", pause=0) as url:
        assert main(["--url", url, "--timeout", "30"]) == 1

    err = capsys.readouterr().err
    assert err == f"brupop status: cannot read {url}/status: larger than 1000 bytes\n"


def test_doctor_fails_the_metrics_check_of_a_server_that_trickles() -> None:
    with trickling_server(SLOW, pause=0.1) as url:
        found = check_metrics_at(url, 1.0)

    assert not found.ok
    assert found.detail == f"cannot read {url}/metrics: no answer within 1 s"
