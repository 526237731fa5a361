"""What the sweep benchmarks share: a fixed string hash seed, and the open PRs to match with the
sweep's inputs (its replay source and the index's change rows).

prdup's modules are imported when called, after a benchmark has put the build it times first
on `sys.path`.
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import sys
from pathlib import Path
from typing import Any


def with_fixed_hash_seed(**environment: str) -> None:
    """Run this script again with PYTHONHASHSEED=0 (and `environment`) unless it already runs
    so: `lookup.candidate_ids` keeps the first symbols and files of a set, and which ones are
    first depends on the string hash seed."""
    wanted = {"PYTHONHASHSEED": "0", **environment}
    if any(os.environ.get(name) != value for name, value in wanted.items()):
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, **wanted})


def sweep_inputs(db: Path, repo_path: Path) -> tuple[Any, dict[int, Any]]:
    """The sweep's replay source in `repo_path` and the index's change rows, by id."""
    from index.config import Settings
    from index.git import gitsource
    from index.questions.candidates import read_change_rows
    from index.storage.store import IndexStore
    from prdup import sweep

    repo = gitsource.open_repository(repo_path)
    try:
        with IndexStore(db, create=False) as store:
            return sweep._replay_source(repo, repo_path, store, Settings()), read_change_rows(store)
    finally:
        repo.close()


def open_prs(snapshot: dict[int, Any], prs: str | None, count: int, seed: int) -> list[int]:
    """The PRs named (comma-separated numbers), else `count` open PRs drawn with `seed`."""
    if prs:
        return [int(n) for n in prs.split(",")]
    numbers = sorted(r.number for r in snapshot.values() if r.number and r.is_open_pr)
    random.Random(seed).shuffle(numbers)
    return numbers[:count]


def sample_parser(count: int) -> argparse.ArgumentParser:
    """The arguments naming an index, its repository and the open PRs to match (`open_prs`)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--random", type=int, default=count, help="this many random open PRs")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--prs", help="these PRs instead (comma-separated numbers)")
    return parser


def copy_index(source: Path, target: Path) -> None:
    """A copy of the index at `source` in `target` (any earlier copy there and its journal
    replaced), through SQLite's backup: benchmarks write to their copy, never to the index."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{target}{suffix}").unlink(missing_ok=True)
    with sqlite3.connect(source) as original, sqlite3.connect(target) as copy:
        original.backup(copy)
