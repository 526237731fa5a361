"""Accuracy on DupPR's human-labelled duplicate PRs (see ../shared/bench/README.md).

Run by hand, not a test:

    python bench/accuracy.py --bench-dir OUT --mirrors MIRRORS [--repos symfony+symfony,...]

OUT is what `../shared/bench/build_all.sh` wrote (prs.json, pairs.jsonl per repository) and
MIRRORS the folder of `OWNER+NAME` git mirrors. For each repository it indexes the mirror's
branches as they were on DupPR's dump date, with the PRs of `prs.json` and their metadata, then
asks prdup about every labelled `dup` PR through the library call the CLI makes
(`prdup.checking.check`), and about 500 unlabelled PRs (fixed seed) for the false-alarm rate.

Reported per repository and in total: recall@1/5/10 of `orig` among the PRs created before `dup`,
decided@1 (orig first with a deciding verdict at the default threshold), already-done for merged
origs, and the false-alarm rate. `--features FILE` also writes every (query, candidate) signal
row with its label, for `bench/fit_weights.py`.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from detector.decide import FEATURES  # noqa: E402
from detector.evidence import Finding  # noqa: E402
from index.config import Settings  # noqa: E402
from index.errors import PrdupError  # noqa: E402
from index.indexer import index_repository  # noqa: E402
from prdup.checking import check  # noqa: E402

DEFAULT_REPOS = "symfony+symfony,angular+angular.js,zendframework+zf2,emberjs+ember.js"
FALSE_ALARM_SAMPLE = 500
SEED = 20171213


@dataclass
class RepoScore:
    repo: str
    pairs: int = 0
    hit_at: dict[int, int] = field(default_factory=lambda: {1: 0, 5: 0, 10: 0, 20: 0})
    decided_at_1: int = 0
    merged_pairs: int = 0
    merged_done: int = 0
    sampled: int = 0
    alarms: int = 0
    skipped_pairs: int = 0
    seconds: float = 0.0
    misses: list[dict] = field(default_factory=list)
    alarm_examples: list[dict] = field(default_factory=list)

    def add(self, other: RepoScore) -> None:
        self.pairs += other.pairs
        for k in self.hit_at:
            self.hit_at[k] += other.hit_at[k]
        for name in (
            "decided_at_1",
            "merged_pairs",
            "merged_done",
            "sampled",
            "alarms",
            "skipped_pairs",
            "seconds",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def row(self) -> str:
        def pct(a: int, b: int) -> str:
            return f"{a / b:.3f}" if b else "n/a"

        return (
            f"{self.repo:<24} pairs {self.pairs:>4}  r@1 {pct(self.hit_at[1], self.pairs)}  "
            f"r@5 {pct(self.hit_at[5], self.pairs)}  r@10 {pct(self.hit_at[10], self.pairs)}  "
            f"r@20 {pct(self.hit_at[20], self.pairs)}  "
            f"decided@1 {pct(self.decided_at_1, self.pairs)}  "
            f"done(merged orig) {pct(self.merged_done, self.merged_pairs)} of {self.merged_pairs}  "
            f"false alarms {pct(self.alarms, self.sampled)} ({self.alarms}/{self.sampled})"
        )


def cutoff_targets(git_dir: Path, until: str) -> list[str]:
    """Every branch's commit as of DupPR's dump date: the target history the PRs knew."""
    branches = subprocess.run(
        ["git", f"--git-dir={git_dir}", "for-each-ref", "--format=%(refname)", "refs/heads"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    head = subprocess.run(
        ["git", f"--git-dir={git_dir}", "symbolic-ref", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    branches.sort(key=lambda ref: ref != head)  # the default branch first
    shas: list[str] = []
    for ref in branches:
        sha = subprocess.run(
            ["git", f"--git-dir={git_dir}", "rev-list", "-1", f"--before={until}T23:59:59Z", ref],
            capture_output=True,
            text=True,
        ).stdout.strip()
        if sha and sha not in shas:
            shas.append(sha)
    return shas


def earlier_prs(findings: list[Finding], dup: int) -> list[Finding]:
    seen: set[int] = set()
    kept = []
    for finding in findings:
        number = finding.candidate.number
        if number is None or number >= dup or number in seen:
            continue
        seen.add(number)
        kept.append(finding)
    return kept


def feature_rows(query: int, findings: list[Finding], orig: int | None) -> list[dict]:
    return [
        {
            "query": query,
            "candidate": f.candidate.number,
            "label": int(f.candidate.number == orig),
            "state": f.candidate.state,
            "verdict": f.verdict,
            "score": f.score,
            # every signal, not only the score's features: the verdict rules read the rest, so
            # rule changes can be replayed offline from this file
            **{name: float(value) for name, value in asdict(f.signals).items()},
            **{name: float(getattr(f.signals, name)) for name in FEATURES},  # derived ones too
        }
        for f in findings
    ]


def evaluate(
    repo: str,
    bench_dir: Path,
    mirrors: Path,
    work: Path,
    settings: Settings,
    reindex: bool,
    features: list[dict],
    sample: int,
) -> RepoScore:
    folder = bench_dir / repo
    git_dir = mirrors / repo / "repo" if (mirrors / repo / "repo").is_dir() else mirrors / repo
    summary = json.loads((folder / "summary.json").read_text())
    prs = json.loads((folder / "prs.json").read_text())
    pairs = [json.loads(line) for line in (folder / "pairs.jsonl").read_text().splitlines()]
    db = work / f"{repo}.db"
    if reindex:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
    started = time.perf_counter()
    targets = cutoff_targets(git_dir, summary["built_with_until"])
    result = index_repository(
        git_dir,
        db_path=db,
        targets=targets,
        prs_json=folder / "prs.json",
        settings=settings,
        only_numbers={pr["number"] for pr in prs},
    )
    print(f"[{repo}] {result.line()} in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    score = RepoScore(repo)
    started = time.perf_counter()
    labelled = set()
    for pair in pairs:
        labelled |= {pair["dup"], pair["orig"]}
        if not pair.get("diffable"):
            continue
        dup, orig = pair["dup"], pair["orig"]
        try:
            found = check(
                git_dir, db_path=db, pr=dup, settings=settings, before_number=dup, target=targets[0]
            ).findings
        except PrdupError as error:
            score.skipped_pairs += 1
            score.misses.append({"dup": dup, "orig": orig, "why": str(error)})
            continue
        ranked = earlier_prs(found, dup)
        features.extend({"repo": repo, **row} for row in feature_rows(dup, ranked, orig))
        score.pairs += 1
        numbers = [f.candidate.number for f in ranked]
        for k in score.hit_at:
            score.hit_at[k] += orig in numbers[:k]
        first = ranked[0] if ranked else None
        if (
            first
            and first.candidate.number == orig
            and first.decides
            and first.score >= settings.min_score
        ):
            score.decided_at_1 += 1
        if pair.get("orig_state") == "MERGED":
            score.merged_pairs += 1
            about = [f for f in ranked if f.candidate.number == orig]
            if (
                about
                and about[0].verdict == "already-merged"
                and about[0].score >= settings.min_score
            ):
                score.merged_done += 1
        if orig not in numbers[:1]:
            score.misses.append(
                {
                    "dup": dup,
                    "orig": orig,
                    "rank": numbers.index(orig) + 1 if orig in numbers else None,
                    "first": first.candidate.number if first else None,
                    "first_verdict": first.verdict if first else None,
                    "orig_state": pair.get("orig_state"),
                    "dup_diffstat": pair.get("dup_diffstat"),
                    "orig_diffstat": pair.get("orig_diffstat"),
                }
            )
    unlabelled = sorted(pr["number"] for pr in prs if pr["number"] not in labelled)
    rng = random.Random(SEED)
    for number in rng.sample(unlabelled, min(sample, len(unlabelled))):
        try:
            found = check(
                git_dir,
                db_path=db,
                pr=number,
                settings=settings,
                before_number=number,
                target=targets[0],
            ).findings
        except PrdupError:
            continue  # no diff in the index (empty, undelimitable): nothing to claim
        ranked = earlier_prs(found, number)
        features.extend({"repo": repo, **row} for row in feature_rows(number, ranked, None))
        score.sampled += 1
        alarm = next((f for f in ranked if f.decides and f.score >= settings.min_score), None)
        if alarm:
            score.alarms += 1
            score.alarm_examples.append(
                {
                    "pr": number,
                    "by": alarm.candidate.number,
                    "verdict": alarm.verdict,
                    "score": round(alarm.score, 3),
                    "reasons": list(alarm.reasons[:3]),
                }
            )
    score.seconds = time.perf_counter() - started
    return score


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bench-dir", type=Path, required=True)
    parser.add_argument("--mirrors", type=Path, required=True)
    parser.add_argument("--work", type=Path, default=Path("/tmp/prdup-accuracy"))
    parser.add_argument("--repos", default=DEFAULT_REPOS)
    parser.add_argument("--reindex", action="store_true")
    parser.add_argument("--no-symbols", action="store_true")
    parser.add_argument("--sample", type=int, default=FALSE_ALARM_SAMPLE)
    parser.add_argument("--features", type=Path)
    parser.add_argument("--report", type=Path, help="write the figures and misses as JSON")
    parser.add_argument("--curve", type=Path, help="write a precision-recall curve PNG")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    settings = Settings(symbols=not args.no_symbols)
    features: list[dict] = []
    total = RepoScore("total")
    scores = []
    for repo in args.repos.split(","):
        score = evaluate(
            repo,
            args.bench_dir,
            args.mirrors,
            args.work,
            settings,
            args.reindex,
            features,
            args.sample,
        )
        print(score.row(), flush=True)
        scores.append(score)
        total.add(score)
    print(total.row())
    print("command: python " + " ".join(sys.argv))
    if args.features:
        args.features.write_text("\n".join(json.dumps(row) for row in features) + "\n")
    if args.report:
        args.report.write_text(
            json.dumps(
                {
                    "command": " ".join(sys.argv),
                    "repos": [asdict(s) for s in scores],
                    "total": asdict(total),
                },
                indent=1,
            )
        )
    if args.curve:
        from bench.pr_curve import write_curve

        write_curve(features, args.curve)


if __name__ == "__main__":
    main()
