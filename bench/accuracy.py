"""Accuracy on DupPR's human-labelled duplicate PRs (see ../shared/bench/README.md).

Run by hand, not a test:

    python bench/accuracy.py --bench-dir OUT --mirrors MIRRORS --work DBDIR [--repos ...]

OUT is what `../shared/bench/build_all.sh` wrote (prs.json, pairs.jsonl per repository) and
MIRRORS the folder of `OWNER+NAME` git mirrors. For each repository it indexes the mirror as a
new user would: every branch at its current tip as a target (the default branch first; `--targets`
narrows that) and every PR ref of the mirror, with `prs.json` as metadata for the PRs it covers.
`--window` keeps the older setting instead: the branches as they were on DupPR's dump date and
only the PRs of `prs.json`. It then asks prdup about every labelled `dup` PR through the library
call the CLI makes (`prdup.checking.check`, candidates restricted to earlier PR numbers), and about
200 unlabelled PRs (fixed seed) for the false-alarm rate.

The index is `DBDIR/<owner+name>.db` (`.window.db` with `--window`); an existing one is brought
up to date, not rebuilt, unless `--reindex`; `--checks-only` does not touch it at all, so another
checkout's code can be scored against the same index:

    PYTHONPATH=/other/checkout python bench/accuracy.py ... --work DBDIR --checks-only

(PYTHONPATH comes before this checkout: the script adds its own checkout to `sys.path` only when
`prdup` is not importable otherwise, and then at the end.)

Reported per repository and in total, for prdup and for the TF-IDF baseline of issue 12
(`bench/tfidf_baseline.py`) on the same queries: recall@1/5 of `orig` among the PRs numbered before
`dup`, decided@1 (orig first with a deciding verdict at the default threshold; baseline: orig first
with a cosine of at least 0.65), done for merged origs (prdup: `already-merged` or `superseded`
naming orig; baseline: orig's cosine at least 0.65) and raw false alarms (prdup: a deciding verdict
on an earlier PR; baseline: any earlier PR at a cosine of at least 0.65). The sample is also
checked as `check --pr N` answers a user, without the earlier-PR restriction (a later PR or a
direct commit may be named): "alarms as check --pr N". Every prdup alarm on the unlabelled sample
(`scope` "earlier" or "any") goes to `OUTDIR/<repo>.alarms.jsonl` with both titles and states, for
reading by hand (`bench/alarm_sheet.py` prints fuller sheets from the report). `--features FILE`
also writes every (query, candidate) signal row with its label, for `bench/fit_weights.py`.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import re
import sqlite3
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Sibling helpers (alarm_sheet, tfidf_baseline) come from this folder, whatever PYTHONPATH says.
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
# The code under test: another checkout on PYTHONPATH wins; this checkout only as a fallback.
if importlib.util.find_spec("prdup") is None:
    sys.path.append(str(HERE.parent))

import alarm_sheet  # noqa: E402
import tfidf_baseline  # noqa: E402

import prdup  # noqa: E402
from detector.decide import FEATURES  # noqa: E402
from detector.evidence import Finding  # noqa: E402
from index.config import Settings  # noqa: E402
from index.errors import PrdupError  # noqa: E402
from index.indexer import index_repository  # noqa: E402
from prdup.checking import check  # noqa: E402

DEFAULT_REPOS = (
    "zendframework+zf2,emberjs+ember.js,angular+angular.js,symfony+symfony,"
    "hashicorp+terraform,ansible+ansible"
)
FALSE_ALARM_SAMPLE = 200
# A merged original is "done" where the finding about it says its landing made the change, or
# rewrote the lines it edits its own way (a maintainer closes the later PR either way).
DONE_VERDICTS = frozenset({"already-merged", "superseded"})
SEED = 20171213


RELEASE_LINE = re.compile(
    r"^(main|master|devel|develop|trunk|beta|release)$"
    r"|^v\d+([.-]\d+)*(\.x)?$|^\d+\.\d+(\.x)?$"  # not `26258`: a branch named after an issue
    r"|^(stable|release|lts)[-_.]?\d+([-_.]\d+)*$"
)


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
    # As `check --pr N` answers a user: every candidate (later PRs, direct commits) may be named
    user_alarms: int = 0
    misses: list[dict] = field(default_factory=list)
    alarm_examples: list[dict] = field(default_factory=list)
    user_alarm_examples: list[dict] = field(default_factory=list)
    # Every labelled pair: what prdup said about the original (to compare two runs by pair).
    outcomes: list[dict] = field(default_factory=list)

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
            "user_alarms",
            "skipped_pairs",
            "seconds",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def row(self) -> str:
        return (
            f"{self.repo:<24} pairs {self.pairs:>4}  r@1 {pct(self.hit_at[1], self.pairs)}  "
            f"r@5 {pct(self.hit_at[5], self.pairs)}  r@10 {pct(self.hit_at[10], self.pairs)}  "
            f"r@20 {pct(self.hit_at[20], self.pairs)}  "
            f"decided@1 {pct(self.decided_at_1, self.pairs)}  "
            f"done(merged orig) {pct(self.merged_done, self.merged_pairs)} of {self.merged_pairs}  "
            f"false alarms {pct(self.alarms, self.sampled)} ({self.alarms}/{self.sampled})  "
            f"as check --pr N {pct(self.user_alarms, self.sampled)} "
            f"({self.user_alarms}/{self.sampled})"
        )


def pct(a: int, b: int) -> str:
    return f"{a / b:.3f}" if b else "n/a"


def side_by_side(prdup_score: RepoScore, baseline: RepoScore) -> str:
    """One markdown row per detector: the figures issue 12 asks for."""
    rows = []
    for name, s in (("prdup", prdup_score), ("tf-idf", baseline)):
        rows.append(
            f"| {s.repo} | {name} | {s.pairs} | {pct(s.hit_at[1], s.pairs)} | "
            f"{pct(s.hit_at[5], s.pairs)} | {pct(s.decided_at_1, s.pairs)} | "
            f"{pct(s.merged_done, s.merged_pairs)} ({s.merged_done}/{s.merged_pairs}) | "
            f"{pct(s.alarms, s.sampled)} ({s.alarms}/{s.sampled}) | "
            + (
                f"{pct(s.user_alarms, s.sampled)} ({s.user_alarms}/{s.sampled}) |"
                if s is prdup_score
                else "- |"
            )
        )
    return "\n".join(rows)


TABLE_HEAD = (
    "| repo | detector | pairs | recall@1 | recall@5 | decided@1 | done (merged origs) |"
    " false alarms raw | alarms as check --pr N |\n|---|---|---|---|---|---|---|---|---|"
)


def git_out(git_dir: Path, *args: str) -> str:
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", *args], capture_output=True, text=True
    ).stdout.strip()


def current_targets(git_dir: Path, which: str) -> list[str]:
    """Branch names at their current tips, the default branch first.

    `which`: `all` (every branch), `lines` (the default branch and the branches named like
    release lines: `stable-2.9`, `v1.4`, `lts-3-28`, `2.8`), or a regular expression.
    """
    branches = git_out(git_dir, "for-each-ref", "--format=%(refname:short)", "refs/heads").split()
    default = git_out(git_dir, "symbolic-ref", "--short", "HEAD")
    if which == "lines":
        branches = [b for b in branches if b == default or RELEASE_LINE.match(b)]
    elif which != "all":
        pattern = re.compile(which)
        branches = [b for b in branches if b == default or pattern.search(b)]
    branches.sort(key=lambda name: name != default)  # the default branch first
    return branches


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
    """The PRs named, in order, before `dup`. Identical copies and other PRs of the same head
    folded into one finding ("also identical: #A, #B", "also opened as #C") are named right
    after it, as the finding names them."""
    seen: set[int] = set()
    kept = []
    for finding in unfolded(findings):
        number = finding.candidate.number
        if number is None or number >= dup or number in seen:
            continue
        seen.add(number)
        kept.append(finding)
    return kept


def unfolded(findings: list[Finding]) -> list[Finding]:
    out = []
    for finding in findings:
        out.append(finding)
        folded = (*getattr(finding, "also_identical", ()), *getattr(finding, "also_opened_as", ()))
        for number in folded:
            copy = replace(finding.candidate, key=f"#{number}", number=number)
            cleared = {f: () for f in ("also_identical", "also_opened_as") if hasattr(finding, f)}
            out.append(replace(finding, candidate=copy, **cleared))
    return out


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
            **{
                name: value if isinstance(value, tuple) else float(value)
                for name, value in asdict(f.signals).items()
            },
            **{name: float(getattr(f.signals, name)) for name in FEATURES},  # derived ones too
        }
        for f in findings
    ]


@dataclass
class Bench:
    """One repository's benchmark folder and mirror."""

    repo: str
    folder: Path
    git_dir: Path
    summary: dict
    prs: list[dict]
    pairs: list[dict]

    @classmethod
    def load(cls, repo: str, bench_dir: Path, mirrors: Path) -> Bench:
        folder = bench_dir / repo
        git_dir = mirrors / repo / "repo" if (mirrors / repo / "repo").is_dir() else mirrors / repo
        pairs = [json.loads(line) for line in (folder / "pairs.jsonl").read_text().splitlines()]
        return cls(
            repo,
            folder,
            git_dir,
            json.loads((folder / "summary.json").read_text()),
            json.loads((folder / "prs.json").read_text()),
            pairs,
        )

    def labelled(self) -> set[int]:
        return {n for pair in self.pairs for n in (pair["dup"], pair["orig"])}

    def sample(self, size: int) -> list[int]:
        """`size` PRs of prs.json in no labelled pair, drawn with a fixed seed."""
        labelled = self.labelled()
        unlabelled = sorted(pr["number"] for pr in self.prs if pr["number"] not in labelled)
        return random.Random(SEED).sample(unlabelled, min(size, len(unlabelled)))


def index_step(bench: Bench, db: Path, args: argparse.Namespace, settings: Settings) -> list[str]:
    """Build or update the index (unless --checks-only); returns the targets, default first."""
    if args.window:
        targets = cutoff_targets(bench.git_dir, bench.summary["built_with_until"])
        only_numbers: set[int] | None = {pr["number"] for pr in bench.prs}
    else:
        targets = current_targets(bench.git_dir, args.targets)
        only_numbers = None  # every PR ref of the mirror, as a new user's index has
    if args.checks_only:
        if not db.exists():
            raise SystemExit(f"{db}: no index to check against (run without --checks-only)")
        return targets
    if args.reindex:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
    started = time.perf_counter()
    print(f"[{bench.repo}] indexing {len(targets)} target(s): {' '.join(targets)}", file=sys.stderr)
    result = index_repository(
        bench.git_dir,
        db_path=db,
        targets=targets,
        prs_json=bench.folder / "prs.json",
        settings=settings,
        only_numbers=only_numbers,
        progress=progress_every(bench.repo, 30.0),
    )
    seconds = time.perf_counter() - started
    print(f"[{bench.repo}] {result.line()} in {seconds:.0f} s", file=sys.stderr, flush=True)
    return targets


def progress_every(repo: str, seconds: float):
    """A progress callback that prints a plain line at most every `seconds` (logs, not a tty)."""
    last = [0.0]

    def progress(message: str, done: int = 0, total: int | None = None) -> None:
        now = time.perf_counter()
        if now - last[0] >= seconds:
            last[0] = now
            count = f" {done}/{total}" if total else (f" {done}" if done else "")
            print(f"[{repo}] {message}{count}", file=sys.stderr, flush=True)

    return progress


def ask(bench: Bench, db: Path, number: int, settings: Settings, target: str) -> list[Finding]:
    """prdup's findings on PR `number`, earlier PRs only (PrdupError when it has no diff)."""
    found = check(
        bench.git_dir,
        db_path=db,
        pr=number,
        settings=settings,
        before_number=number,
        target=target,
    ).findings
    return earlier_prs(found, number)


def score_pairs(
    bench: Bench,
    db: Path,
    settings: Settings,
    target: str,
    score: RepoScore,
    features: list[dict],
) -> list[dict]:
    """prdup on every diffable labelled pair; returns the pairs it could ask about."""
    asked = []
    for pair in bench.pairs:
        if not pair.get("diffable"):
            continue
        dup, orig = pair["dup"], pair["orig"]
        try:
            ranked = ask(bench, db, dup, settings, target)
        except PrdupError as error:
            score.skipped_pairs += 1
            score.misses.append({"dup": dup, "orig": orig, "why": str(error)})
            continue
        asked.append(pair)
        features.extend({"repo": bench.repo, **row} for row in feature_rows(dup, ranked, orig))
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
            if about and about[0].verdict in DONE_VERDICTS and about[0].score >= settings.min_score:
                score.merged_done += 1
        about_orig = next((f for f in ranked if f.candidate.number == orig), None)
        score.outcomes.append(
            {
                "dup": dup,
                "orig": orig,
                "orig_state": pair.get("orig_state"),
                "rank": numbers.index(orig) + 1 if orig in numbers else None,
                "verdict": about_orig.verdict if about_orig else None,
                "score": round(about_orig.score, 3) if about_orig else None,
                "first": first.candidate.number if first else None,
                "first_verdict": first.verdict if first else None,
                "reasons": list(about_orig.reasons[:3]) if about_orig else [],
            }
        )
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
    return asked


def score_sample(
    bench: Bench,
    db: Path,
    settings: Settings,
    target: str,
    sample: list[int],
    score: RepoScore,
    features: list[dict],
    user_view: bool = True,
) -> list[int]:
    """prdup on the unlabelled sample; returns the PRs it could ask about.

    An alarm names an earlier PR (as the labels do); with `user_view` each PR is also checked as
    `check --pr N` answers a user, where a later PR or a direct commit may be named too.
    """
    asked = []
    for number in sample:
        try:
            ranked = ask(bench, db, number, settings, target)
        except PrdupError:
            continue  # no diff in the index (empty, undelimitable): nothing to claim
        asked.append(number)
        features.extend({"repo": bench.repo, **row} for row in feature_rows(number, ranked, None))
        score.sampled += 1
        alarm = next((f for f in ranked if f.decides and f.score >= settings.min_score), None)
        if alarm:
            score.alarms += 1
            score.alarm_examples.append(alarm_row(number, alarm))
        if user_view:
            found = check(bench.git_dir, db_path=db, pr=number, settings=settings, target=target)
            first = next(
                (f for f in found.findings if f.decides and f.score >= settings.min_score), None
            )
            if first:
                score.user_alarms += 1
                score.user_alarm_examples.append(alarm_row(number, first))
    return asked


def alarm_row(number: int, alarm: Finding) -> dict:
    return {
        "pr": number,
        "by": alarm.candidate.number,
        "commit": alarm.candidate.commit,
        "verdict": alarm.verdict,
        "score": round(alarm.score, 3),
        "reasons": list(alarm.reasons),
    }


def score_baseline(
    bench: Bench, db: Path, pairs: list[dict], sample: list[int], score: RepoScore
) -> dict:
    """The TF-IDF baseline on the same pairs and sample PRs prdup was asked about."""
    queries = sorted({p["dup"] for p in pairs} | set(sample))
    if not queries:
        return {}
    started = time.perf_counter()
    ranges = tfidf_baseline.indexed_ranges(db, max(queries) + 1)
    titles = {pr["number"]: pr.get("title") or "" for pr in bench.prs}
    numbers = {n for n in ranges if n <= max(queries)} | set(queries)
    docs = tfidf_baseline.documents(bench.git_dir, ranges, titles, numbers)
    rankings = tfidf_baseline.rank_queries(docs, queries)
    alarm = tfidf_baseline.ALARM
    for pair in pairs:
        dup, orig = pair["dup"], pair["orig"]
        ranking = rankings[dup]
        named = [n for n, _ in ranking.ranked]
        score.pairs += 1
        for k in score.hit_at:
            score.hit_at[k] += orig in named[:k]
        if named[:1] == [orig] and ranking.ranked[0][1] >= alarm:
            score.decided_at_1 += 1
        if pair.get("orig_state") == "MERGED":
            score.merged_pairs += 1
            score.merged_done += ranking.cosine_of(orig) >= alarm
    for number in sample:
        ranking = rankings[number]
        score.sampled += 1
        if ranking.ranked and ranking.ranked[0][1] >= alarm:
            score.alarms += 1
            first, cosine = ranking.ranked[0]
            score.alarm_examples.append({"pr": number, "by": first, "cosine": round(cosine, 3)})
    score.seconds = time.perf_counter() - started
    with_diff = sum(1 for n in numbers if (r := ranges.get(n)) and r.base and r.end)
    return {"documents": len(docs), "with_diff": with_diff, "seconds": round(score.seconds, 1)}


def write_alarms(bench: Bench, db: Path, score: RepoScore, path: Path) -> None:
    """Every prdup alarm on the unlabelled sample, one JSON line each, for reading by hand."""
    prs = {pr["number"]: pr for pr in bench.prs}
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        with path.open("w") as out:
            kinds = [("earlier", a) for a in score.alarm_examples]
            kinds += [("any", a) for a in score.user_alarm_examples]
            for scope, alarm in kinds:
                query = alarm_sheet.load_side(conn, prs, alarm["pr"])
                named = alarm_sheet.load_side(conn, prs, alarm["by"] or -1)
                row = {
                    "repo": bench.repo,
                    "scope": scope,
                    "named_commit": alarm.get("commit"),
                    "query": query.number,
                    "named": alarm["by"],  # None: a direct commit, `named_commit`
                    "verdict": alarm["verdict"],
                    "score": alarm["score"],
                    "reasons": alarm["reasons"],
                    "query_title": query.title,
                    "named_title": named.title,
                    "query_state": query.state,
                    "named_state": named.state,
                    "query_range": f"{query.base}..{query.end}",
                    "named_range": f"{named.base}..{named.end}",
                }
                out.write(json.dumps(row) + "\n")
    finally:
        conn.close()


def evaluate(
    repo: str, args: argparse.Namespace, settings: Settings, features: list[dict]
) -> tuple[RepoScore, RepoScore, dict]:
    """Index (or reuse) one repository and score prdup and the baseline on it."""
    bench = Bench.load(repo, args.bench_dir, args.mirrors)
    db = args.work / (f"{repo}.window.db" if args.window else f"{repo}.db")
    targets = index_step(bench, db, args, settings)
    score = RepoScore(repo)
    started = time.perf_counter()
    pairs = score_pairs(bench, db, settings, targets[0], score, features)
    drawn = bench.sample(args.sample)
    sample = score_sample(
        bench, db, settings, targets[0], drawn, score, features, not args.no_user_view
    )
    score.seconds = time.perf_counter() - started
    write_alarms(bench, db, score, args.out / f"{repo}.alarms.jsonl")
    baseline = RepoScore(repo)
    about = {"targets": targets, "db": str(db)}
    if not args.no_baseline:
        about["baseline"] = score_baseline(bench, db, pairs, sample, baseline)
    return score, baseline, about


def code_under_test() -> str:
    """Where the prdup being scored comes from, and its commit."""
    root = Path(prdup.__file__).resolve().parents[1]
    sha = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    return f"{root} at {sha or '?'}{' (uncommitted changes)' if dirty else ''}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bench-dir", type=Path, required=True)
    parser.add_argument("--mirrors", type=Path, required=True)
    parser.add_argument("--work", type=Path, default=Path("/tmp/prdup-accuracy"), help="indexes")
    parser.add_argument("--out", type=Path, help="reports and alarm files (default: --work)")
    parser.add_argument("--repos", default=DEFAULT_REPOS)
    parser.add_argument(
        "--targets",
        default="all",
        help="branches indexed as targets: all (default), lines (default branch and release"
        " lines) or a regular expression (the default branch always)",
    )
    parser.add_argument(
        "--window", action="store_true", help="the branches as of the dump date, prs.json only"
    )
    parser.add_argument("--reindex", action="store_true")
    parser.add_argument("--checks-only", action="store_true", help="use the index as it is")
    parser.add_argument("--no-symbols", action="store_true")
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument(
        "--no-user-view", action="store_true", help="skip the sample's unrestricted checks"
    )
    parser.add_argument("--sample", type=int, default=FALSE_ALARM_SAMPLE)
    parser.add_argument("--features", type=Path)
    parser.add_argument("--report", type=Path, help="write the figures and misses as JSON")
    parser.add_argument("--curve", type=Path, help="write a precision-recall curve PNG")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    args.out = args.out or args.work
    args.out.mkdir(parents=True, exist_ok=True)
    settings = Settings(symbols=not args.no_symbols)
    tested = code_under_test()
    print(f"code under test: {tested}", file=sys.stderr, flush=True)
    features: list[dict] = []
    total, total_baseline = RepoScore("total"), RepoScore("total")
    results = []
    for repo in args.repos.split(","):
        score, baseline, about = evaluate(repo, args, settings, features)
        print(score.row(), flush=True)
        print(f"  baseline {baseline.row()}  {about.get('baseline')}", flush=True)
        results.append((score, baseline, about))
        total.add(score)
        total_baseline.add(baseline)
    print()
    print(TABLE_HEAD)
    for score, baseline, _ in results:
        print(side_by_side(score, baseline))
    if len(results) > 1:
        print(side_by_side(total, total_baseline))
    print(f"code under test: {tested}")
    print("command: python " + " ".join(sys.argv))
    if args.features:
        args.features.write_text("\n".join(json.dumps(row) for row in features) + "\n")
    if args.report:
        args.report.write_text(
            json.dumps(
                {
                    "command": " ".join(sys.argv),
                    "code": tested,
                    "repos": [
                        {**asdict(s), "baseline": asdict(b), **about} for s, b, about in results
                    ],
                    "total": asdict(total),
                    "total_baseline": asdict(total_baseline),
                },
                indent=1,
            )
        )
    if args.curve:
        from pr_curve import write_curve

        write_curve(features, args.curve)


if __name__ == "__main__":
    main()
