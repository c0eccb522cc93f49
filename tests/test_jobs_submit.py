"""The documented cluster use, end to end: a real ``ray start --head`` on
this machine, then ``ray job submit --working-dir . --runtime-env-json
'{"py_modules": [WHEEL]}' -- python -m jobs.run ...`` (README, "Batch runs on
Ray"). The working-dir upload leaves the compiled engine out (it is
git-ignored); the built wheel ships it. The cluster runs in a temp dir of its
own and only its processes are stopped afterwards."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
RAY = shutil.which("ray") or str(Path(sys.executable).with_name("ray"))

pytestmark = pytest.mark.skipif(
    shutil.which("maturin") is None or not Path(RAY).exists(), reason="needs maturin and the ray command"
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env() -> dict[str, str]:
    # A local test cluster without token authentication (RAY_AUTH_MODE is
    # Ray's own setting: `ray start` would otherwise require a token that the
    # job client only sends with RAY_AUTH_MODE=token).
    return {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_ADDRESS": ""}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(["maturin", "build", "--release", "-o", str(out)], cwd=REPO, check=True, capture_output=True)
    [whl] = out.glob("freecell_analyzer-*.whl")
    return whl


@pytest.fixture(scope="module")
def head() -> Iterator[str]:
    temp = Path(tempfile.mkdtemp(prefix="fca-ray-", dir="/tmp"))
    dash = _free_port()
    argv = [
        RAY, "start", "--head", "--port", str(_free_port()), "--num-cpus", "2", "--include-dashboard", "true",
        "--dashboard-host", "127.0.0.1", "--dashboard-port", str(dash), "--dashboard-agent-listen-port", str(_free_port()),
        "--temp-dir", str(temp), "--disable-usage-stats",
    ]  # fmt: skip
    subprocess.run(argv, check=True, capture_output=True, env=_env(), timeout=300)
    try:
        yield f"http://127.0.0.1:{dash}"
    finally:
        _stop(temp)


def _pids(temp: Path) -> list[int]:
    """Processes whose command line or open files name `temp`, read from
    /proc (``ps`` cuts command lines to $COLUMNS when it is set, as under CI)."""
    out = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        pid = int(cmdline.parent.name)
        if pid == os.getpid():
            continue
        if str(temp) in text or any(str(temp) in link for link in _fd_links(cmdline.parent)):
            out.append(pid)  # (Ray's agents rename themselves: their open log files name the dir)
    return out


def _fd_links(proc: Path) -> list[str]:
    try:
        return [os.readlink(fd) for fd in (proc / "fd").iterdir()]
    except OSError:
        return []


def _stop(temp: Path) -> None:
    """Stops this cluster's processes (their command lines name its temp
    dir), no other Ray: SIGTERM, then SIGKILL for what is left after 5 s
    (Ray's agents often outlast a longer wait; the test's run is done and
    its files closed by then, so nothing depends on a graceful end)."""
    for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        for pid in _pids(temp):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + wait
        while _pids(temp) and time.monotonic() < deadline:
            time.sleep(0.5)
    left = _pids(temp)
    shutil.rmtree(temp, ignore_errors=True)
    assert not left, f"test cluster processes left running: {left}"


def test_ray_job_submit_with_the_wheel(head: str, wheel: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    runtime_env = json.dumps({"py_modules": [str(wheel)]})
    argv = [
        RAY, "job", "submit", "--address", head, "--working-dir", ".", "--runtime-env-json", runtime_env,
        "--", "python", "-m", "jobs.run", "1-40", "--out", str(out), "--max-positions", "200000",
    ]  # fmt: skip
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, env=_env(), timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "complete: 40 deals" in done.stdout
    assert "Token authentication" not in done.stdout
    status = subprocess.run(
        [sys.executable, "-m", "analyzer.cli", "validate", str(out), "--all"], cwd=REPO, capture_output=True, text=True
    )
    assert status.returncode == 0, status.stdout
