"""Compare `prdup check --pr N --format json` between two indexes (and two checkouts of prdup).

Run by hand (not a test), to show that a change to the indexer keeps the findings:

    python bench/compare_findings.py /path/to/mirror --db-a A.db --cli-a /other/checkout/cli.py
        --db-b B.db [--cli-b cli.py] [--count 30] [--min-score S] [--newest]

The sample is every k-th indexed PR by number (half unmerged, half merged), the same for both.
Prints, per PR, whether the findings (PR, verdict, score, shared lines, files and symbols)
match, and a summary.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

DECIDING = ("already-merged", "duplicate", "covered")


def newest(db: Path, count: int) -> list[int]:
    """The `count` highest-numbered indexed PRs."""
    conn = sqlite3.connect(db)
    return [
        n
        for (n,) in conn.execute(
            "SELECT number FROM changes WHERE number IS NOT NULL AND status = 'indexed' "
            "ORDER BY number DESC LIMIT ?",
            (count,),
        )
    ]


def sample(db: Path, count: int) -> list[int]:
    conn = sqlite3.connect(db)
    picked: list[int] = []
    for state in ("merged", "open"):
        numbers = [
            n
            for (n,) in conn.execute(
                "SELECT number FROM changes WHERE number IS NOT NULL AND status = 'indexed' "
                "AND (state = 'merged') = ? ORDER BY number",
                (state == "merged",),
            )
        ]
        want = count // 2 if state == "merged" else count - count // 2
        step = max(1, len(numbers) // want)
        picked += numbers[::step][:want]
    return picked


def findings(cli: Path, repo: str, db: Path, number: int, min_score: str | None) -> list[dict]:
    command = [sys.executable, str(cli), "check", "--repo", repo, "--db", str(db), "--pr"]
    command += [str(number), "--format", "json", "--exit-zero"]
    if min_score is not None:
        command += ["--min-score", min_score]
    env = {"PYTHONPATH": str(cli.parent), "PATH": "/usr/bin:/bin"}
    result = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    return json.loads(result.stdout)["findings"]


def key(found: dict, symbols: bool) -> tuple:
    return (
        found["pr"] or found["commit"][:10],
        found["verdict"],
        round(found["score"], 3),
        tuple(sorted(found["shared_removed_lines"])),
        tuple(sorted(found["shared_added_lines"])),
        tuple(found["shared_files"]),
        tuple(found["shared_symbols"]) if symbols else (),
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("repo")
    parser.add_argument("--db-a", type=Path, required=True)
    parser.add_argument("--cli-a", type=Path, required=True)
    parser.add_argument("--db-b", type=Path, required=True)
    parser.add_argument(
        "--cli-b", type=Path, default=Path(__file__).resolve().parents[1] / "cli.py"
    )
    parser.add_argument("--count", type=int, default=30)
    parser.add_argument("--min-score")
    parser.add_argument(
        "--newest", action="store_true", help="the highest-numbered PRs, not every k-th"
    )
    args = parser.parse_args()
    numbers = newest(args.db_a, args.count) if args.newest else sample(args.db_a, args.count)
    same = differ = 0
    verdicts_same = deciding_same = 0
    deciding_a = deciding_b = 0
    total_a = total_b = 0
    whole = 0  # every field of every finding equal, scores unrounded
    score_gap = 0.0  # the largest difference of one finding's score, where the PRs line up
    for number in numbers:
        a = findings(args.cli_a, args.repo, args.db_a, number, args.min_score)
        b = findings(args.cli_b, args.repo, args.db_b, number, args.min_score)
        total_a, total_b = total_a + len(a), total_b + len(b)
        exact = [key(f, True) for f in a] == [key(f, True) for f in b]
        whole += a == b
        if [f["pr"] for f in a] == [f["pr"] for f in b]:
            gaps = (abs(x["score"] - y["score"]) for x, y in zip(a, b, strict=True))
            score_gap = max(score_gap, *gaps, 0.0)
        verdicts = [(f["pr"], f["verdict"]) for f in a] == [(f["pr"], f["verdict"]) for f in b]
        verdicts_same += verdicts
        decided_a = sorted(
            (str(f["pr"] or f["commit"]), f["verdict"]) for f in a if f["verdict"] in DECIDING
        )
        decided_b = sorted(
            (str(f["pr"] or f["commit"]), f["verdict"]) for f in b if f["verdict"] in DECIDING
        )
        deciding_same += decided_a == decided_b
        deciding_a, deciding_b = deciding_a + len(decided_a), deciding_b + len(decided_b)
        same += exact
        differ += not exact
        print(
            f"#{number}: {'same' if exact else 'DIFFERENT'}"
            f"{'' if exact or not verdicts else ' (same PRs and verdicts)'}"
        )
        if not exact:
            for found in a:
                print(f"   a: {key(found, True)[:3]} symbols {found['shared_symbols'][:3]}")
            for found in b:
                print(f"   b: {key(found, True)[:3]} symbols {found['shared_symbols'][:3]}")
    print(
        f"{len(numbers)} PRs: {same} identical, {differ} different; same PRs and verdicts in "
        f"{verdicts_same}; findings {total_a} (a) vs {total_b} (b); every field equal "
        f"(scores unrounded) in {whole}; largest score difference {score_gap:.2g}"
    )
    print(
        f"deciding findings (already-merged, duplicate, covered): {deciding_a} (a) vs "
        f"{deciding_b} (b), the same in {deciding_same} of {len(numbers)} PRs"
    )


if __name__ == "__main__":
    main()
