"""Time `prdup index` when one PR is new: what every bot run that brings one PR pays.

Run by hand (not a test), on a full index made by `bench/index_speed.py`:

    python bench/one_new_pr.py /path/to/mirror --db /tmp/mypy.db [--pr N] [--runs 3]
        [--checkout /path/to/another/checkout]

Each run copies the index, takes the PR out (`ChangeRows.delete`, then the derived data
counted again without it, where this checkout keeps them between runs), and times
`prdup index` on the copy as a subprocess: it reads that one PR and brings rarity, code words
and the text model up to date. A run on the untouched index (nothing new) is timed beside it.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.compiled import compile_build  # noqa: E402
from bench.index_speed import timed  # noqa: E402


def without_pr(db: Path, copy: Path, number: int) -> None:
    """A copy of the index as it was before PR `number` was indexed."""
    source, target = sqlite3.connect(db), sqlite3.connect(copy)
    source.backup(target)
    source.close()
    target.close()
    from index.storage import IndexStore

    with IndexStore(copy) as store:
        row = store.changes.row(number)
        if row is None:
            raise SystemExit(f"#{number} is not in {db}")
        store.changes.delete(row["id"])
        if hasattr(store, "refresh_derived"):  # counts kept between runs: settle them again
            store.derived.refresh()
            store.derived.rebuild_code_word_df()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("repo")
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--pr", type=int, help="default: the highest-numbered indexed PR")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--checkout", type=Path, default=ROOT, help="the prdup whose code runs (default: this)"
    )
    args = parser.parse_args()
    sys.path.insert(0, str(args.checkout))
    compile_build(args.checkout)  # each timed start is a user's, whose prdup is compiled
    number = args.pr
    if number is None:
        with sqlite3.connect(args.db) as conn:
            (number,) = conn.execute(
                "SELECT max(number) FROM changes WHERE status = 'indexed'"
            ).fetchone()
    copy = Path(f"{args.db}.one-new-pr")
    command = [sys.executable, "-m", "cli", "index", args.repo, "--db", str(copy), "--quiet"]
    env = dict(os.environ, PYTHONPATH=str(args.checkout))
    new_pr: list[tuple[float, float]] = []
    nothing_new: list[tuple[float, float]] = []
    for _ in range(args.runs):
        without_pr(args.db, copy, number)
        wall, cpu, _ = timed(command, env=env, stdout=subprocess.DEVNULL)
        new_pr.append((wall, cpu))
        wall, cpu, _ = timed(command, env=env, stdout=subprocess.DEVNULL)
        nothing_new.append((wall, cpu))
    for suffix in ("", "-wal", "-shm"):
        Path(f"{copy}{suffix}").unlink(missing_ok=True)
    for name, runs in (("one new PR", new_pr), ("nothing new", nothing_new)):
        walls = ", ".join(f"{wall:.2f}" for wall, _ in runs)
        print(
            f"#{number}, {name}: median {statistics.median(w for w, _ in runs):.2f} s wall "
            f"({walls}), {statistics.median(c for _, c in runs):.2f} CPU-s"
        )


if __name__ == "__main__":
    main()
