"""Benchmark `prdup index` against `git log -p --first-parent` over the same history.

Run by hand (not a test): absolute times on shared machines are noise, so the figure that
matters is the ratio to the git baseline measured in the same run. CPU seconds (user + system,
the whole process tree) are printed beside wall seconds: on a busy machine they move much less
than wall time, so they tell whether a change made the work smaller.

    python bench/index_speed.py /path/to/mirror [--db /tmp/bench.db] [--target master]
        [--no-symbols]
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _tree_rss_kib(root: int) -> int:
    """Resident memory of a process and all its descendants (git included), in KiB."""
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            total += int(status.split("VmRSS:")[1].split()[0]) if "VmRSS:" in status else 0
            for task in Path(f"/proc/{pid}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, IndexError, ValueError):
            continue
    return total


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(command: list[str], **kwargs) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds of the whole process tree (git processes are reaped by their
    parent, so they count) and the peak summed RSS (MiB) of that tree, sampled."""
    cpu = _children_cpu()
    start = time.perf_counter()
    process = subprocess.Popen(command, **kwargs)
    peak = 0
    while process.poll() is None:
        peak = max(peak, _tree_rss_kib(process.pid))
        time.sleep(0.2)
    elapsed = time.perf_counter() - start
    if process.returncode:
        raise subprocess.CalledProcessError(process.returncode, command)
    return elapsed, _children_cpu() - cpu, peak // 1024


def quick(command: list[str], **kwargs) -> float:
    """Wall seconds of a short command, unsampled: `timed` reads the end only to its 0.2 s
    sampling step, too coarse for a run that takes a fraction of a second."""
    start = time.perf_counter()
    subprocess.run(command, check=True, **kwargs)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("repo")
    parser.add_argument("--db", default="/tmp/prdup-bench.db")
    parser.add_argument("--target", action="append", default=[])
    parser.add_argument(
        "--no-symbols", action="store_true", help="index with symbols = false (PRDUP_SYMBOLS)"
    )
    args = parser.parse_args()
    db = Path(args.db)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    git = ["git", f"--git-dir={args.repo}"]
    target = args.target[0] if args.target else "HEAD"
    commits = subprocess.run(
        [*git, "rev-list", "--count", "--first-parent", target],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    refs = subprocess.run(
        [*git, "for-each-ref", "--format=x", "refs/pull"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.count("x")
    baseline, baseline_cpu, _ = timed(
        [*git, "log", "-p", "--first-parent", target], stdout=subprocess.DEVNULL
    )
    prdup = [sys.executable, "-m", "cli", "index", args.repo, "--db", str(db), "--quiet"]
    for name in args.target:
        prdup += ["--target", name]
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    if args.no_symbols:
        env["PRDUP_SYMBOLS"] = "false"
    root = Path(__file__).resolve().parents[1]
    for part in ("detector", "index", "prdup"):  # bytecode as an installed copy has it
        compileall.compile_dir(root / part, quiet=1)
    compileall.compile_file(root / "cli.py", quiet=1)
    full, full_cpu, peak = timed(prdup, env=env)
    again = statistics.median(quick(prdup, env=env) for _ in range(5))
    size = db.stat().st_size // (1 << 20)
    print(f"repository: {args.repo} ({commits} first-parent commits, {refs} PR refs)")
    print(f"git log -p --first-parent: {baseline:.1f} s (baseline), {baseline_cpu:.1f} CPU-s")
    print(
        f"prdup index (full):        {full:.1f} s = {full / baseline:.2f}x baseline, "
        f"peak RSS {peak} MiB (all processes), index {size} MiB"
    )
    print(
        f"                           {full_cpu:.1f} CPU-s = {full_cpu / baseline_cpu:.2f}x "
        "the baseline's CPU"
    )
    print(f"prdup index (nothing new): {again:.2f} s (median of 5)")


if __name__ == "__main__":
    main()
