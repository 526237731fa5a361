"""Errors that say what is known: another program's database, an unfinished index, a lock held
by some process, a path that does not exist, a PR the index skipped."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from index.indexer import index_repository
from tests.read_only import read_only
from tests.repo_builder import RepoBuilder, run_cli


@pytest.fixture
def repo(builder: RepoBuilder) -> RepoBuilder:
    """PR 1 is merged; PRs 2 and 3 are open."""
    builder.commit("Start", {"a.py": "def a():\n    return 1\n", "b.py": "B = 2\n"})
    builder.pr_branch(1, [("Return two", {"a.py": "def a():\n    return 2\n"})])
    builder.merge_pr(1)
    builder.pr_branch(2, [("B is three", {"b.py": "B = 3\n"})])
    builder.pr_branch(3, [("B is four", {"b.py": "B = 4\n"})])
    return builder


def one_line_error(code: int, out: str, err: str) -> str:
    assert code == 2, err
    assert out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err
    return err


def schema_of(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()


def test_another_programs_database_is_refused_and_left_as_it_was(repo: RepoBuilder, tmp_path: Path):
    other = tmp_path / "notes.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
        conn.execute("INSERT INTO notes(text) VALUES ('keep me')")
    before = schema_of(other)
    for args in (("index", "--db", str(other)), ("check", "--pr", "2", "--db", str(other))):
        err = one_line_error(*run_cli(repo.path, *args))
        assert "not a prdup index" in err
        assert "notes" in err
    for args in (("show", "2", "--db", str(other)), ("sweep", "--db", str(other))):
        assert "not a prdup index" in one_line_error(*run_cli(repo.path, *args))
    assert schema_of(other) == before


def test_an_empty_file_given_to_db_becomes_an_index(repo: RepoBuilder, tmp_path: Path):
    fresh = tmp_path / "fresh.db"
    fresh.touch()
    code, _, err = run_cli(repo.path, "index", "--quiet", "--db", str(fresh))
    assert code == 0, err
    code, out, _ = run_cli(repo.path, "show", "2", "--db", str(fresh))
    assert code == 0 and out.startswith("#2 [unmerged]")


def test_an_unfinished_index_says_how_far_it_got(repo: RepoBuilder, db_path: Path):
    def stop_at_pull_refs(phase: str, done: int, total: int | None) -> None:
        if phase == "PR diffs":
            raise KeyboardInterrupt  # Ctrl-C once the PR refs' first batch is written

    with pytest.raises(KeyboardInterrupt):
        index_repository(repo.path, db_path=db_path, progress=stop_at_pull_refs, batch_size=1)
    for args in (("check", "--pr", "2"), ("sweep",)):
        err = one_line_error(*run_cli(repo.path, *args, "--db", str(db_path)))
        assert "empty" not in err
        assert "1 merged PR" in err
        assert "1 unmerged PR(s)" in err  # PR 2: not merged, its state unknown
        assert "history of main" in err
        assert "run 'prdup index' to finish" in err
    code, _, err = run_cli(repo.path, "index", "--quiet", "--db", str(db_path))
    assert code == 0, err
    assert run_cli(repo.path, "check", "--pr", "2", "--db", str(db_path))[0] in (0, 1)


def test_a_new_index_that_was_never_written_is_called_empty(repo: RepoBuilder, tmp_path: Path):
    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).close()
    err = one_line_error(*run_cli(repo.path, "check", "--pr", "2", "--db", str(empty)))
    assert "the index is empty; run 'prdup index' first" in err


def test_the_lock_message_names_the_process_that_holds_the_index(repo: RepoBuilder, db_path: Path):
    index_repository(repo.path, db_path=db_path)
    repo.pr_branch(4, [("B is five", {"b.py": "B = 5\n"})])
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys\n"
            f"conn = sqlite3.connect({str(db_path)!r}, isolation_level=None)\n"
            "conn.execute('BEGIN EXCLUSIVE')\n"
            "print('holding', flush=True)\n"
            "sys.stdin.read()\n",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "holding\n"
        err = one_line_error(*run_cli(repo.path, "index", "--db", str(db_path)))
    finally:
        holder.communicate("")
    assert "locked" in err
    assert f"pid {holder.pid} (" in err
    assert "another prdup" not in err


@pytest.mark.parametrize("command", ["index", "check", "show", "sweep"])
def test_a_path_that_does_not_exist_is_named_as_such(tmp_path: Path, command: str):
    missing = tmp_path / "no" / "such" / "clone"
    args = {
        "index": ("index", str(missing)),
        "check": ("check", "--repo", str(missing)),
        "show": ("show", "1", "--repo", str(missing)),
        "sweep": ("sweep", "--repo", str(missing)),
    }[command]
    err = one_line_error(*run_cli(tmp_path, *args))
    assert f"{missing}: no such folder" in err
    assert "not a git repository" not in err


def test_a_folder_that_is_no_repository_is_still_called_so(tmp_path: Path):
    plain = tmp_path / "plain"
    plain.mkdir()
    err = one_line_error(*run_cli(tmp_path, "index", str(plain)))
    assert "not a git repository" in err


def test_show_gives_the_reason_a_pr_was_skipped(repo: RepoBuilder, db_path: Path):
    pull = Path(repo.repo.git_dir) / "refs" / "pull" / "13"
    pull.mkdir(parents=True)
    (pull / "head").write_text("1234567890123456789012345678901234567890\n")
    summary = index_repository(repo.path, db_path=db_path)
    assert summary.skipped["head object missing"] == 1
    code, out, err = run_cli(repo.path, "show", "13", "--db", str(db_path))
    assert code == 0, err
    assert "status: skipped" in out
    assert "skip_reason: head commit 123456789012 is missing from the repository" in out
    code, _, err = run_cli(repo.path, "check", "--pr", "13", "--db", str(db_path))
    assert code == 0
    assert "is missing from the repository" in err
    # A second run neither writes it again nor counts it indexed; once fetched, it is read.
    assert index_repository(repo.path, db_path=db_path).skipped["head object missing"] == 1
    head = repo.pr_branch(13, [("B is six", {"b.py": "B = 6\n"})])
    assert index_repository(repo.path, db_path=db_path).unmerged == 1
    code, out, _ = run_cli(repo.path, "show", "13", "--db", str(db_path))
    assert f"head_sha: {head}" in out and "skip_reason" not in out


def sweep_cache_rows(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT count(*) FROM sweep_results").fetchone()[0]


def test_sweep_out_into_a_missing_or_unwritable_folder_fails_before_sweeping(
    repo: RepoBuilder, tmp_path: Path
):
    index_repository(repo.path)
    db = Path(repo.repo.git_dir) / "prdup.db"
    missing = tmp_path / "no-such-folder" / "report.html"
    err = one_line_error(*run_cli(repo.path, "sweep", "--format", "html", "--out", str(missing)))
    assert f"{missing.parent} does not exist" in err
    assert sweep_cache_rows(db) == 0  # checked before the sweep ran
    folder = tmp_path / "reports"
    folder.mkdir()
    with read_only(folder):
        err = one_line_error(*run_cli(repo.path, "sweep", "--out", str(folder / "report.txt")))
    assert "cannot write" in err
    assert sweep_cache_rows(db) == 0
    assert list(folder.iterdir()) == []
    code, _, err = run_cli(repo.path, "sweep", "--out", str(folder / "report.txt"))
    assert code in (0, 1), err
    assert (folder / "report.txt").read_text().startswith("prdup: swept")


def test_every_table_the_schema_creates_counts_as_prdup_s():
    """A table a migration creates but `own_tables` does not know would make an index whose
    first run stopped early look like another program's database."""
    import re

    from index.storage import schema

    source = Path(schema.__file__).read_text()
    created = set(re.findall(r"CREATE TABLE (?:IF NOT EXISTS )?(\w+)", source))
    assert created and created <= schema.own_tables()


def test_a_full_disk_is_called_so_and_the_index_stays_usable(repo: RepoBuilder, db_path: Path):
    """SQLite's "database or disk is full" (here from a page limit, as a full disk gives it) is no
    damaged index: the batch is rolled back and what was written before stays."""
    from index.errors import IndexDiskFull
    from index.storage.store import IndexStore

    assert run_cli(repo.path, "index", "--quiet")[0] == 0
    store = IndexStore(db_path)
    pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
    store.conn.execute(f"PRAGMA max_page_count = {pages}")
    full = r"the disk is full \(.* free\); the index keeps"
    with pytest.raises(IndexDiskFull, match=full), store.batch():
        store.set_meta("filler", "x" * 1_000_000)
    store.close()
    code, out, err = run_cli(repo.path, "check", "--pr", "3", "--format", "json")
    assert code in (0, 1) and '"pr": 2' in out, err


def test_a_pr_number_past_what_sqlite_stores_is_a_usage_error(repo: RepoBuilder, db_path: Path):
    assert run_cli(repo.path, "index", "--quiet")[0] == 0
    for args in (("check", "--pr", "9" * 23), ("show", "9" * 23)):
        code, out, err = run_cli(repo.path, *args)
        assert code == 2 and "Traceback" not in err and "is not in the range" in err


def test_a_patch_from_a_closed_standard_input_is_a_one_line_error(repo: RepoBuilder, db_path: Path):
    assert run_cli(repo.path, "index", "--quiet")[0] == 0
    closed = subprocess.run(
        [sys.executable, "-m", "cli", "check", "--diff", "-"],
        cwd=repo.path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
        preexec_fn=lambda: os.close(0),
    )
    assert "standard input" in one_line_error(closed.returncode, closed.stdout, closed.stderr)
    missing = one_line_error(*run_cli(repo.path, "check", "--diff", "no-such.patch"))
    assert "no-such.patch: No such file or directory" in missing


def test_a_patch_too_large_to_compare_says_so(repo: RepoBuilder, db_path: Path):
    assert run_cli(repo.path, "index", "--quiet")[0] == 0
    lines = 20_001
    patch = repo.path / "big.patch"
    patch.write_text(
        "diff --git a/big.txt b/big.txt\nnew file mode 100644\n--- /dev/null\n+++ b/big.txt\n"
        f"@@ -0,0 +1,{lines} @@\n" + "".join(f"+line {n}\n" for n in range(lines))
    )
    code, out, err = run_cli(repo.path, "check", "--diff", str(patch))
    assert code == 0 and out == ""
    assert "past max_changed_lines (20000 changed lines), not compared: big.txt" in err


def test_a_bug_is_one_line_and_exit_2_never_a_finding():
    """Whatever goes wrong inside prdup, a CI gate must not read it as a finding (exit 1)."""
    import click
    from click.testing import CliRunner

    from commands.support import handles_errors

    @click.command()
    @handles_errors
    def broken() -> None:
        {}["missing"]

    result = CliRunner().invoke(broken, [])
    assert result.exit_code == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith("prdup: error: internal error: KeyError at test_error_messages")
