"""A first full sweep against the index time of the same run, then a re-sweep after one new PR.

Run by hand (not a test), on a bare clone that has every `refs/pull/*` (it is copied, never
written):

    python bench/first_sweep.py "$TOKIO" --work "$WORK/tokio" [--build CHECKOUT] [--jobs 2]

Copies the clone (`git clone --mirror`), then times, back to back so both see the same load:
`prdup index` from nothing (no flags), `prdup sweep --full` (no sweep cache, no replay kept);
then takes the newest open PR out of the index (as `bench/one_new_pr.py` does) and sweeps
without it (the sweep before that PR was opened), indexes it again, and times `prdup sweep`
(the re-sweep a bot run after one new PR pays), --resweeps times from that same index (the
median is printed). The same is timed where the PR is taken out and indexed again after the
first sweep, as a push to it would be: every cached PR that named it is stale then. Each command
runs as a subprocess with the build's modules compiled first, PYTHONHASHSEED=0 (see
`bench/sweep_inputs.py`). Last, a `prdup sweep --full` on the index of the last round tells
whether the re-sweep's answers are the ones a sweep from nothing gives (`one-new-full.json`,
compared by `bench/sweep_answers.py`; the differences are printed). Writes `first.json`,
`one-new.json` and `one-new-full.json` in --work, for `bench/sweep_answers.py` to compare two
builds' answers. The figures that matter are ratios measured in one run: on a shared machine
absolute times depend on what else runs.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.compiled import compile_build  # noqa: E402
from bench.sweep_inputs import copy_index, with_fixed_hash_seed  # noqa: E402


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(build: Path, repo: Path, *arguments: str) -> tuple[float, float]:
    """Wall and CPU seconds of `prdup ARGUMENTS` run in `repo` with `build`'s modules."""
    command = [sys.executable, str(build / "cli.py"), *arguments]
    print("$ prdup " + " ".join(arguments), flush=True)
    load = os.getloadavg()[0]
    cpu = cpu_seconds()
    start = time.perf_counter()
    environment = {**os.environ, "PYTHONPATH": str(build)}
    subprocess.run(command, check=True, cwd=repo, env=environment, stdout=subprocess.DEVNULL)
    wall, used = time.perf_counter() - start, cpu_seconds() - cpu
    print(f"  {wall:.1f} s wall, {used:.1f} CPU-s, load {load:.1f}", flush=True)
    return wall, used


def take_out_newest(build: Path, db: Path) -> int:
    """Delete the newest open PR from the index (with `build`'s store, which settles what it
    derives), so the next `prdup index` reads it as new."""
    with sqlite3.connect(db) as conn:
        (number,) = conn.execute(
            "SELECT max(number) FROM changes WHERE state IN ('open', 'unmerged') "
            "AND status = 'indexed'"
        ).fetchone()
    script = (
        "import sys\nfrom index.storage import IndexStore\n"
        "with IndexStore(sys.argv[1]) as store:\n"
        "    store.changes.delete(store.changes.row(int(sys.argv[2]))['id'])\n"
    )
    subprocess.run(
        [sys.executable, "-c", script, str(db), str(number)],
        check=True,
        env={**os.environ, "PYTHONPATH": str(build)},
    )
    return int(number)


def main() -> None:
    with_fixed_hash_seed()
    parser = argparse.ArgumentParser()
    parser.add_argument("clone", type=Path, help="a bare clone with refs/pull/* (only read)")
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--build", type=Path, default=ROOT)
    parser.add_argument("--jobs", default="2")
    parser.add_argument("--resweeps", type=int, default=3, help="re-sweeps after one new PR")
    args = parser.parse_args()
    build = args.build.resolve()
    compile_build(build)
    repo = args.work / "repo.git"
    if args.work.exists():
        shutil.rmtree(args.work)
    args.work.mkdir(parents=True)
    subprocess.run(["git", "clone", "-q", "--mirror", str(args.clone), str(repo)], check=True)
    print(f"{args.clone} copied to {repo}; build {build}; {os.cpu_count()} CPUs", flush=True)
    index_wall, index_cpu = timed(build, repo, "index", "--quiet")
    sweep_flags = ["--format", "json", "--exit-zero", "--jobs", args.jobs]
    first = str(args.work / "first.json")
    sweep_wall, sweep_cpu = timed(build, repo, "sweep", "--full", *sweep_flags, "--out", first)
    db = repo / "prdup.db"
    swept = args.work / "swept.db"
    copy_index(db, swept)
    number = take_out_newest(build, db)
    timed(build, repo, "sweep", *sweep_flags, "--out", str(args.work / "without.json"))
    without = args.work / "without.db"
    copy_index(db, without)
    print(f"PR #{number} taken out of the index and swept without it")
    again = str(args.work / "one-new.json")
    resweeps = resweep_rounds(build, repo, without, args.resweeps, sweep_flags, again)
    pushed_out = str(args.work / "pushed.json")
    pushed = resweep_rounds(build, repo, swept, args.resweeps, sweep_flags, pushed_out, True)
    full_again = str(args.work / "one-new-full.json")
    timed(build, repo, "sweep", "--full", *sweep_flags, "--out", full_again)
    for name, out in (("new", again), ("indexed again", pushed_out)):
        compared = subprocess.run(
            [sys.executable, str(ROOT / "bench" / "sweep_answers.py"), full_again, out],
            capture_output=True,
            text=True,
        )
        print(f"re-sweep ({name}) against a full sweep: " + compared.stdout.strip())
    resweep_wall = statistics.median(wall for wall, _ in resweeps)
    resweep_cpu = statistics.median(cpu for _, cpu in resweeps)
    print(
        f"index {index_wall:.1f} s ({index_cpu:.1f} CPU-s), first sweep {sweep_wall:.1f} s "
        f"({sweep_cpu:.1f} CPU-s): ratio {sweep_wall / index_wall:.2f} wall, "
        f"{sweep_cpu / index_cpu:.2f} CPU; re-sweep after #{number} is new {resweep_wall:.2f} s "
        f"({resweep_cpu:.2f} CPU-s; median of {args.resweeps}: "
        f"{', '.join(f'{wall:.2f}' for wall, _ in resweeps)}); after #{number} is indexed again "
        f"{statistics.median(wall for wall, _ in pushed):.2f} s "
        f"({statistics.median(cpu for _, cpu in pushed):.2f} CPU-s)"
    )


def resweep_rounds(
    build: Path,
    repo: Path,
    start: Path,
    rounds: int,
    sweep_flags: list[str],
    out: str,
    take_out: bool = False,
) -> list[tuple[float, float]]:
    """Each round copies `start` as the index (and takes the newest open PR out of it where
    `take_out`), runs `prdup index` and times `prdup sweep`."""
    times = []
    for _ in range(rounds):
        copy_index(start, repo / "prdup.db")
        if take_out:
            take_out_newest(build, repo / "prdup.db")
        timed(build, repo, "index", "--quiet")
        times.append(timed(build, repo, "sweep", *sweep_flags, "--out", out))
        stats = json.loads(Path(out).read_text())["stats"]
        print(f"  {stats['rechecked']} PR(s) re-checked, {stats['reused']} from the cache")
    return times


if __name__ == "__main__":
    main()
