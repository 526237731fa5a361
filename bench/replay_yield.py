"""What a first sweep's replays cost and what they prove, by why each candidate was replayed.

Run by hand (not a test), on an index built with `prdup index` and its repository:

    python bench/replay_yield.py --db "$WORK/mypy.db" --repo "$MYPY" --random 300 --seed 11 \
        [--prs 12029,12667] [--save OUT.json]

Works on a copy of the index with no replay kept (as the first sweep of an index finds it).
Matches the chosen open PRs twice in one process, as the sweep does (`prdup.sweep`'s matcher,
16 PRs' diffs read together): from the index alone (nothing replayed), then replaying in the
repository. Prints what each pass took (this process's CPU seconds, and wall seconds, which
also count git's processes: run it on a quiet machine) and, for the candidates the second
pass replayed, how many by each reason `detector.matcher.REPLAY_REASONS` gives ("index
verdict": the index's evidence alone calls it the same change), how many of those replays
found a hunk done, how many ended in a deciding finding, and how many were the PR's answer
(the sweep's first deciding finding). "Only" counts the candidates one reason alone let in:
what replaying without that reason would leave out. Runs with PYTHONHASHSEED=0, as
`bench/sweep_speed.py` does.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.sweep_inputs import (  # noqa: E402
    copy_index,
    open_prs,
    sample_parser,
    sweep_inputs,
    with_fixed_hash_seed,
)
from bench.sweep_speed import forget_replays  # noqa: E402
from detector.evidence import Finding  # noqa: E402
from detector.matcher import REPLAY_REASONS, replay_reasons  # noqa: E402
from prdup import sweep  # noqa: E402


def matched(
    db: Path, numbers: list[int], snapshot: dict, source: sweep.ReplaySource | None
) -> tuple[dict[int, list[Finding]], float, float, set[str]]:
    """Each PR's findings, and this process's CPU and wall seconds for them (the batch read
    not counted); the batch's candidate keys."""
    matcher = sweep._prepare(db, numbers, snapshot, source)
    found: dict[int, list[Finding]] = {}
    cpu, wall = time.process_time(), time.perf_counter()
    try:
        for start in range(0, len(numbers), sweep.DIFFS_READ_TOGETHER):
            part = numbers[start : start + sweep.DIFFS_READ_TOGETHER]
            matcher.read_diffs(part)
            for number in part:
                found[number] = matcher.findings(number)
    finally:
        matcher.close()
    return found, time.process_time() - cpu, time.perf_counter() - wall, set(matcher.batch.keys)


def main() -> None:
    with_fixed_hash_seed()
    parser = sample_parser(300)
    parser.add_argument("--save", type=Path, help="write each replayed candidate's row here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        db = Path(work) / "index.db"
        copy_index(args.db, db)
        forget_replays(db)
        report(db, args)


def report(db: Path, args: argparse.Namespace) -> None:
    source, snapshot = sweep_inputs(db, args.repo)
    numbers = open_prs(snapshot, args.prs, args.random, args.seed)
    alone, alone_cpu, alone_wall, _ = matched(db, numbers, snapshot, None)
    print(f"{len(numbers)} PRs from the index alone: {alone_cpu:.1f} CPU-s, {alone_wall:.1f} s")
    replayed, cpu, wall, keys = matched(db, numbers, snapshot, source)
    print(f"replaying in the repository: {cpu:.1f} CPU-s, {wall:.1f} s (git's included)")
    rows = []
    for number, findings in replayed.items():
        before = {f.candidate.key: f for f in alone[number]}
        answer = next((f for f in findings if f.candidate.key in keys and f.decides), None)
        for finding in findings:
            if not finding.signals.replayed:
                continue
            earlier = before.get(finding.candidate.key)
            # The reasons as the index's evidence gave them, before the replay settled it.
            as_read = replace(finding, verdict=earlier.verdict if earlier else "related")
            rows.append(
                {
                    "pr": number,
                    "candidate": finding.candidate.key,
                    "reasons": replay_reasons(as_read),
                    "turned": finding.signals.replay_done > 0,
                    "verdict": finding.verdict,
                    "deciding": finding.decides,
                    "answer": finding is answer,
                }
            )
    answers = sum(
        any(f.decides and f.candidate.key in keys for f in found) for found in replayed.values()
    )
    print(f"{len(rows)} candidates replayed; {answers} PRs with a deciding finding")
    print(f"{'reason':<22}{'replayed':>9}{'a hunk done':>12}{'deciding':>9}{'answer':>7}  only")
    for name, _ in REPLAY_REASONS:
        having = [r for r in rows if name in r["reasons"]]
        only = [r for r in having if len(r["reasons"]) == 1]
        counts = [sum(1 for r in having if r[k]) for k in KINDS]
        only_counts = [sum(1 for r in only if r[k]) for k in KINDS]
        print(
            f"{name:<22}{len(having):>9}{counts[0]:>12}{counts[1]:>9}{counts[2]:>7}  "
            f"{len(only)} replayed, {only_counts[0]} done, {only_counts[1]} deciding, "
            f"{only_counts[2]} answers"
        )
    verdicts = Counter(r["verdict"] for r in rows if r["deciding"])
    print("deciding verdicts of replayed candidates: " + json.dumps(dict(verdicts)))
    if args.save is not None:
        args.save.write_text(json.dumps(rows))


KINDS = ("turned", "deciding", "answer")


if __name__ == "__main__":
    main()
