"""`scripts/control-plane build` against a fake `go`: a module-proxy or network hiccup is
retried with backoff; a real error (a missing module) stops at once with one line."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.integration.control_plane.fake_go import cache_missing_only_etcd, install_fake_go
from tests.support.control_plane.build import build_all
from tests.support.control_plane.estimate import estimate
from tests.support.control_plane.gotool import RETRIES, BuildError, Go

ROOT = Path(__file__).resolve().parents[3]
PROXY = "https://proxy.golang.org/go.etcd.io/etcd/server/v3/@v/v3.6.16"
TRANSIENT = {
    "tls": f"go: go.etcd.io/etcd/server/v3@v3.6.16: Get {PROXY}.info: net/http: TLS handshake "
    "timeout",
    "reset": f"go: reading {PROXY}.mod: read tcp 127.0.0.1:41000->1.2.3.4:443: read: connection "
    "reset by peer",
    "timeout": f"go: Get {PROXY}.zip: dial tcp 1.2.3.4:443: i/o timeout",
    "bad-gateway": f"go: go.etcd.io/etcd/server/v3@v3.6.16: reading {PROXY}.info: 502 Bad Gateway",
}
REAL = {
    "missing-module": f"go: go.etcd.io/etcd/server/v3@v3.6.16: reading {PROXY}.info: 404 Not Found",
    "unknown-revision": "go: go.etcd.io/etcd/server/v3@v3.6.16: invalid version: unknown "
    "revision v3.6.16",
}


@pytest.mark.parametrize("error", TRANSIENT.values(), ids=TRANSIENT.keys())
def test_a_network_error_twice_is_retried_and_the_build_succeeds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], error: str
) -> None:
    fake = install_fake_go(tmp_path / "go")
    fake.fail_get(2, error)
    cache = cache_missing_only_etcd(tmp_path / "cache")
    for name, value in fake.environment(cache.root).items():
        monkeypatch.setenv(name, value)

    build_all(cache, Go(cache.home / "build.log", first_wait_seconds=0.0))

    assert cache.missing() == []
    assert fake.calls("get") == 3
    retries = [line for line in capsys.readouterr().out.splitlines() if "network error" in line]
    assert [line.split(" retry ")[1][:6] for line in retries] == ["1 of 3", "2 of 3"]


def test_a_network_error_that_outlasts_every_retry_ends_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = install_fake_go(tmp_path / "go")
    fake.fail_get(RETRIES + 5, TRANSIENT["tls"])
    cache = cache_missing_only_etcd(tmp_path / "cache")
    for name, value in fake.environment(cache.root).items():
        monkeypatch.setenv(name, value)

    with pytest.raises(BuildError) as raised:
        build_all(cache, Go(cache.home / "build.log", first_wait_seconds=0.0))

    assert fake.calls("get") == RETRIES + 1
    message = str(raised.value)
    assert "\n" not in message
    assert "TLS handshake timeout" in message and f"{RETRIES + 1} times" in message


@pytest.mark.parametrize("error", REAL.values(), ids=REAL.keys())
def test_a_real_go_error_is_not_retried_and_is_one_line_without_a_traceback(
    tmp_path: Path, error: str
) -> None:
    fake = install_fake_go(tmp_path / "go")
    fake.fail_get(5, error)
    cache = cache_missing_only_etcd(tmp_path / "cache")

    run = subprocess.run(
        [str(ROOT / "scripts" / "control-plane"), "build"],
        capture_output=True,
        text=True,
        env=fake.environment(cache.root),
        timeout=60,
    )

    assert run.returncode == 1
    assert fake.calls("get") == 1
    assert run.stderr.count("\n") == 1, run.stderr
    assert error.removeprefix("go: ") in run.stderr
    assert "`go get go.etcd.io/etcd/server/v3@v3.6.16` failed" in run.stderr
    assert "build.log" in run.stderr
    assert "Traceback" not in run.stdout + run.stderr


def test_the_estimate_is_the_measured_minutes_scaled_to_the_cores_and_none_when_all_built() -> None:
    everything = ["etcd", "kwok", "kube-apiserver", "kube-controller-manager"]

    on_two = estimate(everything, cores=2)
    on_four = estimate(everything, cores=4)

    assert on_two is not None and on_four is not None
    assert (round(on_two.best), round(on_two.shared_low), round(on_two.shared_high)) == (18, 36, 43)
    assert on_four.best == pytest.approx(on_two.best / 2)
    assert estimate(["kwok-stages.yaml"], cores=2) is None
