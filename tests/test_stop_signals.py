"""`prdup index` and `prdup sweep` stopped mid-run by SIGTERM or SIGKILL, as real processes.

SIGTERM is met as Ctrl-C is: one line, exit 2, everything committed kept. After either signal
no process the command started lives on (git readers, the sweep's workers). Each command runs
in a session of its own, so whatever it started is found by its session id even once orphaned.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.bulk_history import build
from tests.repo_builder import run_in

MERGED, OPEN = 1500, 300
ROOT = Path(__file__).resolve().parents[1]
SETTLE_SECONDS = 30.0  # a bound for processes to be gone, never a measure of speed


@pytest.fixture(scope="module")
def big_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("bulk") / "repo"
    build(path, MERGED, OPEN)
    return path


def this_checkout(home: Path) -> dict[str, str]:
    """An environment whose Python imports this checkout's prdup, with `home` as HOME."""
    env = run_in(home)
    env["PYTHONPATH"] = str(ROOT)
    return env


def start(args: list[str], home: Path) -> subprocess.Popen[str]:
    """This checkout's prdup in a session of its own, its stderr piped."""
    return subprocess.Popen(
        [sys.executable, "-m", "cli", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=this_checkout(home),
        start_new_session=True,
    )


def _stat(pid: str) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()  # state, ppid, pgrp, session, ...


def processes(*, session: int | None = None, parent: int | None = None) -> Iterator[int]:
    """Live (not zombie) processes of a session, or children of a process."""
    for entry in Path("/proc").iterdir():
        fields = _stat(entry.name) if entry.name.isdigit() else None
        if fields is None or fields[0] in ("Z", "X"):
            continue
        if session is not None and int(fields[3]) == session:
            yield int(entry.name)
        if parent is not None and int(fields[1]) == parent:
            yield int(entry.name)


def assert_nothing_left(session: int) -> None:
    deadline = time.monotonic() + SETTLE_SECONDS
    left = list(processes(session=session))
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = list(processes(session=session))
    commands = [Path(f"/proc/{pid}/cmdline").read_bytes()[:80] for pid in left]
    assert left == [], f"still running after the command ended: {commands}"


def wait_for_line(process: subprocess.Popen[str], text: str) -> list[str]:
    assert process.stderr is not None
    lines = []
    for line in process.stderr:
        lines.append(line)
        if text in line:
            return lines
    raise AssertionError(f"the run ended before {text!r}: {''.join(lines)}")


def changes_in(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT count(*) FROM changes").fetchone()[0]


needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


@needs_proc
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL])
def test_index_stopped_mid_run_leaves_nothing_running_and_resumes(
    big_repo: Path, tmp_path: Path, how: signal.Signals
):
    db = tmp_path / "index.db"
    run = start(["index", str(big_repo), "--db", str(db)], tmp_path)
    wait_for_line(run, "prdup index: history of main")  # its first batch is written
    run.send_signal(how)
    assert run.stderr is not None
    rest = run.stderr.read()
    code = run.wait()
    assert_nothing_left(run.pid)
    if how == signal.SIGTERM:
        assert code == 2, rest
        assert rest.splitlines()[-1:] == [
            "prdup: error: stopped by SIGTERM; the index keeps every PR written so far"
        ]
        assert "Traceback" not in rest
    else:
        assert code == -signal.SIGKILL
    kept = changes_in(db)
    assert 0 < kept < MERGED + OPEN
    again = start(["index", str(big_repo), "--db", str(db), "--quiet"], tmp_path)
    assert again.wait() == 0, again.stderr.read() if again.stderr else ""
    assert changes_in(db) == MERGED + 1 + OPEN  # the initial commit is a direct commit


@pytest.fixture(scope="module")
def big_index(big_repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("home")
    run = start(["index", str(big_repo), "--quiet"], home)
    assert run.wait() == 0, run.stderr.read() if run.stderr else ""
    return big_repo


@needs_proc
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL])
def test_sweep_stopped_mid_run_leaves_no_worker_behind(
    big_index: Path, tmp_path: Path, how: signal.Signals
):
    run = start(["sweep", "--repo", str(big_index), "--jobs", "2", "--full"], tmp_path)
    deadline = time.monotonic() + SETTLE_SECONDS * 4
    workers: list[int] = []
    while len(workers) < 2 and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
        workers = list(processes(parent=run.pid))
    assert len(workers) == 2, "the sweep's workers never started"
    run.send_signal(how)
    assert run.stderr is not None
    err = run.stderr.read()  # the workers' stderr too: it ends when the last of them does
    code = run.wait()
    assert_nothing_left(run.pid)
    assert "Traceback" not in err
    if how == signal.SIGTERM:
        assert code == 2
        assert err.strip().splitlines() == [
            "prdup: error: stopped by SIGTERM; the index keeps every PR written so far"
        ]
    else:
        assert code == -signal.SIGKILL


def test_a_worker_ends_with_its_parent_at_once(tmp_path: Path):
    """The mechanism alone: a pool worker busy in a long task dies with its killed parent."""
    if not sys.platform.startswith("linux"):
        pytest.skip("the parent-death signal is Linux's")
    script = (
        "import multiprocessing, sys, time\n"
        "from prdup.lifetime import die_with_parent\n"
        "def nap(_):\n"
        "    time.sleep(600)\n"
        "with multiprocessing.get_context('fork').Pool(1, die_with_parent) as pool:\n"
        "    pool.map_async(nap, [1])\n"
        "    print('started', flush=True)\n"
        "    time.sleep(600)\n"
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        text=True,
        env=this_checkout(tmp_path),
        start_new_session=True,
    )
    assert parent.stdout is not None and parent.stdout.readline() == "started\n"
    assert len(list(processes(parent=parent.pid))) == 1
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    assert_nothing_left(parent.pid)


@needs_proc
def test_a_stop_held_while_forking_waits_though_the_progress_heartbeat_runs(tmp_path: Path):
    """The mechanism alone: while the sweep makes its pool, stops are held (`signals_held`),
    and they must wait even though the progress heartbeat, a thread of its own, is running.
    The kernel hands a process's SIGTERM to any thread not blocking it: a heartbeat that took
    it had it handled in the middle of making the pool, which was left half made, and the
    command's exit waited for its workers for ever."""
    script = (
        "import io, os, signal, time\n"
        "from prdup.lifetime import signals_held\n"
        "from prdup.progress import IndexProgress\n"
        "handled = []\n"
        "signal.signal(signal.SIGTERM, lambda *_: handled.append(time.monotonic()))\n"
        "with IndexProgress(io.StringIO(), live=False, every=0.01, command='sweep'):\n"
        "    with signals_held():\n"
        "        os.kill(os.getpid(), signal.SIGTERM)\n"
        "        time.sleep(0.3)\n"
        "        early = bool(handled)\n"
        "    time.sleep(0.05)\n"
        "print('early' if early else 'held', 'handled' if handled else 'lost', flush=True)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=this_checkout(tmp_path),
        check=True,
    )
    assert done.stdout.split() == ["held", "handled"], done.stderr
