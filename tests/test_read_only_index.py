"""An index on read-only media or in a read-only folder: `check`, `show` and `sweep` read it,
and `index` says in one line that it is read-only (never "damaged ... delete it").

`chmod` makes nothing read-only for root, and these tests also run as root: there, a folder is
made read-only with the immutable attribute (`chattr +i`, which binds root too), and read-only
media is a read-only bind mount in a private mount namespace (`unshare`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.read_only import read_only
from tests.repo_builder import RepoBuilder, run_cli, run_in

BODY = "".join(f"def step_{i}(x):\n    return x + {i}\n\n\n" for i in range(12))
FIX = BODY.replace("return x + 7", "return x - 7")


@pytest.fixture
def indexed(builder: RepoBuilder) -> RepoBuilder:
    """PR 1 fixes step_7 and is merged; PRs 2 and 3, still open, make the same fix."""
    builder.commit("Start", {"calc.py": BODY})
    builder.pr_branch(1, [("Fix the sign of step_7", {"calc.py": FIX})])
    builder.merge_pr(1, how="squash")
    start = builder.head("main~1")
    builder.pr_branch(2, [("step_7 subtracts", {"calc.py": FIX})], start=start)
    builder.pr_branch(3, [("Subtract in step_7", {"calc.py": FIX})], start=start)
    code, _, err = run_cli(builder.path, "index", "--quiet")
    assert code == 0, err
    return builder


def outputs(repo: Path) -> dict[str, tuple[int, str]]:
    """What check, show and sweep print (exit code and stdout), with the sweep's timing out."""
    found = {}
    for name, args in {
        "check": ("check", "--pr", "2", "--format", "json"),
        "show": ("show", "3", "--format", "json"),
        "sweep": ("sweep", "--format", "json", "--full", "--jobs", "1"),
    }.items():
        code, out, err = run_cli(repo, *args)
        assert code in (0, 1), f"{name}: {err}"
        if name == "sweep":
            report = json.loads(out)
            report.pop("stats")
            out = json.dumps(report)
        found[name] = (code, out)
    return found


def index_files(git_dir: Path) -> list[str]:
    return sorted(p.name for p in git_dir.glob("prdup.db*"))


def test_an_index_in_a_read_only_folder_is_read_and_not_called_damaged(indexed: RepoBuilder):
    git_dir = Path(indexed.repo.git_dir)
    expected = outputs(indexed.path)
    assert expected["check"][0] == 1  # PR 1 already made PR 2's fix
    before = (git_dir / "prdup.db").read_bytes()
    files = index_files(git_dir)
    with read_only(git_dir):
        # No -wal or -shm file can be created beside the index: it is opened immutable.
        assert outputs(indexed.path) == expected
        code, out, err = run_cli(indexed.path, "index")
    assert code == 2
    assert out == ""
    assert "read-only" in err
    assert "damaged" not in err and "delete" not in err
    assert len(err.strip().splitlines()) == 1
    assert (git_dir / "prdup.db").read_bytes() == before
    assert index_files(git_dir) == files


def test_a_read_only_index_file_is_read_and_writing_it_says_read_only(indexed: RepoBuilder):
    db = Path(indexed.repo.git_dir) / "prdup.db"
    expected = outputs(indexed.path)
    indexed.pr_branch(4, [("Another change", {"other.py": "y = 1\n"})])
    with read_only(db):
        assert outputs(indexed.path) == expected
        code, _, err = run_cli(indexed.path, "index")
    assert code == 2
    assert "read-only" in err
    assert "damaged" not in err
    assert len(err.strip().splitlines()) == 1
    code, out, _ = run_cli(indexed.path, "show", "4")
    assert code == 2  # nothing was written
    code, _, err = run_cli(indexed.path, "index", "--quiet")
    assert code == 0, err  # writable again: the index takes PR 4


def _unshare_prefix() -> list[str] | None:
    """A command prefix that runs its command in a private mount namespace, or None."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return None
    prefix = [unshare, "--mount"] if os.geteuid() == 0 else [unshare, "--map-root-user", "--mount"]
    probe = subprocess.run([*prefix, "true"], capture_output=True)
    return prefix if probe.returncode == 0 else None


def test_an_index_on_read_only_media_is_read(indexed: RepoBuilder, tmp_path: Path):
    prefix = _unshare_prefix()
    if prefix is None:
        pytest.skip("no private mount namespace here: cannot mount a folder read-only")
    git_dir = Path(indexed.repo.git_dir)
    expected = outputs(indexed.path)
    script = tmp_path / "read_only_mount.sh"
    # Remount the git directory read-only for this namespace only, then run prdup there.
    script.write_text(
        'set -e\nmount --bind "$1" "$1"\nmount -o remount,bind,ro "$1"\nshift\nexec "$@"\n'
    )
    cli = [sys.executable, "-m", "cli"]
    env = run_in(tmp_path)
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])  # this checkout's prdup
    for args, code_wanted in (
        (("check", "--pr", "2", "--format", "json"), 1),
        (("index",), 2),
    ):
        done = subprocess.run(
            [*prefix, "sh", str(script), str(git_dir), *cli, *args],
            cwd=indexed.path,
            env=env,
            capture_output=True,
            text=True,
        )
        assert done.returncode == code_wanted, done.stderr
        if args[0] == "check":
            assert done.stdout == expected["check"][1]
        else:
            assert "read-only" in done.stderr
            assert len(done.stderr.strip().splitlines()) == 1
