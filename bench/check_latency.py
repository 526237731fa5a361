"""`prdup check --pr N` latency as a user feels it: the whole command, interpreter start included.

Run by hand (not a test):

    python bench/check_latency.py /path/to/mirror [--work /tmp/prdup-latency] [--queries 100]
        [--full-db FILE] [--baseline-cli /path/to/other/checkout/cli.py]
        [--baseline-full-db FILE]

Builds two indexes of the same repository, one with 1,000 PR refs and one with all of them
(both with the full target history), then times `prdup check --pr N` as a subprocess for the same
sample of open PRs on each, and prints p50/p95. `python -c pass` is timed the same way as the
floor no Python command can beat.

Each checkout's modules are compiled to bytecode first and each command runs as `python -m cli`,
as the installed `prdup` does: with stale bytecode and `PYTHONDONTWRITEBYTECODE` set, every run
would compile prdup's changed modules again (about 40 ms), which no installed copy pays.
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.compiled import compile_build  # noqa: E402
from index.git import gitsource  # noqa: E402
from index.indexer import index_repository  # noqa: E402
from index.storage import IndexStore  # noqa: E402
from index.storage.line_postings import PENDING  # noqa: E402


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


def time_command(command: list[str], cwd: Path | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd)
    return time.perf_counter() - start


def shrink_copy(full: Path, small: Path, keep: int) -> None:
    """A 1,000-PR index made from the full one: the newest `keep` PRs, rarity recounted."""
    import shutil
    import sqlite3

    shutil.copy(full, small)
    conn = sqlite3.connect(small)
    conn.execute(
        "CREATE TEMP TABLE gone AS SELECT id FROM changes WHERE number IS NULL OR number NOT IN "
        "(SELECT number FROM changes WHERE number IS NOT NULL ORDER BY number DESC LIMIT ?)",
        (keep,),
    )
    tables = (
        "line_sets",
        "files",
        "hunks",
        "symbols",
        "issue_refs",
        "change_words",
        "code_terms",
        "term_tf",
        "text_norms",
    )
    for table in tables:
        conn.execute(f"DELETE FROM {table} WHERE change_id IN (SELECT id FROM gone)")
    conn.execute("DELETE FROM changes WHERE id IN (SELECT id FROM gone)")
    conn.execute(f"INSERT OR REPLACE INTO meta(key, value) VALUES ('{PENDING}', '1')")
    conn.commit()
    conn.close()
    with IndexStore(small) as store:
        store.derived.refresh()  # lines by hash, rarity and the text model, counted anew
        store.derived.rebuild_code_word_df()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("repo")
    parser.add_argument("--work", type=Path, default=Path("/tmp/prdup-latency"))
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--small", type=int, default=1000)
    parser.add_argument("--full-db", type=Path, help="an existing full index of the repository")
    parser.add_argument(
        "--baseline-cli",
        type=Path,
        help="another checkout's cli.py (say, the previous release) timed in turn with this one "
        "on the same PRs: on a shared machine only such a same-run comparison means anything",
    )
    parser.add_argument(
        "--baseline-full-db",
        type=Path,
        help="the baseline's own full index, where its schema differs from this checkout's "
        "(the small index is then not timed)",
    )
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    repo = gitsource.open_repository(args.repo)
    refs, _ = gitsource.pull_refs(repo)
    numbers = sorted(pull.number for pull in refs)
    small_numbers = set(numbers[-args.small :])
    indexes = {
        f"{args.small} PR refs": (args.work / "small.db", small_numbers),
        f"all {len(numbers)} PR refs": (args.work / "full.db", None),
    }
    if args.full_db:
        indexes[f"all {len(numbers)} PR refs"] = (args.full_db, None)
    for _label, (db, only) in indexes.items():
        if db.exists():
            continue
        if only is not None and args.full_db:
            shrink_copy(args.full_db, db, args.small)
        else:
            index_repository(args.repo, db_path=db, only_numbers=only)
    with IndexStore(args.work / "small.db", create=False) as store:
        open_prs = [
            n
            for (n,) in store.rows(
                "SELECT number FROM changes WHERE state IN ('open', 'unmerged') "
                "AND status = 'indexed'"
            )
        ]
    sample = random.Random(7).sample(open_prs, min(args.queries, len(open_prs)))
    floor = [time_command([sys.executable, "-c", "pass"]) for _ in range(20)]
    print(f"repository: {args.repo}; {len(sample)} open PRs checked on each index")
    print(f"python -c pass: p50 {statistics.median(floor) * 1000:.0f} ms (floor)")
    clis = {"prdup": Path(__file__).resolve().parents[1] / "cli.py"}
    if args.baseline_cli:
        clis["baseline"] = args.baseline_cli.resolve()
    for cli in clis.values():
        compile_build(cli.parent)
    if args.baseline_full_db:  # the two builds can only be compared on their own indexes
        indexes = {label: entry for label, entry in indexes.items() if entry[1] is None}
    for label, (db, _) in indexes.items():
        times: dict[str, list[float]] = {name: [] for name in clis}
        for n in sample:
            for name, cli in clis.items():  # in turn, so both see the same machine load
                own = args.baseline_full_db if name == "baseline" and args.baseline_full_db else db
                command = [sys.executable, "-m", "cli", "check", "--pr", str(n)]
                command += ["--repo", str(Path(args.repo).resolve()), "--db", str(own.resolve())]
                times[name].append(time_command(command, cwd=cli.parent))
        for name, measured in times.items():
            print(
                f"{name} check --pr N, {label}: p50 {percentile(measured, 0.5) * 1000:.0f} ms, "
                f"p95 {percentile(measured, 0.95) * 1000:.0f} ms"
            )


if __name__ == "__main__":
    main()
