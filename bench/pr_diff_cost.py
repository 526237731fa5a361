"""What git spends on the PR refs' diffs, read whole and read up to each PR's line limit.

Run by hand (not a test). The pairs (PR head, fork point) come from an index `prdup index`
made of the same clone; `--cut-only` keeps the PRs that index stored cut. Each way reads the
pairs through one `git diff-tree --stdin` as `prdup index` does (restarted after each PR git
is stopped in), and prints git's CPU seconds (its processes, reaped by this one), the wall
time, the diff text kept and how many PRs were read only in part:

    python bench/pr_diff_cost.py /path/to/mirror --db index.db [--cut-only]
"""

from __future__ import annotations

import argparse
import resource
import sqlite3
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from index.config import Settings, load_settings  # noqa: E402
from index.git import gitsource  # noqa: E402
from index.git.diff_budget import PairBudget  # noqa: E402
from index.indexer import line_limit  # noqa: E402

NO_LIMIT = 1 << 62


def pairs_of(db: Path, cut_only: bool) -> list[tuple[str, str, str]]:
    """(head, fork point, state) of the PR refs the index diffed."""
    conn = sqlite3.connect(db)
    query = (
        "SELECT head_sha, base_sha, state FROM changes WHERE kind = 'pr' AND source = 'ref' "
        "AND base_sha IS NOT NULL AND status = 'indexed'"
    )
    if cut_only:
        query += " AND truncated = 1"
    return list(dict.fromkeys(conn.execute(query + " ORDER BY id").fetchall()))


def _git_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def read(repo, pairs: list[tuple[str, str]], limits: dict[str, int], settings: Settings) -> str:
    cpu, start = _git_cpu(), time.perf_counter()
    kept = in_part = restarts = 0
    remaining = pairs
    while remaining:
        order = {head: i for i, (head, _) in enumerate(remaining)}
        last = -1
        budget = PairBudget(limits, settings.is_ignored)
        for found in gitsource.diff_pairs_within(repo, remaining, budget):
            last = order[found.head]
            kept += len(found.diff)
            in_part += found.listed is not None
        if budget.stopped is None:
            break
        restarts += 1
        remaining = remaining[last + 1 :]
    return (
        f"git {_git_cpu() - cpu:.1f} CPU-s, {time.perf_counter() - start:.1f} s wall, "
        f"{kept / 1e6:.0f} MB of diff kept, {in_part} PRs read in part, git started "
        f"{restarts + 1} times"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("repo")
    parser.add_argument("--db", required=True)
    parser.add_argument("--cut-only", action="store_true")
    args = parser.parse_args()
    repo = gitsource.open_repository(args.repo)
    settings = load_settings(None)
    found = pairs_of(Path(args.db), args.cut_only)
    pairs = [(head, base) for head, base, _ in found]
    limits = {head: line_limit(settings, state) for head, _, state in found}
    print(f"{len(pairs)} PR diffs of {args.repo}")
    print("read whole:            " + read(repo, pairs, dict.fromkeys(limits, NO_LIMIT), settings))
    print("read up to the limits: " + read(repo, pairs, limits, settings))


if __name__ == "__main__":
    main()
