"""A run that parses its diffs in a worker process writes the index this process would have
written, row for row, and a second run on it adds the same rows as a run without one."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

from index.config import Settings
from index.indexer import index_repository
from tests.repo_builder import RepoBuilder

MODULE = "def keep():\n" + "".join(f"    value_{i} = compute({i})\n" for i in range(30))


def _history(builder: RepoBuilder) -> None:
    """Merged (merge commit and squash), direct, open and empty PRs, a rename, a binary and a
    Latin-1 file, a PR that lands twice, and a huge change stored truncated."""
    builder.commit("Initial", {"mod.py": MODULE, "logo.png": b"\x89PNG\r\n\x1a\n\x00\x01"})
    for n in range(1, 9):
        text = MODULE.replace(f"compute({n})", f"compute_fast({n})")
        builder.pr_branch(n, [(f"Speed up value {n} (fixes #{100 + n})", {"mod.py": text})])
        builder.merge_pr(n, how="merge" if n % 2 else "squash")
    builder.commit("Direct: Latin-1 notes", {"notes.txt": "caf\xe9 cr\xe8me\n".encode("latin-1")})
    builder.commit("Again (#3)", {"again.py": "def again():\n    return 3\n"})  # #3 lands again
    builder.pr_branch(
        20,
        [
            (
                "Rename and a new logo",
                {
                    "mod.py": None,
                    "module.py": MODULE + "    value_x = 99\n",
                    "logo.png": b"\x89PNG\r\n\x1a\n\x00\x02\x03",
                },
            )
        ],
    )
    builder.checkout("main")
    builder.pr_branch(21, [("Huge", {"big.py": "".join(f"n_{i} = {i}\n" for i in range(120))})])
    builder.checkout("main")
    builder.pr_branch(22, [("Nothing", {})])  # a head with no change
    builder.checkout("main")


def _dump(db: Path) -> dict[str, list[tuple]]:
    """Every table but `meta` (which records times), each table's rows in order."""
    with sqlite3.connect(db) as conn:
        tables = [
            name
            for (name,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name != 'meta'"
            )
        ]
        return {t: sorted(conn.execute(f"SELECT * FROM {t}"), key=repr) for t in tables}


def test_a_worker_writes_the_index_this_process_writes(builder: RepoBuilder, tmp_path: Path):
    _history(builder)
    small = Settings(max_changed_lines=100)
    alone = index_repository(
        builder.path,
        db_path=tmp_path / "alone.db",
        settings=replace(small, parse_worker_after=-1),
        batch_size=2,
    )
    beside = index_repository(
        builder.path,
        db_path=tmp_path / "worker.db",
        settings=replace(small, parse_worker_after=0),
        batch_size=2,
    )
    assert (alone.parse_worker, beside.parse_worker) == (False, True)
    assert alone.line() == beside.line()
    assert alone.truncated == 1 and alone.merged == 8
    assert _dump(tmp_path / "alone.db") == _dump(tmp_path / "worker.db")

    builder.pr_branch(30, [("Later", {"later.py": "def later():\n    return 30\n"})])
    builder.checkout("main")
    for name, after in (("alone", -1), ("worker", 0)):
        index_repository(
            builder.path,
            db_path=tmp_path / f"{name}.db",
            settings=replace(small, parse_worker_after=after),
            batch_size=2,
        )
    assert _dump(tmp_path / "alone.db") == _dump(tmp_path / "worker.db")
