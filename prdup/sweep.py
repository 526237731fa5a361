"""`sweep`: match every open PR against merged PRs and the other open PRs, then sort them into
what a maintainer acts on: already done, duplicate groups, partly done, related work.

An "unmerged" PR (its state unknown: no GitHub metadata) is swept as an open one.

Each open PR goes through `prdup check --pr N`'s own path (`prdup.checking.match_pr`: the
candidate engine of `index.questions.candidates`, `detector.matcher.match`, the replay), without
the target probe, and keeps its findings in check's order: every deciding one, and the first few
that make no claim (for the related class). Its answer is the first at or above the threshold,
the finding `check --pr N` shows first. The engine reads the lines every swept PR shares once
for the whole sweep, each candidate's evidence once per process, and only the candidates that
could decide; replays share what they read from git per process (`replaying.SharedReads`).
Classes and groups are `detector.grouping`'s.

Results are cached in the index per PR (`sweep_results`), keyed by the PR's head, a fingerprint
of the matcher and its dismissals, and the state of every change that could alter them (head,
state, title, body length and author; see `_stale_numbers`), so a sweep after `prdup index` only
re-checks the PRs an update can affect.

`SweepResult.to_json()` is a stable surface (`schema_version` 2)::

    {"schema_version": 2,
     "min_score": 0.7,
     "stats": {"open_prs": N, "swept": N, "rechecked": N, "reused": N, "seconds": S, "jobs": N,
               "unknown_states": N, "estimated_open": N, "estimated_closed_left_out": N,
               "opened_before_since": N},
     "counts": {"already_done": N, "superseded": N, "duplicate_groups": N, "to_close": N,
                "partly_done": N, "related": N},
     "already_done": [{"pr": N, "by": M | null, "commit": "sha" | null, "score": S,
                       "through": K | null, "title": "...", "reasons": ["..."]}],
     "superseded": [... as partly_done: a landing rewrote the lines each PR edits ...],
     "groups": [{"keep": N, "keep_class": "partly-done" | ... | null, "issues": ["#7"],
                 "members": [{"pr": N, "state": "merged|open|closed|unmerged", "title": "...",
                              "title_from_commit": true | false,
                              "verdict": "keep|duplicate|covered", "score": S | null,
                              "against": M | null, "commit": "sha" | null,
                              "remaining": [...]}, ...]}],
     "partly_done": [{"pr": N, "title": "...", "by": M | null, "commit": "sha" | null,
                      "state": "merged", "score": S, "done_share": F | null,
                      "remaining": [{"path": "a.py", "lines": [[FIRST, LAST], ...],
                                     "new_file": false}],
                      "gone_files": ["b.py"], "rewritten": [...], "reasons": ["..."]}],
     "related": [{"pr": N, "title": "...", "to": M | null, "commit": "sha" | null,
                  "state": "...", "verdict": "overlap|related", "score": S, "reasons": [...]}],
     "prs": [{"pr": N, "class": "already-done|superseded|duplicate|partly-done|related",
              "finding": {"pr": M | null, "commit": "sha" | null, "state": "...",
                          "verdict": "...", "score": S}}]}

Every open PR's answer is the finding `check --pr N` shows first (its first finding at or above
`min_score`); `prs` lists each PR that has one, and that answer puts it in exactly one of
`already_done`, `superseded`, `groups` (as a member to close; or as the kept PR, where PRs name each
other in a loop), `partly_done` or `related` (its `class`). Of two open PRs making one change, the
later names the earlier (the earlier's answer is no duplicate): the earlier is kept. A group whose
kept PR landed, or is itself already done, is done all of it: its members are in `already_done`,
done `through` the kept PR where their answer names it (class "already-done", `finding` still their
own answer). `counts.to_close` counts the PRs to close (already done, and the members of groups),
never a kept PR. A superseded PR's landing (`by`) rewrote, its own way, the lines the PR edits, or
made most of it with the rest written otherwise since: it no longer applies as it is (`remaining`,
where some tests or docs of it still would). A group's first member is the PR to keep (verdict
"keep", score null; `keep_class` is its own answer's class, if it has one); every other member
carries its own answer: its verdict, score, and the PR it names (`against`: the kept PR or another
member). `remaining` lists, file by file, the lines on the PR's side that the landing (or the PR it
duplicates) did not make: a duplicate may do a little more than the PR it is closed into. A partly
done PR's `gone_files` are the files of the rest that the target no longer has: nothing of them is
left to apply (where `remaining` is empty, a part landed and the rest has nowhere to go: the PR can
be closed); `rewritten` (as `remaining`) is the rest the target has written otherwise since, not to
apply as it is. Keys may be added to objects in later versions; none is removed or changes meaning
without a new `schema_version`. (Version 1 had no `partly_done`, `related`, `prs`, `keep_class`,
`issues`, `against`; its members' verdicts were their evidence against the kept PR, and PRs already
done were members of a merged PR's group.)
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import multiprocessing
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import Any

import git

from detector import decide
from detector.evidence import ChangeEvidence, Finding, RemainingHunk
from detector.grouping import (
    AlreadyDone,
    Group,
    Link,
    Pull,
    answers,
    done_answers,
    done_through_kept,
    group_by_kept,
    triage_class,
)
from detector.matcher import rank_key, stands_alone
from index.config import Settings
from index.errors import PrdupError
from index.git import gitsource
from index.github import dismissals
from index.questions import candidates, lookup, replay_memory, replaying, sweep_cache
from index.questions import whole_lines as whole_lines_kept
from index.questions.candidates import Batch, CandidateEngine, ChangeRow, read_change_rows
from index.questions.replaying import BranchReverts
from index.storage import IndexStore, identity
from prdup import checking, sweep_scope
from prdup.checking import match_alone, match_pr, open_index, pr_info, pr_span
from prdup.lifetime import die_with_parent, signals_held
from prdup.titles import shown_title

SCHEMA_VERSION = 2
CACHE_VERSION = "3"  # bump when what a cached row means changes
# Line rarity moves with the index's size: re-check cached PRs once it grew (or shrank) by this
# share, and by at least MIN_DRIFT changes (a small index is quick to sweep again anyway).
RARITY_DRIFT = 0.1
MIN_DRIFT = 25
MMAP_BYTES = 1 << 30
MIN_PARALLEL = 20  # fewer PRs than this are matched in this process: forking costs more
MIN_PARALLEL_REPLAYING = 4  # the same where PRs are replayed (a PR then costs ~0.3 s)
DIFFS_READ_TOGETHER = 16  # PRs whose diffs one git process reads, handed to a process at once
DIFFS_AHEAD = 32  # a sweep of this few PRs reads their diffs before forking (two git processes)
DIGITS_LOOKED_FOR = 64  # changes that moved, looked for in a cached row's text before parsing it
SHOWN_LINES = 12  # shared lines kept per finding for the report
SPANS_IN_WORDS = 3  # line spans of a file said of a rest that is not to apply, then "N more"
CANDIDATE_STATES = ("merged", "open", "unmerged")
# Findings that make no claim (overlap, related) are kept for the related class: those scoring
# at least RELATED_FLOOR, the first RELATED_KEPT of them (check ranks them by score).
RELATED_FLOOR = 0.5
RELATED_KEPT = 3
RELATED_LINES = 3

Progress = Callable[[int, int], None]


# --- what a sweep returns -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SweptFinding:
    """One finding of an open PR, as the sweep caches and reports it (a PR's findings are kept
    in `check`'s order: its first at or above the threshold is its answer)."""

    change_id: int
    pr: int | None
    commit: str | None
    state: str
    verdict: str
    score: float
    reasons: tuple[str, ...] = ()
    shared_removed: tuple[str, ...] = ()
    shared_added: tuple[str, ...] = ()
    shared_files: tuple[str, ...] = ()
    shared_symbols: tuple[str, ...] = ()
    remaining: tuple[RemainingHunk, ...] = ()  # what the candidate did not do (partly done)
    gone_files: tuple[str, ...] = ()  # the rest's files the target no longer has: nothing to apply
    rewritten: tuple[RemainingHunk, ...] = ()  # the rest the target wrote otherwise since
    done_share: float | None = None  # replayed: the share of the changed lines it did
    rank: tuple[float, ...] = ()  # `matcher.rank_key`: where `check` placed it (`_merged`)

    @property
    def decides(self) -> bool:
        return triage_class(self.verdict) != "related"

    @property
    def remaining_by_file(self) -> list[tuple[str, bool, list[tuple[int, int]]]]:
        """(path, a new file, line spans) of what remains, file by file, in the change's order."""
        return _by_file(self.remaining)

    def remaining_text(self, spans_shown: int | None = None) -> list[str]:
        """What remains in words, one item a file: "a.py (lines 3-5, line 9)"; with
        `spans_shown`, a file's first spans and how many more."""
        return _in_words(self.remaining, spans_shown)

    @property
    def share_done(self) -> str | None:
        """How much of it is done, in words: the share counts the hunks that carry the change
        (its code, where it has code), so a rest of tests or docs beside code all done is
        "all its code done", not "100% done" beside a line still to do."""
        if self.done_share is None:
            return None
        if round(self.done_share, 2) >= 1 and self.remaining:
            return "all its code done"
        return f"{self.done_share:.0%} done"

    @property
    def not_to_apply(self) -> list[str]:
        """The rest that is not to do, in words: in files the target no longer has, and lines
        the target wrote otherwise since (`remaining` leaves both out)."""
        said = []
        if self.gone_files:
            gone = ", ".join(self.gone_files)
            said.append(f"nothing to apply: in files the target no longer has: {gone}")
        if self.rewritten:
            where = "; ".join(_in_words(self.rewritten, SPANS_IN_WORDS))
            said.append(f"written otherwise on the target since, not to apply as it is: {where}")
        return said

    @property
    def named(self) -> str:
        """The change it names, as a reader knows it: "#12", or "commit 0123456789"."""
        return f"#{self.pr}" if self.pr is not None else f"commit {(self.commit or '')[:10]}"

    @classmethod
    def from_finding(cls, change_id: int, finding: Finding, reference: int) -> SweptFinding:
        """The finding of PR #`reference` (ranked as `check` ranks that PR's findings)."""
        candidate = finding.candidate
        shown = SHOWN_LINES if finding.decides else RELATED_LINES
        signals = finding.signals
        return cls(
            change_id=change_id,
            pr=candidate.number,
            commit=candidate.commit,
            state=candidate.state,
            verdict=finding.verdict,
            score=round(finding.score, 4),
            reasons=finding.reasons,
            shared_removed=finding.shared_removed[:shown],
            shared_added=finding.shared_added[:shown],
            shared_files=finding.shared_files,
            shared_symbols=finding.shared_symbols,
            remaining=finding.remaining,
            gone_files=finding.gone_files,
            rewritten=finding.rewritten,
            done_share=round(signals.replay_done, 4) if signals.replayed else None,
            rank=rank_key(finding, reference),
        )

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SweptFinding:
        return cls(
            change_id=int(data["change_id"]),
            pr=data["pr"],
            commit=data["commit"],
            state=str(data["state"]),
            verdict=str(data["verdict"]),
            score=float(data["score"]),
            reasons=tuple(data["reasons"]),
            shared_removed=tuple(data["shared_removed"]),
            shared_added=tuple(data["shared_added"]),
            shared_files=tuple(data["shared_files"]),
            shared_symbols=tuple(data["shared_symbols"]),
            remaining=tuple(RemainingHunk(**hunk) for hunk in data.get("remaining", ())),
            gone_files=tuple(data.get("gone_files", ())),
            rewritten=tuple(RemainingHunk(**hunk) for hunk in data.get("rewritten", ())),
            done_share=data.get("done_share"),
            rank=tuple(data.get("rank", ())),
        )


@dataclass(frozen=True, slots=True)
class PullInfo:
    """An indexed PR as the report names it."""

    number: int
    state: str
    title: str = ""
    author: str | None = None
    created_at: str | None = None
    added: int = 0
    removed: int = 0
    files: int = 0
    head_sha: str | None = None
    title_from_commit: bool = False  # the title is the head commit's subject (no metadata)

    @property
    def changed_lines(self) -> int:
        return self.added + self.removed

    @property
    def marked_title(self) -> str:
        """The title as reports show it: marked where it is the head commit's subject."""
        return shown_title(self.title, self.title_from_commit)


@dataclass(frozen=True, slots=True)
class SweepStats:
    open_prs: int  # open (or unmerged: state unknown) PRs with a diff in the index
    swept: int  # of those, the ones this sweep covered (all in scope, or the --limit newest)
    rechecked: int  # matched anew
    reused: int  # taken from the cache
    seconds: float
    jobs: int
    # Of the swept PRs, those whose state is unknown ("unmerged": no GitHub metadata); they
    # are swept as open PRs, and a closed one among them is reported as if open.
    unknown_states: int = 0
    estimated_open: int = 0  # of the swept PRs, those git estimates open (a recent test merge)
    # Open PRs not swept: git estimates them closed (`include_estimated_closed` sweeps them);
    # opened before `since`.
    estimated_closed_left_out: int = 0
    opened_before_since: int = 0


@dataclass
class SweepResult:
    """Every swept PR's findings and answer, sorted into the classes a maintainer acts on."""

    groups: list[Group]
    already_done: list[AlreadyDone]
    pulls: dict[int, PullInfo]
    findings: dict[int, list[SweptFinding]]
    stats: SweepStats
    min_score: float
    rechecked: list[int] = field(default_factory=list)  # the PRs matched anew, newest first
    issues: dict[int, frozenset[str]] = field(default_factory=dict)  # the issues PRs name

    def answer(self, number: int) -> SweptFinding | None:
        """The finding `check --pr N` shows first: PR `number`'s first at or above the
        threshold."""
        return next((f for f in self.findings.get(number, []) if f.score >= self.min_score), None)

    def answers(self) -> dict[int, SweptFinding]:
        """Each swept PR that has an answer, by number."""
        found = {number: self.answer(number) for number in sorted(self.findings)}
        return {number: f for number, f in found.items() if f is not None}

    def in_class(self, name: str) -> list[tuple[int, SweptFinding]]:
        """(PR, its answer) of every PR the answer puts in class `name`, by PR number."""
        return [(n, f) for n, f in self.answers().items() if triage_class(f.verdict) == name]

    @property
    def partly_done(self) -> list[tuple[int, SweptFinding]]:
        return self.in_class("partly-done")

    @property
    def superseded(self) -> list[tuple[int, SweptFinding]]:
        return self.in_class("superseded")

    @property
    def related(self) -> list[tuple[int, SweptFinding]]:
        return self.in_class("related")

    def keep_class(self, group: Group) -> str | None:
        """The class of the kept PR's own answer (a kept PR may itself be partly done)."""
        found = self.answer(group.keep)
        return triage_class(found.verdict) if found is not None else None

    def keep_landed(self, group: Group) -> SweptFinding | None:
        """The kept PR's own answer where it says the PR landed, in whole or in part: what the
        maintainer keeping it must know (keep #7, itself partly done in #5: rebase it)."""
        found = self.answer(group.keep)
        landed = ("already-done", "superseded", "partly-done")
        if found is not None and self.keep_class(group) in landed:
            return found
        return None

    def group_issues(self, group: Group) -> list[str]:
        """The issues two or more of the group's members name."""
        named = [issue for n in group.members for issue in self.issues.get(n, ())]
        return sorted({issue for issue in named if named.count(issue) > 1})

    def verdicts(self) -> set[str]:
        """The verdicts of what the report shows: each answered PR's answer (what `--fail-on`
        is checked against, as `check --pr N` checks its first finding and the others)."""
        return {found.verdict for found in self.answers().values()}

    def to_json(self) -> dict[str, Any]:
        answered = self.answers()
        done = {entry.pr for entry in self.already_done}
        return {
            "schema_version": SCHEMA_VERSION,
            "min_score": self.min_score,
            "stats": asdict(self.stats),
            "counts": self.counts(),
            "already_done": [self._done_json(done) for done in self.already_done],
            "superseded": [self._partly_json(n, f) for n, f in self.superseded],
            "groups": [self._group_json(group) for group in self.groups],
            "partly_done": [self._partly_json(n, f) for n, f in self.partly_done],
            "related": [self._related_json(n, f) for n, f in self.related],
            "prs": [
                {
                    "pr": number,
                    "class": "already-done" if number in done else triage_class(found.verdict),
                    "finding": {
                        "pr": found.pr,
                        "commit": found.commit,
                        "state": found.state,
                        "verdict": found.verdict,
                        "score": found.score,
                    },
                }
                for number, found in answered.items()
            ],
        }

    def counts(self) -> dict[str, int]:
        """How many PRs each list holds; `to_close` counts the PRs a maintainer closes (already
        done, and the members of duplicate groups), never a kept PR."""
        members = sum(len(group.members) - 1 for group in self.groups)
        return {
            "already_done": len(self.already_done),
            "superseded": len(self.superseded),
            "duplicate_groups": len(self.groups),
            "to_close": len(self.already_done) + members,
            "partly_done": len(self.partly_done),
            "related": len(self.related),
        }

    def _title(self, number: int | None) -> str:
        pull = self.pulls.get(number) if number is not None else None
        return pull.title if pull else ""

    def _done_json(self, done: AlreadyDone) -> dict[str, Any]:
        found = self.answer(done.pr)
        return {
            **asdict(done),
            "title": self._title(done.pr),
            "reasons": list(found.reasons) if found else [],
        }

    def _group_json(self, group: Group) -> dict[str, Any]:
        members = []
        for number in group.members:
            pull = self.pulls.get(number)
            found = None if number == group.keep else self.answer(number)
            members.append(
                {
                    "pr": number,
                    "state": pull.state if pull else "unknown",
                    "title": pull.title if pull else "",
                    "title_from_commit": pull.title_from_commit if pull else False,
                    "verdict": "keep" if found is None else found.verdict,
                    "score": None if found is None else found.score,
                    "against": None if found is None else found.pr,
                    "commit": None if found is None else found.commit,
                    "remaining": [] if found is None else _hunks_json(found.remaining),
                }
            )
        return {
            "keep": group.keep,
            "keep_class": self.keep_class(group),
            "issues": self.group_issues(group),
            "members": members,
        }

    def _partly_json(self, number: int, found: SweptFinding) -> dict[str, Any]:
        return {
            "pr": number,
            "title": self._title(number),
            "by": found.pr,
            "commit": found.commit,
            "state": found.state,
            "score": found.score,
            "done_share": found.done_share,
            "remaining": _hunks_json(found.remaining),
            "gone_files": list(found.gone_files),
            "rewritten": _hunks_json(found.rewritten),
            "reasons": list(found.reasons),
        }

    def _related_json(self, number: int, found: SweptFinding) -> dict[str, Any]:
        return {
            "pr": number,
            "title": self._title(number),
            "to": found.pr,
            "commit": found.commit,
            "state": found.state,
            "verdict": found.verdict,
            "score": found.score,
            "reasons": list(found.reasons),
        }


def _hunks_json(hunks: Iterable[RemainingHunk]) -> list[dict[str, Any]]:
    return [
        {"path": path, "lines": [list(span) for span in spans], "new_file": new_file}
        for path, new_file, spans in _by_file(hunks)
    ]


def _by_file(hunks: Iterable[RemainingHunk]) -> list[tuple[str, bool, list[tuple[int, int]]]]:
    """(path, a new file, line spans) of `hunks`, file by file, in the change's order."""
    files: dict[str, tuple[bool, list[tuple[int, int]]]] = {}
    for hunk in hunks:
        new_file, spans = files.setdefault(hunk.path, (hunk.new_file, []))
        if (hunk.first_line, hunk.last_line) not in spans:
            spans.append((hunk.first_line, hunk.last_line))
        files[hunk.path] = (new_file or hunk.new_file, spans)
    return [(path, new_file, spans) for path, (new_file, spans) in files.items()]


def _in_words(hunks: Iterable[RemainingHunk], spans_shown: int | None) -> list[str]:
    """`hunks` in words, one item a file: "a.py (lines 3-5, line 9)"; with `spans_shown`, a
    file's first spans and how many more."""
    items = []
    for path, new_file, spans in _by_file(hunks):
        words = ["new file"] if new_file else []
        shown = spans if spans_shown is None else spans[:spans_shown]
        words += [f"line {a}" if a == b else f"lines {a}-{b}" for a, b in shown]
        if len(spans) > len(shown):
            words.append(f"{len(spans) - len(shown)} more")
        items.append(f"{path} ({', '.join(dict.fromkeys(words))})")
    return items


# --- the sweep ------------------------------------------------------------------------------


def sweep(
    repo_path: str | Path | None = ".",
    db_path: str | Path | None = None,
    *,
    min_score: float | None = None,
    jobs: int = 2,
    limit: int | None = None,
    full: bool = False,
    progress: Progress | None = None,
    settings: Settings | None = None,
    since: date | None = None,
    include_estimated_closed: bool = False,
) -> SweepResult:
    """Check every open PR (or the `limit` newest) and group the duplicates among them.

    `min_score` (default: the `min_score` setting's default) only filters what is grouped and
    listed; every deciding finding is cached, so another threshold needs no new matching.
    `since` sweeps only PRs opened on or after that day; a PR git estimates closed (no
    metadata, `index.git.state_estimate`) is swept only with `include_estimated_closed`.
    """
    started = time.monotonic()
    if min_score is None:
        min_score = Settings().min_score
    repo = gitsource.open_repository(repo_path or ".") if db_path is None else None
    store = open_index(repo, db_path)
    try:
        source = _replay_source(repo, repo_path, store, settings or Settings())
        snapshot = read_change_rows(store)
        open_rows = [row for row in snapshot.values() if row.is_open_pr]
        estimates = store.changes.estimated_states()
        scope = sweep_scope.select(
            open_rows,
            estimates,
            include_estimated_closed=include_estimated_closed,
            since=since,
            head_dates=_undated_heads(repo, open_rows) if since is not None else None,
        )
        swept = scope.numbers[:limit] if limit is not None else scope.numbers
        findings, rechecked = _findings(store, snapshot, swept, jobs, full, progress, source)
        issues = sweep_cache.issues_named(store)
    finally:
        store.close()
    stats = SweepStats(
        open_prs=len(open_rows),
        swept=len(swept),
        rechecked=len(rechecked),
        reused=len(swept) - len(rechecked),
        seconds=round(time.monotonic() - started, 2),
        jobs=jobs,
        unknown_states=len(set(swept) & _unknown_states(snapshot)),
        estimated_open=sum(estimates.get(n) == "open" for n in swept),
        estimated_closed_left_out=scope.estimated_closed,
        opened_before_since=scope.before_since,
    )
    pulls = _pulls(snapshot)
    links = _links(findings)
    # Groups are made of linked PRs: only those are ranked.
    linked = {n for link in links for n in (link.query, link.candidate) if n in pulls}
    ranks = {n: Pull(n, pulls[n].state, pulls[n].changed_lines) for n in linked}
    answered = answers(links, min_score)
    groups, through = done_through_kept(
        group_by_kept(ranks, answered, links, issues, min_score), answered, ranks
    )
    return SweepResult(
        groups=groups,
        already_done=sorted(done_answers(answered) + through, key=lambda done: done.pr),
        pulls=pulls,
        findings=findings,
        stats=stats,
        min_score=min_score,
        rechecked=rechecked,
        issues=issues,
    )


def _findings(
    store: IndexStore,
    snapshot: dict[int, ChangeRow],
    swept: list[int],
    jobs: int,
    full: bool,
    progress: Progress | None,
    source: ReplaySource | None = None,
) -> tuple[dict[int, list[SweptFinding]], list[int]]:
    """Each swept PR's deciding findings, from the cache where it holds; and the PRs redone."""
    cache = _load_cache(store)
    moved = _moved_changes(store, snapshot)
    settings = source.settings if source is not None else Settings()
    whole = _cut_lines(store, cache, settings) if moved and source is not None else {}
    stale, sharing = _stale_numbers(store, cache, snapshot, moved, whole)
    in_sweep = set(swept)
    # A sharing PR this sweep leaves out (`--limit`, `--since`) is stale: its row goes, and a
    # later sweep that takes it matches it again.
    stale |= sharing.keys() - in_sweep
    sharing = {n: shared for n, shared in sharing.items() if n in in_sweep}
    plan = _Plan() if full else _plan(store, cache, snapshot, sharing, moved, source)
    placing = plan.placing
    stale |= sharing.keys() - plan.here.keys() - placing.keys()
    todo = [n for n in swept if full or n not in cache or n in stale or n in placing]
    replays: list[replay_memory.Row] = []
    redone = set(todo)
    merged: dict[int, list[SweptFinding]] = {}
    reused: dict[int, list[SweptFinding]] = {}

    def place_then_reuse() -> list[int]:
        """While other processes match: place the new findings among the cached PRs not stored
        cut (`_merged`); those that do not stand alone are matched after all (returned)."""
        merged.update(_merged(store, cache, plan, source))
        late = [n for n in swept if n in plan.here and n not in merged]
        stale.update(late)
        redone.update(late)
        reused.update(
            (n, _current(merged[n] if n in merged else cache[n].findings, snapshot))
            for n in swept
            if n not in redone
        )
        return late

    reverts = _TargetReverts(replay_memory.kept_reverts(store) if todo or plan.here else None)
    placed: set[int] = set()
    fresh = _run(
        store.path,
        todo,
        snapshot,
        jobs,
        progress,
        source,
        replays,
        reverts,
        place_then_reuse,
        placing,
        placed,
    )
    # Stale rows this sweep did not redo (outside --limit) go: a later sweep redoes them.
    if not store.read_only:  # a read-only index is swept all the same, and caches nothing
        # A finding placed among cached ones: the row is as old as the rest of it.
        kept = {n: cache[n].change_count for n in merged.keys() | placed}
        _save_cache(store, {**merged, **fresh}, stale - set(fresh), snapshot, moved, kept)
        if fresh:
            # The replays of the PRs still open with the same head are kept; the others go.
            live = {row.head_sha for row in snapshot.values() if row.is_open_pr and row.head_sha}
            replay_memory.save(store, replays, live)
        if reverts.read is not None:
            replay_memory.keep_reverts(store, *reverts.read)
    rechecked = [n for n in swept if n in fresh and n not in placed]
    return {n: fresh[n] if n in fresh else reused[n] for n in swept}, rechecked


def _undated_heads(repo: git.Repo | None, rows: list[ChangeRow]) -> dict[str, int]:
    """The head commits' dates of the PRs that have no `created_at` (`--since` reads them)."""
    heads = [row.head_sha for row in rows if not row.created_at and row.head_sha]
    return gitsource.committed_at(repo, heads) if repo is not None and heads else {}


def _unknown_states(snapshot: dict[int, ChangeRow]) -> set[int]:
    """The PRs whose state is unknown: unmerged, open or closed (no GitHub metadata)."""
    return {
        row.number
        for row in snapshot.values()
        if row.number is not None and row.state == "unmerged"
    }


def _current(findings: list[SweptFinding], snapshot: dict[int, ChangeRow]) -> list[SweptFinding]:
    """Cached findings named as the index names their changes now (a commit relabelled as the
    PR that landed it keeps its id and lines, so the finding holds, under its new name)."""
    current = []
    for f in findings:
        row = snapshot.get(f.change_id)
        if row is None:
            if f.decides:
                current.append(f)
        else:
            current.append(f if row.number == f.pr else replace(f, pr=row.number))
    return current


def _links(findings: dict[int, list[SweptFinding]]) -> list[Link]:
    """Every finding as a link, each PR's in `check`'s order."""
    return [
        Link(number, f.pr, f.verdict, f.score, f.state, f.commit)
        for number, found in findings.items()
        for f in found
    ]


def _pulls(snapshot: dict[int, ChangeRow]) -> dict[int, PullInfo]:
    return {
        row.number: PullInfo(
            number=row.number,
            state=row.state,
            title=row.title,
            author=row.author,
            created_at=row.created_at,
            added=row.added,
            removed=row.removed,
            files=row.files,
            head_sha=row.head_sha,
            title_from_commit=row.title_from_commit,
        )
        for row in snapshot.values()
        if row.number is not None
    }


# --- the cache ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CachedSweep:
    """A PR's cached findings as stored (JSON text): parsed only for the answer (while the
    processes match the PRs to redo), and to tell what is stale only where the text names a
    change that moved (`may_name`)."""

    number: int
    head_sha: str
    fingerprint: str
    change_count: int
    stored: str = "[]"

    @property
    def findings(self) -> list[SweptFinding]:
        return [SweptFinding.from_json(item) for item in json.loads(self.stored)]

    def may_name(self, change_ids: Collection[int]) -> bool:
        """False where none of these changes can be named: the text has not even its digits
        (looked for when they are few: past that, parsing costs less)."""
        if len(change_ids) > DIGITS_LOOKED_FOR:
            return True
        return any(str(change_id) in self.stored for change_id in change_ids)

    def names(self, change_ids: Collection[int]) -> bool:
        """Whether some finding of it names one of these changes."""
        return any(int(item["change_id"]) in change_ids for item in json.loads(self.stored))


def matcher_fingerprint() -> str:
    """Changes whenever the matcher could decide differently: its code, weights and lookups."""
    sources = [
        *sorted(Path(decide.__file__).parent.glob("*.py")),
        decide.WEIGHTS_FILE,
        Path(lookup.__file__),
        Path(candidates.__file__),
        Path(replaying.__file__),  # the replay decides what `match` only proposes
        Path(checking.__file__),
    ]
    digest = hashlib.sha1(CACHE_VERSION.encode())
    for source in sources:
        if source.name != "grouping.py":  # grouping reads cached findings; it makes none
            digest.update(source.read_bytes())
    return digest.hexdigest()[:16]


def _fingerprints(store: IndexStore, numbers: Iterable[int]) -> dict[int, str]:
    """The matcher's fingerprint plus the PR's dismissals (`check` never names those)."""
    base = matcher_fingerprint()
    dismissed = dismissals.by_number(store)
    return {n: f"{base}:{','.join(map(str, dismissed.get(n, [])))}" for n in numbers}


def _load_cache(store: IndexStore) -> dict[int, CachedSweep]:
    return {
        row.number: CachedSweep(
            row.number,
            row.head_sha,
            row.fingerprint,
            row.change_count,
            row.findings,
        )
        for row in sweep_cache.load(store)
    }


def _stale_numbers(
    store: IndexStore,
    cache: dict[int, CachedSweep],
    snapshot: dict[int, ChangeRow],
    moved: set[int],
    whole: Mapping[int, Collection[int]] | None = None,
) -> tuple[set[int], dict[int, set[int]]]:
    """Cached PRs whose findings may no longer hold; and the cached PRs whose findings hold
    but for the changes that moved that share a line with them, each with those changes
    (`whole`: a cut PR's lines past its cut, `_cut_lines`).

    A row holds while its PR keeps its head and stays open, the matcher's fingerprint and the
    PR's dismissals are the same, the index has not grown by more than `RARITY_DRIFT` (line
    rarity moves with its size), and no change it found, related ones included, was updated or
    removed (a related finding of a PR stored cut may rest on lines past the cut, which no
    shared line tells). A change that was added or updated since the last sweep and shares a
    line with it that the candidate lookup uses (a finding needs shared lines) may add a
    finding: `_merged` places it, or the PR is redone. Not followed: changes sharing only
    common lines with it, or only lines past the cut of a cut PR whose whole lines no sweep
    kept, and the small drift of line and word weights as the index grows (up to
    `RARITY_DRIFT`); `--full` redoes everything.
    """
    if not cache:
        return set(), {}
    by_number = {row.number: row for row in snapshot.values() if row.number is not None}
    count = int(store.get_meta("change_count") or 0)
    fingerprints = _fingerprints(store, cache)
    stale: set[int] = set()
    for number, cached in cache.items():
        row = by_number.get(number)
        if (
            row is None
            or not row.is_open_pr
            or row.head_sha != cached.head_sha
            or row.id in moved
            or cached.fingerprint != fingerprints[number]
            or abs(count - cached.change_count) > max(RARITY_DRIFT * cached.change_count, MIN_DRIFT)
            or (cached.may_name(moved) and cached.names(moved))
        ):
            stale.add(number)
    changed = [cid for cid in moved if cid in snapshot]
    sharing: dict[int, set[int]] = {}
    for change_id, shared in sweep_cache.sharing_rare_lines(store, changed, whole).items():
        sharer = snapshot[change_id].number if change_id in snapshot else None
        if sharer is not None and sharer in cache and sharer not in stale:
            sharing[sharer] = shared
    return stale, sharing


def _cut_lines(
    store: IndexStore, cache: Mapping[int, CachedSweep], settings: Settings
) -> dict[int, frozenset[int]]:
    """The cached PRs stored cut whose whole lines a sweep kept: each change id with the
    hashes of every line it adds and removes (`whole_lines.kept_hashes`)."""
    spans = {}
    for row in sweep_cache.cut_unmerged(store):
        base, head = pr_span(row)
        if row["number"] in cache and base and head:
            spans[int(row["id"])] = (base, head)
    return whole_lines_kept.kept_hashes(replay_memory.ReplayMemory(store), spans, settings)


@dataclass
class _Plan:
    """The cached PRs a re-sweep places new findings among instead of matching them again
    (`_plan`): those stored cut, by the matching processes (`_Matcher.place`), and the others,
    by this process while those match (`_merged`)."""

    placing: dict[int, _Placing] = field(default_factory=dict)
    here: dict[int, Mapping[str, Any]] = field(default_factory=dict)  # number -> stored row
    shared: dict[int, list[int]] = field(default_factory=dict)  # number -> the moved it shares
    lines: dict[int, ChangeEvidence] = field(default_factory=dict)  # moved change id -> lines
    keys: dict[str, int] = field(default_factory=dict)  # ChangeEvidence.key -> change id


def _plan(
    store: IndexStore,
    cache: dict[int, CachedSweep],
    snapshot: dict[int, ChangeRow],
    sharing: dict[int, set[int]],
    moved: set[int],
    source: ReplaySource | None,
) -> _Plan:
    """The cached PRs that share lines with changes that moved and may take those changes'
    findings placed among their cached ones (`checking.match_alone`, `placed_among`), as
    `check` ranks them: where every such finding stands alone (`matcher.stands_alone`: no
    claim, no replay, no fold), no other finding of the PR changes. The PRs stored cut among
    them are read whole from git, which the matching processes do (`_Matcher.place`); the
    others are placed by this process (`_merged`). (A PR one of whose cached findings names a
    change that moved is stale already: `_stale_numbers`.) Each PR left out of both is to be
    redone: another change that moved (it may be a candidate by a file, a symbol, an issue or
    its words), a moved change with no PR number (ranked among commits by lookup order) or
    one whose head commit another change shares (`matcher.fold_reopened`)."""
    plan = _Plan()
    if not sharing:
        return plan  # nothing new shares a line with a cached PR: nothing to read
    heads: dict[str, int] = {}
    for row in snapshot.values():
        if row.head_sha:
            heads[row.head_sha] = heads.get(row.head_sha, 0) + 1
    alone = {
        cid
        for cid in moved
        if cid in snapshot
        and snapshot[cid].number is not None
        and heads.get(snapshot[cid].head_sha or "", 0) <= 1
    }
    # A moved change that shares no rare line with a PR may still be its candidate (by a
    # file, a symbol, an issue, its words): then the PR is matched again, whole.
    present = {cid for cid in moved if cid in snapshot}
    keys = plan.keys = {row.key: cid for cid, row in snapshot.items()}
    # Each moved change's lines, read once: most PRs that share one with it share few.
    plan.lines = {
        keys[e.key]: e for e in lookup.load_evidence(store, sorted(alone)) if e.key in keys
    }
    for number, shared in sharing.items():
        if present - shared or not shared <= alone:
            continue
        stored = store.changes.row(number)
        if stored is None:
            continue
        if stored["truncated"] and stored["state"] != "merged":
            if source is not None:
                known = {cid: plan.lines[cid] for cid in shared if cid in plan.lines}
                plan.placing[number] = _Placing(sorted(shared), cache[number].findings, known)
            continue
        plan.here[number] = stored
        plan.shared[number] = sorted(shared)
    return plan


def _merged(
    store: IndexStore,
    cache: dict[int, CachedSweep],
    plan: _Plan,
    source: ReplaySource | None,
) -> dict[int, list[SweptFinding]]:
    """The PRs of `plan.here` whose answer is their cached findings with the new changes'
    findings placed among them; one left out is to be matched again: a new finding of it
    that decides or asks a replay (`placed_among`)."""
    if not plan.here:
        return {}
    engine = CandidateEngine(store)
    merged: dict[int, list[SweptFinding]] = {}
    # The repository says whether a replay follows (which candidates could decide); no PR's
    # diff is read here.
    repo = gitsource.open_repository(source.git_dir) if source is not None else None
    settings = source.settings if source is not None else Settings()
    try:
        for number, stored in plan.here.items():
            shared = plan.shared[number]
            found = match_alone(engine, repo, stored, shared, settings, plan.lines)
            cached = cache[number].findings
            placed = placed_among(found, cached, plan.keys, number, repo is not None)
            if placed is not None:
                merged[number] = placed
    finally:
        if repo is not None:
            repo.close()
    return merged


@dataclass(frozen=True)
class _Placing:
    """A cached PR's findings to place new changes' findings among (`placed_among`)."""

    shared: list[int]  # the changes new since the last sweep that share a rare line with it
    cached: list[SweptFinding]
    # Those changes' lines, read once before forking (`match_alone`'s `known_lines`): a PR
    # stored cut, matched by its whole diff, would else look up every line of it to find them.
    known_lines: Mapping[int, ChangeEvidence] = field(default_factory=dict)


def placed_among(
    found: list[Finding] | None,
    cached: list[SweptFinding],
    keys: Mapping[str, int],
    number: int,
    replaying: bool,
) -> list[SweptFinding] | None:
    """PR #`number`'s cached findings with these new ones (`checking.match_alone`) among them,
    as `check` ranks them (`SweptFinding.rank`); None where one of them does not stand alone
    (`matcher.stands_alone`): the PR is to be matched again."""
    if found is None or not all(stands_alone(f, replaying) for f in found):
        return None
    new = [
        SweptFinding.from_finding(keys[f.candidate.key], f, number)
        for f in found
        if f.score >= RELATED_FLOOR and f.candidate.key in keys
    ]
    unclaimed = sorted([f for f in cached if not f.decides] + new, key=lambda f: f.rank)
    return [f for f in cached if f.decides] + unclaimed[:RELATED_KEPT]


def _moved_changes(store: IndexStore, snapshot: dict[int, ChangeRow]) -> set[int]:
    """Change ids added, updated (new sha, state, status, title or author) or removed since the
    last sweep."""
    seen = sweep_cache.seen(store)
    moved = {cid for cid, row in snapshot.items() if seen.get(cid) != row.seen}
    return moved | (set(seen) - set(snapshot))


def _save_cache(
    store: IndexStore,
    fresh: dict[int, list[SweptFinding]],
    invalid: set[int],
    snapshot: dict[int, ChangeRow],
    moved: set[int],
    counted: dict[int, int] | None = None,
) -> None:
    """Write the new rows, drop the invalid ones, and remember the changes that moved as they
    are now (the others are remembered already). A row's index size is now's, or `counted`'s
    (a merged row keeps the size its other findings were made at)."""
    count = int(store.get_meta("change_count") or 0)
    counted = counted or {}
    fingerprints = _fingerprints(store, fresh)
    heads = {row.number: row.head_sha for row in snapshot.values() if row.number is not None}
    rows = [
        sweep_cache.CachedRow(
            n,
            heads[n] or "",
            fingerprints[n],
            counted.get(n, count),
            json.dumps([asdict(f) for f in found]),
        )
        for n, found in fresh.items()
    ]
    seen = [(cid, snapshot[cid].seen) for cid in sorted(moved) if cid in snapshot]
    gone = sorted(cid for cid in moved if cid not in snapshot)
    sweep_cache.save(store, rows, invalid, seen, gone)


# --- matching, in one process or several ----------------------------------------------------


@dataclass
class _Matcher:
    """What every matching process needs: the batch read once before forking, and its own
    store, engine and repository (never share a connection or git's readers across a fork)."""

    db_path: Path
    batch: Batch
    source: ReplaySource | None = None  # where to replay: without it nothing can be proven
    engine: CandidateEngine | None = None
    repo: git.Repo | None = None
    shared: replaying.SharedReads | None = None  # what replays read, kept across this process's PRs
    tips: dict[str, str | None] = field(default_factory=dict)  # each branch's tip, read once
    diffs: dict[tuple[str, str], str] = field(default_factory=dict)  # PRs' diffs, by span
    reverts: dict[str, BranchReverts] = field(default_factory=dict)  # read before forking
    ahead: dict[tuple[str, str], str] = field(default_factory=dict)  # diffs read before forking
    placing: dict[int, _Placing] = field(default_factory=dict)  # PRs stored cut: `place` first

    def open(self) -> CandidateEngine:
        """This process's engine, on its own connection; it only reads (no `query_only`: the
        lookups keep the query's lines in a TEMP table)."""
        if self.engine is None:
            store = IndexStore(self.db_path, create=False)
            store.map_into_memory(MMAP_BYTES)
            self.engine = CandidateEngine(store, self.batch)
            if self.source is not None:
                self.repo = gitsource.open_repository(self.source.git_dir)
                memory = replay_memory.ReplayMemory(store)
                self.shared = replaying.SharedReads(self.repo, memory=memory)
                self.shared.reverts.update(self.reverts)
        return self.engine

    def replays_made(self) -> list[replay_memory.Row]:
        """The replays this process made since last asked, for the parent to keep."""
        memory = self.shared.memory if self.shared is not None else None
        return memory.take() if memory is not None else []

    def check_all(self, numbers: list[int]) -> list[tuple[int, list[SweptFinding], bool]]:
        """Each PR's findings, their diffs read first (`read_diffs`): placed among its cached
        ones where it is to be (`place`; True), else `check`'s (False)."""
        self.read_diffs(numbers)
        return [self.place_or_check(number) for number in numbers]

    def place_or_check(self, number: int) -> tuple[int, list[SweptFinding], bool]:
        placed = self.place(number)
        if placed is not None:
            return number, placed, True
        return number, self.check(number), False

    def place(self, number: int) -> list[SweptFinding] | None:
        """A PR stored cut (`_merged`) read whole and matched against the new changes it
        shares a rare line with, their findings placed among its cached ones (`placed_among`);
        None where they do not stand alone, or it is no such PR."""
        placing = self.placing.get(number)
        if placing is None:
            return None
        engine = self.open()
        row = engine.store.changes.row(number)
        if row is None:
            return None
        repo = self.repo
        settings = self.source.settings if self.source else Settings()
        memory = self.shared.memory if self.shared is not None else None
        found = match_alone(
            engine,
            repo,
            row,
            placing.shared,
            settings,
            placing.known_lines,
            diffs=self.diffs,
            memory=memory,
        )
        return placed_among(found, placing.cached, self.batch.keys, number, repo is not None)

    def read_diffs(self, numbers: list[int]) -> None:
        """The diffs of the PRs checked next, through one git process (those not read before
        forking): most PRs are replayed, and a replay needs the PR's diff."""
        engine = self.open()
        self.diffs = {}
        if self.repo is None:
            return
        spans = _spans(engine.store, [n for n in numbers if n not in self.placing])
        missing = [span for span in spans if span not in self.ahead]
        self.diffs = {span: self.ahead[span] for span in spans if span in self.ahead}
        if missing:
            self.diffs.update(gitsource.diffs_between(self.repo, missing))

    def findings(self, number: int) -> list[Finding]:
        """`check --pr N`'s findings without the target probe, every one, in its order."""
        engine = self.open()
        row = engine.store.changes.row(number)
        assert row is not None
        source = self.source
        info = pr_info(row, source.target if source else None)
        settings = source.settings if source else Settings()
        findings, _ = match_pr(
            engine,
            self.repo,
            row,
            info,
            settings,
            probe=False,
            deciding_only=True,
            shared=self.shared,
            tips=self.tips,
            diffs=self.diffs,
        )
        return findings

    def check(self, number: int) -> list[SweptFinding]:
        """`check --pr N`'s findings (no target probe), in its order: every deciding one, and
        the first few that make no claim and score at least `RELATED_FLOOR`."""
        keys = self.batch.keys
        kept: list[SweptFinding] = []
        unclaimed = 0
        for finding in self.findings(number):
            if finding.candidate.key not in keys:
                continue  # a landing only the target probe finds (the sweep does not probe)
            if not finding.decides:
                if finding.score < RELATED_FLOOR or unclaimed >= RELATED_KEPT:
                    continue
                unclaimed += 1
            kept.append(SweptFinding.from_finding(keys[finding.candidate.key], finding, number))
        return kept

    def close(self) -> None:
        """This process's connection and git readers (a forked worker's end with it)."""
        if self.engine is not None:
            self.engine.store.close()
            self.engine = None
        if self.shared is not None:
            self.shared.close()
            self.shared = None
        if self.repo is not None:
            self.repo.close()
            self.repo = None


_worker: _Matcher | None = None  # set before forking; each worker opens its own engine


@dataclass(frozen=True, slots=True)
class ReplaySource:
    """The repository the sweep replays PRs in, as `check` does, and the settings it reads
    diffs with."""

    git_dir: Path
    target: str | None
    settings: Settings


def _replay_source(
    repo: git.Repo | None, repo_path: str | Path | None, store: IndexStore, settings: Settings
) -> ReplaySource | None:
    if repo is None and repo_path is not None:
        try:
            repo = gitsource.open_repository(repo_path)
        except PrdupError:
            return None  # an index on its own: verdicts from the index's evidence alone
    if repo is None:
        return None
    identity.refuse_foreign(repo, store)  # replays in another repository would prove nothing
    target = (store.get_meta("targets") or "").split(",")[0] or None
    return ReplaySource(gitsource.git_dir(repo), target, settings)


def _check_in_worker(
    numbers: list[int],
) -> tuple[list[tuple[int, list[SweptFinding], bool]], list[replay_memory.Row]]:
    assert _worker is not None
    return _worker.check_all(numbers), _worker.replays_made()


@dataclass
class _TargetReverts:
    """The target's reverts: those the index kept for a tip (`replay_memory.kept_reverts`),
    and those this sweep read from git, to be kept."""

    kept: tuple[str, replay_memory.Reverts] | None = None
    read: tuple[str, replay_memory.Reverts] | None = None


def _run(
    db_path: Path,
    numbers: list[int],
    snapshot: dict[int, ChangeRow],
    jobs: int,
    progress: Progress | None,
    source: ReplaySource | None = None,
    replays: list[replay_memory.Row] | None = None,
    reverts: _TargetReverts | None = None,
    meanwhile: Callable[[], Sequence[int]] = tuple,
    placing: dict[int, _Placing] | None = None,
    placed: set[int] | None = None,
) -> dict[int, list[SweptFinding]]:
    """Each PR's findings; the replays the matching made are added to `replays`, the target's
    reverts read to `reverts`. `meanwhile` is called while other processes match (this one
    would only wait); the PRs it returns are matched too, after those given (they are not in
    the batch: each is read as `check` reads one PR). The PRs of `placing` whose new findings
    were placed among their cached ones (`_Matcher.place`) are added to `placed`."""
    placed = placed if placed is not None else set()
    replays = replays if replays is not None else []
    reverts = reverts if reverts is not None else _TargetReverts()
    if not numbers:
        numbers = list(meanwhile())
        meanwhile = tuple
        if not numbers:
            return {}
    global _worker
    matcher = _prepare(db_path, numbers, snapshot, source, reverts, placing or {})
    results: dict[int, list[SweptFinding]] = {}
    report = progress or (lambda done, total: None)
    can_fork = "fork" in multiprocessing.get_all_start_methods()
    least = MIN_PARALLEL if source is None else MIN_PARALLEL_REPLAYING
    parallel = jobs > 1 and len(numbers) >= least and can_fork
    # PRs go to a process a few at a time, their diffs read together (`check_all`).
    size = max(1, min(DIFFS_READ_TOGETHER, len(numbers) // (jobs * 4))) if parallel else 16
    parts = [numbers[start : start + size] for start in range(0, len(numbers), size)]
    if parallel:
        # The costliest first: a large PR handed out last would leave the other processes idle.
        cut = source.settings.max_unmerged_lines if source is not None else 0
        lines = _matching_cost(numbers, snapshot, cut)
        parts.sort(key=lambda part: -sum(lines.get(number, 0) for number in part))
    if not parallel:
        late = list(meanwhile())
        parts += [late[start : start + size] for start in range(0, len(late), size)]
        try:
            for part in parts:
                matcher.read_diffs(part)
                for number in part:
                    _, results[number], was_placed = matcher.place_or_check(number)
                    if was_placed:
                        placed.add(number)
                    report(len(results), len(numbers) + len(late))
            replays.extend(matcher.replays_made())
        finally:
            matcher.close()
        return results
    # Fork after reading the batch, so the workers share it instead of each reading it again;
    # every worker then opens its own connection (never share one across a fork).
    _worker = matcher
    try:
        with contextlib.ExitStack() as ending:
            with signals_held():  # a stop met while forking would print a traceback
                # The pool is ended however this block is left, a stop that arrives the
                # moment the signals are taken again included: a pool never ended keeps
                # replacing its workers, and the command's exit waits for them for ever.
                fork = multiprocessing.get_context("fork")
                pool = ending.enter_context(fork.Pool(jobs, die_with_parent))
            matched = pool.imap_unordered(_check_in_worker, parts)
            late = list(meanwhile())
            # Handed out behind the others, one at a time: they are few, and each may be large.
            after = pool.imap_unordered(_check_in_worker, [[number] for number in late])
            for found, made in itertools.chain(matched, after):
                for number, findings, was_placed in found:
                    results[number] = findings
                    if was_placed:
                        placed.add(number)
                replays.extend(made)
                report(len(results), len(numbers) + len(late))
    finally:
        _worker = None
    return results


def _target_reverts(source: ReplaySource, reverts: _TargetReverts) -> dict[str, BranchReverts]:
    """The reverts in the target's history, by its tip (a replay asks which landings were
    taken off the target again): those the index kept where the tip is the same, else read
    from git (and noted in `reverts.read`, to be kept)."""
    if source.target is None:
        return {}
    repo = gitsource.open_repository(source.git_dir)
    try:
        resolved = gitsource.target_branch(repo, source.target, required=False)
        if resolved is None:
            return {}
        if reverts.kept is not None and reverts.kept[0] == resolved.tip:
            return {resolved.tip: BranchReverts.of(reverts.kept[1])}
        found = gitsource.reverts_in(repo, resolved.tip)
        reverts.read = (resolved.tip, found)
        return {resolved.tip: BranchReverts.of(found)}
    finally:
        repo.close()


def _diffs_ahead(source: ReplaySource, spans: list[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """The diffs of a few PRs' spans, read while the batch is (`gitsource.diffs_between`)."""
    repo = gitsource.open_repository(source.git_dir)
    try:
        return gitsource.diffs_between(repo, spans)
    finally:
        repo.close()


def _changed_lines(numbers: list[int], snapshot: dict[int, ChangeRow]) -> dict[int, int]:
    """Each of these PRs' changed lines, by number."""
    wanted = set(numbers)
    return {r.number: r.added + r.removed for r in snapshot.values() if r.number in wanted}


def _matching_cost(numbers: list[int], snapshot: dict[int, ChangeRow], cut: int) -> dict[int, int]:
    """What matching each of these PRs costs, in changed lines: a PR stored cut is read whole
    (from git, or from the lines a sweep kept), so it has at least the `cut` lines it was cut
    at; its row counts only some of the lines before the cut, often none."""
    lines = _changed_lines(numbers, snapshot)
    for row in snapshot.values():
        if row.truncated and row.number in lines:
            lines[row.number] = max(lines[row.number], cut)
    return lines


def _largest_first(numbers: list[int], snapshot: dict[int, ChangeRow]) -> list[int]:
    lines = _changed_lines(numbers, snapshot)
    return sorted(numbers, key=lambda number: -lines.get(number, 0))


def _spans(store: IndexStore, numbers: Iterable[int]) -> list[tuple[str, str]]:
    """The (base, head) span of each PR that has both (`pr_span`)."""
    spans = []
    for number in numbers:
        row = store.changes.row(number)
        base, head = pr_span(row) if row is not None else (None, None)
        if base and head:
            spans.append((base, head))
    return spans


def _prepare(
    db_path: Path,
    numbers: list[int],
    snapshot: dict[int, ChangeRow],
    source: ReplaySource | None = None,
    reverts: _TargetReverts | None = None,
    placing: dict[int, _Placing] | None = None,
) -> _Matcher:
    """Read, once, the lines of every change that the given PRs share any line with; and,
    while that is read, the target's reverts (every process asks about them) and, for a few
    PRs, their diffs (a git process per worker and PR cost more than reading them). The PRs
    of `placing` (stored cut) are read whole, as a sweep kept them (`checking.whole_lines`),
    and matched against a few changes: neither their stored lines nor their diffs are read
    here."""
    placing = placing or {}
    wanted = set(numbers) - placing.keys()
    query_ids = [cid for cid, row in snapshot.items() if row.number in wanted]
    with ThreadPoolExecutor(3) as aside, IndexStore(db_path, create=False) as store:
        found_reverts = None
        found_diffs = []
        if source is not None:
            spans = (
                _spans(store, _largest_first([n for n in numbers if n in wanted], snapshot))
                if len(numbers) <= DIFFS_AHEAD
                else []
            )
            with signals_held():  # the threads it starts leave stop signals to this one
                found_reverts = aside.submit(
                    _target_reverts, source, reverts if reverts is not None else _TargetReverts()
                )
                # Two git processes, the PRs (largest first) dealt between them.
                found_diffs = [
                    aside.submit(_diffs_ahead, source, spans[i::2]) for i in (0, 1) if spans[i::2]
                ]
        batch = Batch.read(store, query_ids, snapshot)
        matcher = _Matcher(db_path=db_path, batch=batch, source=source, placing=placing)
        matcher.reverts = found_reverts.result() if found_reverts is not None else {}
        for diffs in found_diffs:
            matcher.ahead.update(diffs.result())
    return matcher
