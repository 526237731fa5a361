"""`prdup sweep` speed: the open backlog cold, from the cache, and after one PR changes.

Run by hand (not a test), on an index built with `prdup index`:

    python bench/sweep_speed.py --db "$WORK/mypy.db" --repo "$MYPY" [--limits 1000,all]
        [--jobs 1,2] [--verify 300] [--save "$WORK/sweeps"] [--build CHECKOUT]

Works on a copy of the index (in --work), the build's modules compiled first (as an installed
prdup has them). For each limit (the N highest-numbered open PRs, or
all) and process count, times `prdup sweep --full` as a subprocess, interpreter start included,
with no replay kept (the first sweep of an index), and, with --repo, again with the replays
that sweep kept in the index (`index.questions.replay_memory`); then a sweep that reuses the
cache; then one after the newest open PR is made to look freshly
indexed (its cache rows forgotten), which re-checks it and the PRs sharing rare lines with it.
Prints each command with its wall time, CPU time (the command and its worker processes), PRs
per second and the load average: on a shared machine the wall time depends on what else runs,
the CPU time much less. With --verify N, also checks that N random open PRs' sweep findings
are exactly `check --pr N`'s deciding findings. Without --repo every sweep and check reads the
index alone (nothing to replay in); with it, both replay in that repository, and `check` also
runs its target probe, which the sweep leaves out (differences it alone causes are counted
apart). Replaying is most of a sweep's work: time it with --repo, as users sweep. With --save
DIR, each sweep's JSON is written there (`bench/sweep_answers.py` compares two builds'
answers). Everything runs with
PYTHONHASHSEED=0: `lookup.candidate_ids` keeps the first 50 symbols and 30 files of a set, and
which ones are first depends on the string hash seed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.compiled import compile_build  # noqa: E402
from bench.sweep_inputs import copy_index, with_fixed_hash_seed  # noqa: E402

BUILD = ROOT  # the build whose `prdup sweep` is timed (--build)


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_sweep(
    db: Path, *flags: str, repo: Path | None = None, save: Path | None = None, name: str = ""
) -> dict:
    command = [
        sys.executable,
        str(BUILD / "cli.py"),
        "sweep",
        *(["--repo", str(repo)] if repo is not None else []),
        "--db",
        str(db),
        "--format",
        "json",
        "--exit-zero",
        *flags,
    ]
    print("$ " + " ".join(command[1:]), flush=True)
    load = os.getloadavg()[0]
    cpu = cpu_seconds()
    start = time.perf_counter()
    # Run outside any repository: without --repo the sweep must find none to replay in.
    environment = {**os.environ, "PYTHONPATH": str(BUILD)}
    completed = subprocess.run(
        command, capture_output=True, text=True, check=True, cwd=db.parent, env=environment
    )
    wall = time.perf_counter() - start
    data = json.loads(completed.stdout)
    if save is not None:
        save.mkdir(parents=True, exist_ok=True)
        (save / f"{name}.json").write_text(completed.stdout)
    stats = data["stats"]
    figures = {
        "wall": wall,
        "cpu": cpu_seconds() - cpu,
        "load": load,
        "swept": stats["swept"],
        "rechecked": stats["rechecked"],
        "groups": len(data["groups"]),
        "done": len(data["already_done"]),
    }
    rate = stats["rechecked"] / wall if stats["rechecked"] else 0.0
    print(
        f"  {figures['wall']:.1f} s wall, {figures['cpu']:.1f} s CPU, load {load:.1f}: "
        f"{stats['swept']} PRs swept, {stats['rechecked']} checked ({rate:.0f} PRs/s), "
        f"{figures['groups']} groups, {figures['done']} already done",
        flush=True,
    )
    return figures


def forget_replays(db: Path) -> None:
    """Forget the replays an earlier sweep kept (`index.questions.replay_memory`): the next
    full sweep replays every candidate, as the first sweep of an index does."""
    with sqlite3.connect(db) as conn:
        if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'replays'").fetchone():
            conn.execute("DELETE FROM replays")


def forget_newest(db: Path) -> int:
    """Make the newest open PR look freshly indexed: the sweep has never seen it, nor kept a
    replay of it or at its head."""
    with sqlite3.connect(db) as conn:
        number, change_id, head = conn.execute(
            "SELECT number, id, head_sha FROM changes WHERE state IN ('open', 'unmerged') "
            "AND status = 'indexed' "
            "ORDER BY number DESC LIMIT 1"
        ).fetchone()
        conn.execute("DELETE FROM sweep_seen WHERE change_id = ?", (change_id,))
        conn.execute("DELETE FROM sweep_results WHERE number = ?", (number,))
        if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'replays'").fetchone():
            conn.execute("DELETE FROM replays WHERE query = ? OR at = ?", (head, head))
    return int(number)


def verify(db: Path, count: int, repo_path: Path | None = None) -> None:
    from detector.evidence import DECIDING_VERDICTS
    from index.config import Settings
    from index.git import gitsource
    from index.questions.candidates import CandidateEngine
    from index.storage import IndexStore
    from prdup.checking import match_pr, pr_info

    repo = gitsource.open_repository(repo_path) if repo_path is not None else None
    settings = Settings(min_score=0)

    def deciding(findings: list) -> set:
        return {
            (f.candidate.number, f.candidate.commit, f.verdict, round(f.score, 4))
            for f in findings
            if f.verdict in DECIDING_VERDICTS
        }

    with IndexStore(db, create=False) as store:
        target = (store.get_meta("targets") or "").split(",")[0] or None
        cached = {
            number: json.loads(found)
            for number, found in store.rows("SELECT number, findings FROM sweep_results")
        }
        sample = random.Random(7).sample(sorted(cached), min(count, len(cached)))
        differ = by_probe = findings = 0
        for number in sample:
            row = store.changes.row(number)
            assert row is not None
            info = pr_info(row, target)
            checked, _ = match_pr(CandidateEngine(store), repo, row, info, settings)
            expected = deciding(checked)
            got = {
                (f["pr"], f["commit"], f["verdict"], f["score"])
                for f in cached[number]
                if f["verdict"] in DECIDING_VERDICTS
            }
            findings += len(expected)
            if got == expected:
                continue
            unprobed, _ = match_pr(CandidateEngine(store), repo, row, info, settings, probe=False)
            if repo is not None and got == deciding(unprobed):
                by_probe += 1
                print(f"  #{number}: only check's target probe finds {expected - got}")
            else:
                differ += 1
                print(f"  #{number}: check only {expected - got}, sweep only {got - expected}")
    print(
        f"verify: {len(sample)} PRs, {findings} deciding findings by check, {differ} differ, "
        f"{by_probe} more by check's target probe alone"
    )


def main() -> None:
    with_fixed_hash_seed()
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--work", type=Path, default=Path("/tmp/prdup-sweep-bench"))
    parser.add_argument("--limits", default="1000,all")
    parser.add_argument("--jobs", default="1,2")
    parser.add_argument("--verify", type=int, default=0)
    parser.add_argument("--repo", type=Path, help="replay in this repository, as users do")
    parser.add_argument("--save", type=Path, help="write each sweep's JSON to this directory")
    parser.add_argument(
        "--build", type=Path, default=ROOT, help="time this checkout's prdup (default: this one)"
    )
    args = parser.parse_args()
    global BUILD
    BUILD = args.build.resolve()
    compile_build(BUILD)  # each timed start is a user's, whose prdup is compiled
    save = args.save
    args.work.mkdir(parents=True, exist_ok=True)
    db = args.work / "sweep.db"
    copy_index(args.db, db)
    print(f"index: {args.db} (copied to {db}); {os.cpu_count()} CPUs; build {BUILD}")
    for limit in args.limits.split(","):
        limit_flags = [] if limit == "all" else ["--limit", limit]
        for jobs in args.jobs.split(","):
            forget_replays(db)  # cold: nothing replayed yet
            name = f"full-{limit}-jobs{jobs}"
            timed_sweep(
                db, "--full", "--jobs", jobs, *limit_flags, repo=args.repo, save=save, name=name
            )
            if args.repo is not None:
                print("again, with the replays that sweep kept:")
                timed_sweep(
                    db,
                    "--full",
                    "--jobs",
                    jobs,
                    *limit_flags,
                    repo=args.repo,
                    save=save,
                    name=f"kept-{limit}-jobs{jobs}",
                )
        timed_sweep(db, *limit_flags, repo=args.repo, save=save, name=f"cached-{limit}")
    number = forget_newest(db)
    print(f"PR #{number} now looks freshly indexed:")
    timed_sweep(db, repo=args.repo, save=save, name="one-new")
    if args.verify:
        timed_sweep(db, "--full", repo=args.repo)
        verify(db, args.verify, args.repo)


if __name__ == "__main__":
    main()
