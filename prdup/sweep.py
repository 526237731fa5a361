"""`sweep`: match every open PR against merged PRs and the other open PRs, then group them.

Each open PR goes through the same path as `prdup check --pr N` (`index.lookup` for candidates
and evidence, `detector.matcher.match` for verdicts), without the target probe, and keeps the
deciding findings. The candidates' evidence is read once for the whole sweep, and pairs that
share no code are not matched (no such pair can decide). Grouping is `detector.grouping`'s.

Results are cached in the index per PR (`sweep_results`), keyed by the PR's head, a fingerprint
of the matcher and its dismissals, and the state of every change that could alter them (head,
state, title, body length and author; see `_stale_numbers`), so a sweep after `prdup index` only
re-checks the PRs an update can affect.

`SweepResult.to_json()` is a stable surface (`schema_version` 1)::

    {"schema_version": 1,
     "min_score": 0.7,
     "stats": {"open_prs": N, "swept": N, "rechecked": N, "reused": N, "seconds": S, "jobs": N},
     "groups": [{"keep": N, "members": [{"pr": N, "state": "merged|open|closed", "title": "...",
                 "verdict": "keep|duplicate|covered|already-merged", "score": S | null}, ...]}],
     "already_done": [{"pr": N, "by": M | null, "commit": "sha" | null, "score": S}]}

Groups come largest first; in each, the kept PR is first (verdict "keep", score null) and every
other member carries the verdict and score of its evidence against the kept PR. Keys may be
added to objects in later versions; none is removed or changes meaning without a new
`schema_version`.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import sqlite3
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import git

from detector import decide
from detector.evidence import ChangeEvidence, Finding, LineWeights
from detector.grouping import (
    AlreadyDone,
    Group,
    Link,
    Pull,
    already_done,
    group_duplicates,
    shares_code,
)
from detector.matcher import Query, match, worth_replaying
from index import gitsource, lookup, replaying
from index.config import Settings
from index.errors import IndexLocked, PrdupError
from index.store import IndexStore
from prdup.checking import open_index, pr_change, pr_history, pr_line_tip, prove
from prdup.lifetime import die_with_parent

SCHEMA_VERSION = 1
CACHE_VERSION = "1"  # bump when what a cached row means changes
# Line rarity moves with the index's size: re-check cached PRs once it grew (or shrank) by this
# share, and by at least MIN_DRIFT changes (a small index is quick to sweep again anyway).
RARITY_DRIFT = 0.1
MIN_DRIFT = 25
FEW_HASHES = 20_000  # up to this many query lines, read their rows by index, not by a scan
MMAP_BYTES = 1 << 30
MIN_PARALLEL = 20  # fewer PRs than this are matched in this process: forking costs more
SHOWN_LINES = 12  # shared lines kept per finding for the report
CANDIDATE_STATES = ("merged", "open")

Progress = Callable[[int, int], None]


# --- what a sweep returns -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SweptFinding:
    """One deciding finding of an open PR, as the sweep caches and reports it."""

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

    @classmethod
    def from_finding(cls, change_id: int, finding: Finding) -> SweptFinding:
        candidate = finding.candidate
        return cls(
            change_id=change_id,
            pr=candidate.number,
            commit=candidate.commit,
            state=candidate.state,
            verdict=finding.verdict,
            score=round(finding.score, 4),
            reasons=finding.reasons,
            shared_removed=finding.shared_removed[:SHOWN_LINES],
            shared_added=finding.shared_added[:SHOWN_LINES],
            shared_files=finding.shared_files,
            shared_symbols=finding.shared_symbols,
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

    @property
    def changed_lines(self) -> int:
        return self.added + self.removed


@dataclass(frozen=True, slots=True)
class SweepStats:
    open_prs: int  # open PRs with a diff in the index
    swept: int  # of those, the ones this sweep covered (all, or the --limit newest)
    rechecked: int  # matched anew
    reused: int  # taken from the cache
    seconds: float
    jobs: int


@dataclass
class SweepResult:
    """Duplicate groups, closable PRs, and every swept PR's deciding findings."""

    groups: list[Group]
    already_done: list[AlreadyDone]
    pulls: dict[int, PullInfo]
    findings: dict[int, list[SweptFinding]]
    stats: SweepStats
    min_score: float
    rechecked: list[int] = field(default_factory=list)  # the PRs matched anew, newest first

    def evidence(self, one: int, other: int) -> SweptFinding | None:
        """The strongest deciding finding between two PRs, `one`'s own first."""
        found = [
            f for f in self.findings.get(one, []) if f.pr == other and f.score >= self.min_score
        ]
        if not found:
            found = [
                f for f in self.findings.get(other, []) if f.pr == one and f.score >= self.min_score
            ]
        return max(found, key=lambda f: f.score, default=None)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "min_score": self.min_score,
            "stats": asdict(self.stats),
            "groups": [self._group_json(group) for group in self.groups],
            "already_done": [asdict(done) for done in self.already_done],
        }

    def _group_json(self, group: Group) -> dict[str, Any]:
        members = []
        for number in group.members:
            pull = self.pulls.get(number)
            found = None if number == group.keep else self.evidence(number, group.keep)
            members.append(
                {
                    "pr": number,
                    "state": pull.state if pull else "unknown",
                    "title": pull.title if pull else "",
                    "verdict": "keep" if found is None else found.verdict,
                    "score": None if found is None else found.score,
                }
            )
        return {"keep": group.keep, "members": members}


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
) -> SweepResult:
    """Check every open PR (or the `limit` newest) and group the duplicates among them.

    `min_score` (default: the `min_score` setting's default) only filters what is grouped and
    listed; every deciding finding is cached, so another threshold needs no new matching.
    """
    started = time.monotonic()
    if min_score is None:
        min_score = Settings().min_score
    repo = gitsource.open_repository(repo_path or ".") if db_path is None else None
    store = open_index(repo, db_path)
    try:
        source = _replay_source(repo, repo_path, store, settings or Settings())
        snapshot = _snapshot(store)
        open_numbers = sorted(
            (row.number for row in snapshot.values() if row.number is not None and row.is_open_pr),
            reverse=True,
        )
        swept = open_numbers[:limit] if limit is not None else open_numbers
        findings, rechecked = _findings(store, snapshot, swept, jobs, full, progress, source)
    finally:
        store.close()
    stats = SweepStats(
        open_prs=len(open_numbers),
        swept=len(swept),
        rechecked=len(rechecked),
        reused=len(swept) - len(rechecked),
        seconds=round(time.monotonic() - started, 2),
        jobs=jobs,
    )
    pulls = _pulls(snapshot)
    ranks = {n: Pull(n, p.state, p.changed_lines) for n, p in pulls.items()}
    links = _links(findings)
    return SweepResult(
        groups=group_duplicates(ranks, links, min_score),
        already_done=already_done(links, ranks, min_score),
        pulls=pulls,
        findings=findings,
        stats=stats,
        min_score=min_score,
        rechecked=rechecked,
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
    stale = _stale_numbers(store, cache, snapshot)
    todo = [n for n in swept if full or n not in cache or n in stale]
    fresh = _run(store.path, todo, snapshot, jobs, progress, source)
    # Stale rows this sweep did not redo (outside --limit) go: a later sweep redoes them.
    if not store.read_only:  # a read-only index is swept all the same, and caches nothing
        _save_cache(store, fresh, stale - set(fresh), snapshot)
    reused = {n: _current(cache[n].findings, snapshot) for n in swept if n not in fresh}
    return {n: fresh[n] if n in fresh else reused[n] for n in swept}, todo


def _current(findings: list[SweptFinding], snapshot: dict[int, ChangeRow]) -> list[SweptFinding]:
    """Cached findings named as the index names their changes now (a commit relabelled as the
    PR that landed it keeps its id and lines, so the finding holds, under its new name)."""
    return [
        replace(f, pr=snapshot[f.change_id].number) if f.change_id in snapshot else f
        for f in findings
    ]


def _links(findings: dict[int, list[SweptFinding]]) -> list[Link]:
    return [
        Link(number, f.pr, f.verdict, f.score, f.state, f.commit)
        for number, found in findings.items()
        for f in found
    ]


# --- the index as the sweep reads it --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ChangeRow:
    """A `changes` row: what the sweep needs to pick queries and notice updates."""

    id: int
    kind: str
    number: int | None
    sha: str | None
    head_sha: str | None
    patch_id: str | None
    state: str
    status: str
    title: str
    author: str | None
    created_at: str | None
    added: int
    removed: int
    files: int
    removed_weight: float | None  # rarity weight of the whole side, precomputed by `index`
    added_weight: float | None
    details: str = ""  # digest of the title, body length and author (see `_details`)

    @property
    def is_open_pr(self) -> bool:
        return self.number is not None and self.state == "open" and self.status == "indexed"

    def scope(self) -> lookup.Scope:
        """The candidates `check --pr N` may name for this PR (`checking._check_pr`'s scope)."""
        return lookup.Scope(
            exclude_number=self.number, own_head=self.head_sha, own_patch=self.patch_id
        )

    def in_scope_of(self, query: ChangeRow) -> bool:
        """Whether `query.scope()` admits this change: `Scope.sql` in Python."""
        if self.status != "indexed" or (self.number is not None and self.number == query.number):
            return False
        own_landing = self.kind == "commit" and (
            self.head_sha == query.head_sha or self.patch_id == query.patch_id
        )
        return not own_landing

    @property
    def key(self) -> str:
        """`ChangeEvidence.key` as `lookup.load_evidence` writes it."""
        return f"#{self.number}" if self.number is not None else (self.sha or "")[:10]

    @property
    def seen(self) -> tuple[str | None, str, str, str]:
        return (self.sha, self.state, self.status, self.details)


def _details(*fields: object) -> str:
    """A short digest of what the text and same-author signals read from a change's row."""
    text = "\x1f".join("" if field is None else str(field) for field in fields)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


_SNAPSHOT_COLUMNS = (
    "id, kind, number, sha, head_sha, patch_id, state, status, title, author, created_at, added, "
    "removed, file_count, removed_weight, added_weight, author_email, length(body) AS body_length"
)


def _snapshot(store: IndexStore) -> dict[int, ChangeRow]:
    snapshot: dict[int, ChangeRow] = {}
    for row in store.query(f"SELECT {_SNAPSHOT_COLUMNS} FROM changes"):
        snapshot[row["id"]] = ChangeRow(
            id=row["id"],
            kind=row["kind"],
            number=row["number"],
            sha=row["sha"],
            head_sha=row["head_sha"],
            patch_id=row["patch_id"],
            state=row["state"],
            status=row["status"],
            title=row["title"] or "",
            author=row["author"],
            created_at=row["created_at"],
            added=row["added"] or 0,
            removed=row["removed"] or 0,
            files=row["file_count"] or 0,
            removed_weight=row["removed_weight"],
            added_weight=row["added_weight"],
            details=_details(row["title"], row["body_length"], row["author"], row["author_email"]),
        )
    return snapshot


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
        )
        for row in snapshot.values()
        if row.number is not None
    }


# --- the cache ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CachedSweep:
    number: int
    head_sha: str
    fingerprint: str
    change_count: int
    findings: list[SweptFinding] = field(default_factory=list)


def matcher_fingerprint() -> str:
    """Changes whenever the matcher could decide differently: its code, weights and lookups."""
    sources = [
        *sorted(Path(decide.__file__).parent.glob("*.py")),
        decide.WEIGHTS_FILE,
        Path(lookup.__file__),
        Path(replaying.__file__),  # the replay decides what `match` only proposes
        Path(__file__).with_name("checking.py"),
    ]
    digest = hashlib.sha1(CACHE_VERSION.encode())
    for source in sources:
        if source.name != "grouping.py":  # grouping reads cached findings; it makes none
            digest.update(source.read_bytes())
    return digest.hexdigest()[:16]


def _fingerprints(store: IndexStore, numbers: Iterable[int]) -> dict[int, str]:
    """The matcher's fingerprint plus the PR's dismissals (`check` never names those)."""
    base = matcher_fingerprint()
    dismissed: dict[int, list[int]] = {}
    for number, other in store.rows("SELECT DISTINCT number, other FROM dismissals ORDER BY other"):
        dismissed.setdefault(number, []).append(other)
    return {n: f"{base}:{','.join(map(str, dismissed.get(n, [])))}" for n in numbers}


def _load_cache(store: IndexStore) -> dict[int, CachedSweep]:
    return {
        number: CachedSweep(
            number,
            head,
            fingerprint,
            count,
            [SweptFinding.from_json(item) for item in json.loads(findings)],
        )
        for number, head, fingerprint, count, findings in store.rows(
            "SELECT number, head_sha, fingerprint, change_count, findings FROM sweep_results"
        )
    }


def _stale_numbers(
    store: IndexStore, cache: dict[int, CachedSweep], snapshot: dict[int, ChangeRow]
) -> set[int]:
    """Cached PRs whose findings may no longer hold.

    A row holds while its PR keeps its head and stays open, the matcher's fingerprint and the
    PR's dismissals are the same, the index has not grown by more than `RARITY_DRIFT` (line
    rarity moves with its size), no change it found was updated or removed, and no change that
    was added or updated since the last sweep shares a line with it that the candidate lookup
    uses (a deciding finding needs shared lines). Not followed: changes sharing only common
    lines with it, and the small drift of line and word weights as the index grows (up to
    `RARITY_DRIFT`); `--full` redoes everything.
    """
    if not cache:
        return set()
    by_number = {row.number: row for row in snapshot.values() if row.number is not None}
    count = int(store.get_meta("change_count") or 0)
    fingerprints = _fingerprints(store, cache)
    moved = _moved_changes(store, snapshot)
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
            or any(f.change_id in moved for f in cached.findings)
        ):
            stale.add(number)
    for change_id in _sharing_rare_lines(store, [cid for cid in moved if cid in snapshot]):
        sharing = snapshot[change_id].number if change_id in snapshot else None
        if sharing is not None and sharing in cache:
            stale.add(sharing)
    return stale


def _moved_changes(store: IndexStore, snapshot: dict[int, ChangeRow]) -> set[int]:
    """Change ids added, updated (new sha, state, status, title or author) or removed since the
    last sweep."""
    seen = {
        change_id: (sha, state, status, details or "")
        for change_id, sha, state, status, details in store.rows(
            "SELECT change_id, sha, state, status, details FROM sweep_seen"
        )
    }
    moved = {cid for cid, row in snapshot.items() if seen.get(cid) != row.seen}
    return moved | (set(seen) - set(snapshot))


def _sharing_rare_lines(store: IndexStore, change_ids: Sequence[int]) -> set[int]:
    """Changes that share a line with the given ones that `lookup.candidate_ids` would use."""
    if not change_ids:
        return set()
    total = int(store.get_meta("change_count") or 1)
    limit = max(50, total // 50)  # the rarity cut of lookup._by_lines
    hashes: set[int] = set()
    for chunk in _chunks(change_ids):
        marks = ",".join("?" * len(chunk))
        hashes.update(
            h
            for (h,) in store.rows(
                f"SELECT DISTINCT l.hash FROM lines l JOIN line_df d ON d.hash = l.hash "
                f"WHERE l.change_id IN ({marks}) AND d.df <= ?",
                [*chunk, limit],
            )
        )
    found: set[int] = set()
    for chunk in _chunks(sorted(hashes)):
        marks = ",".join("?" * len(chunk))
        found.update(
            cid
            for (cid,) in store.rows(
                f"SELECT DISTINCT change_id FROM lines WHERE hash IN ({marks})", chunk
            )
        )
    return found


@contextmanager
def _transaction(store: IndexStore) -> Iterator[sqlite3.Connection]:
    conn = store.conn
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as error:
        message = f"{store.path}: the index is locked ({error}); wait and run again"
        raise IndexLocked(message) from None
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _save_cache(
    store: IndexStore,
    fresh: dict[int, list[SweptFinding]],
    invalid: set[int],
    snapshot: dict[int, ChangeRow],
) -> None:
    """Write the new rows, drop the invalid ones, and remember every change as it is now."""
    count = int(store.get_meta("change_count") or 0)
    fingerprints = _fingerprints(store, fresh)
    heads = {row.number: row.head_sha for row in snapshot.values() if row.number is not None}
    with _transaction(store) as conn:
        conn.executemany(
            "DELETE FROM sweep_results WHERE number = ?", [(n,) for n in sorted(invalid)]
        )
        conn.executemany(
            "INSERT OR REPLACE INTO sweep_results(number, head_sha, fingerprint, change_count, "
            "findings) VALUES (?, ?, ?, ?, ?)",
            [
                (n, heads[n] or "", fingerprints[n], count, json.dumps([asdict(f) for f in found]))
                for n, found in fresh.items()
            ],
        )
        conn.execute("DELETE FROM sweep_seen")
        conn.executemany(
            "INSERT INTO sweep_seen(change_id, sha, state, status, details) VALUES (?, ?, ?, ?, ?)",
            [(cid, *row.seen) for cid, row in snapshot.items()],
        )


# --- matching, in one process or several ----------------------------------------------------


@dataclass
class _Matcher:
    """What every worker needs: the candidates' evidence, line rarity, and its own store."""

    db_path: Path
    ids: dict[int, int]  # open PR number -> change id
    rows: dict[int, ChangeRow]  # change id -> its row
    lines: dict[int, ChangeEvidence]  # indexed change id -> its lines some swept PR has
    rarity: LineWeights  # document frequency of every line of the swept PRs
    rare: dict[int, list[int]]  # swept PRs' rare line hash -> changes with it, one per row
    keys: dict[str, int]  # ChangeEvidence.key -> change id
    store: IndexStore | None = None
    source: ReplaySource | None = None  # where to replay: without it nothing can be proven
    repo: git.Repo | None = None  # this process's own (git's reader processes are not forked)
    # Candidates recur from PR to PR: each is read once (per process) and kept.
    evidence: dict[int, ChangeEvidence] = field(default_factory=dict)

    def open(self) -> IndexStore:
        """This process's own connection; it only reads (no `query_only`: the lookups keep
        the query's lines in a TEMP table)."""
        if self.store is None:
            self.store = IndexStore(self.db_path, create=False)
            # Thousands of lookups read the same pages: map the file rather than copy each
            # page in through a read() call (sqlite's page cache is 2 MB by default).
            self.store.conn.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
        return self.store

    def close(self) -> None:
        """This process's connection and git readers (a forked worker's end with it)."""
        if self.store is not None:
            self.store.close()
            self.store = None
        if self.repo is not None:
            self.repo.close()
            self.repo = None

    def check(self, number: int) -> list[SweptFinding]:
        """`check --pr N`'s deciding findings (no target probe) among merged and open changes.

        The steps of `checking._check_pr` and `_match_query`, with the candidates' evidence
        read once for all PRs instead of once per PR, and two shortcuts that change no
        finding: `_shortlist` answers the candidate lookup from memory when it provably can,
        and pairs that share no code (`shares_code`) are not matched: none can decide.
        """
        row = self.rows[self.ids[number]]
        store = self.open()
        query = lookup.query_from_index(store, number)
        assert query is not None
        query = replace(query, reference_number=number)
        found = self._shortlist(row, query.change)
        if found is None:
            found = lookup.candidate_ids(store, query.change, row.scope(), number)
        sharing = [
            cid
            for cid in found
            if self.rows[cid].state in CANDIDATE_STATES
            and shares_code(query.change, self.lines[cid])
        ]
        if not sharing:
            return []
        self._read(store, sharing)
        hashes = query.change.removed | query.change.added
        candidates = [self._shared_with(cid, hashes) for cid in sharing if cid in self.evidence]
        dismissed = lookup.dismissed_for(store, number)
        findings = match(query, candidates, self.rarity, dismissed)
        if self.source is not None and worth_replaying(findings):
            findings = self._proven(store, number, query, findings, dismissed)
        return [
            SweptFinding.from_finding(self.keys[f.candidate.key], f)
            for f in findings
            if f.decides and f.candidate.key in self.keys
        ]

    def _proven(
        self,
        store: IndexStore,
        number: int,
        query: Query,
        findings: list[Finding],
        dismissed: frozenset[int],
    ) -> list[Finding]:
        """`check --pr N`'s replay of the PR at the candidates that could decide."""
        assert self.source is not None
        if self.repo is None:
            self.repo = gitsource.open_repository(self.source.git_dir)
        row = store.change_row(number)
        assert row is not None
        change = pr_change(self.repo, row, self.source.settings)
        if change is None:
            return findings
        line_tip = pr_line_tip(self.repo, row, self.source.target)
        history = pr_history(row, line_tip, self.source.target)
        settings = self.source.settings
        return prove(self.repo, store, settings, query, change, history, findings, dismissed)

    def _read(self, store: IndexStore, ids: list[int]) -> None:
        """`lookup.load_evidence` for the candidates not read yet."""
        missing = [cid for cid in ids if cid not in self.evidence]
        for loaded in lookup.load_evidence(store, missing):
            self.evidence[self.keys[loaded.key]] = loaded

    def _shared_with(self, change_id: int, hashes: frozenset[int]) -> ChangeEvidence:
        """A candidate as `load_evidence(..., shared_with=query)` reads it: only the lines it
        shares with the query, and the precomputed weights of its whole sides."""
        row = self.rows[change_id]
        full = self.evidence[change_id]
        return replace(
            full,
            removed=full.removed & hashes,
            added=full.added & hashes,
            removed_total=row.removed_weight,
            added_total=row.added_weight,
        )

    def _shortlist(self, query_row: ChangeRow, query: ChangeEvidence) -> list[int] | None:
        """`lookup.candidate_ids`' answer, as far as code-sharing changes go, or None: ask it.

        The lookup keeps every change that shares a rare line with the query when there are at
        most `LINE_CANDIDATES` of them, then only adds changes found by symbol, issue, words or
        file. When every line of the query is rare, a change that shares code with it shares a
        rare line, so the additions bring none that matters: memory has the whole answer.
        """
        lines = query.removed | query.added
        if not lines or any(h not in self.rare for h in lines):
            return None
        found: set[int] = set()
        for line_hash in lines:
            found.update(self.rare[line_hash])
        found = {cid for cid in found if self.rows[cid].in_scope_of(query_row)}
        return sorted(found) if len(found) <= lookup.LINE_CANDIDATES else None


_worker: _Matcher | None = None  # set before forking; each worker opens its own store


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
    target = (store.get_meta("targets") or "").split(",")[0] or None
    return ReplaySource(gitsource.git_dir(repo), target, settings)


def _check_in_worker(number: int) -> tuple[int, list[SweptFinding]]:
    assert _worker is not None
    return number, _worker.check(number)


def _run(
    db_path: Path,
    numbers: list[int],
    snapshot: dict[int, ChangeRow],
    jobs: int,
    progress: Progress | None,
    source: ReplaySource | None = None,
) -> dict[int, list[SweptFinding]]:
    if not numbers:
        return {}
    global _worker
    matcher = _prepare(db_path, numbers, snapshot, source)
    results: dict[int, list[SweptFinding]] = {}
    report = progress or (lambda done, total: None)
    can_fork = "fork" in multiprocessing.get_all_start_methods()
    if jobs <= 1 or len(numbers) < MIN_PARALLEL or not can_fork:
        try:
            for done, number in enumerate(numbers, 1):
                results[number] = matcher.check(number)
                report(done, len(numbers))
        finally:
            matcher.close()
        return results
    # Fork after reading the lines, so the workers share them instead of each reading them
    # again; every worker then opens its own connection (never share one across a fork).
    _worker = matcher
    try:
        with multiprocessing.get_context("fork").Pool(jobs, die_with_parent) as pool:
            chunk = max(1, min(64, len(numbers) // (jobs * 8)))
            for done, (number, found) in enumerate(
                pool.imap_unordered(_check_in_worker, numbers, chunksize=chunk), 1
            ):
                results[number] = found
                report(done, len(numbers))
    finally:
        _worker = None
    return results


def _prepare(
    db_path: Path,
    numbers: list[int],
    snapshot: dict[int, ChangeRow],
    source: ReplaySource | None = None,
) -> _Matcher:
    """Read, once, the lines of every change that the given PRs share any line with."""
    wanted = set(numbers)
    ids = {row.number: cid for cid, row in snapshot.items() if row.number in wanted}
    indexed = {cid for cid, row in snapshot.items() if row.status == "indexed"}
    store = IndexStore(db_path, create=False)
    try:
        query_hashes = _line_hashes(store, list(ids.values()))
        rarity = lookup.line_weights(store, query_hashes)
        # The rarity cut of `lookup._by_lines`: lines in more than 2% of changes pick no one.
        limit = max(50, rarity.total // 50)
        rare: dict[int, list[int]] = {
            h: [] for h in query_hashes if rarity.document_frequency.get(h, 0) <= limit
        }
        removed: dict[int, set[int]] = {cid: set() for cid in indexed}
        added: dict[int, set[int]] = {cid: set() for cid in indexed}
        for change_id, side, line_hash in _lines_with(store, query_hashes):
            if change_id in removed:
                (removed if side == "-" else added)[change_id].add(line_hash)
                if line_hash in rare:
                    rare[line_hash].append(change_id)  # one per row, as the lookup counts
    finally:
        store.close()
    lines = {
        cid: ChangeEvidence(
            key=snapshot[cid].key,
            removed=frozenset(removed[cid]),
            added=frozenset(added[cid]),
            patch_id=snapshot[cid].patch_id,
        )
        for cid in indexed
    }
    return _Matcher(
        db_path=db_path,
        ids=ids,
        rows=snapshot,
        lines=lines,
        rarity=rarity,
        rare=rare,
        keys={row.key: cid for cid, row in snapshot.items()},
        source=source,
    )


def _lines_with(store: IndexStore, hashes: set[int]) -> Iterator[tuple[int, str, int]]:
    """Every line row (change id, side, hash) with one of `hashes`.

    A few queries' lines are found through the hash index; for many, one pass over the table
    is quicker than that many index probes.
    """
    if len(hashes) > FEW_HASHES:
        for row in store.rows("SELECT change_id, side, hash FROM lines"):
            if row[2] in hashes:
                yield row
        return
    store.conn.execute("CREATE TEMP TABLE IF NOT EXISTS sweep_hashes (hash INTEGER PRIMARY KEY)")
    store.conn.execute("DELETE FROM temp.sweep_hashes")
    store.conn.executemany("INSERT INTO temp.sweep_hashes(hash) VALUES (?)", [(h,) for h in hashes])
    yield from store.rows(
        "SELECT l.change_id, l.side, l.hash FROM temp.sweep_hashes q JOIN lines l "
        "ON l.hash = q.hash"
    )


def _line_hashes(store: IndexStore, change_ids: Sequence[int]) -> set[int]:
    hashes: set[int] = set()
    for chunk in _chunks(change_ids):
        marks = ",".join("?" * len(chunk))
        hashes.update(
            h for (h,) in store.rows(f"SELECT hash FROM lines WHERE change_id IN ({marks})", chunk)
        )
    return hashes


def _chunks(items: Sequence[int], size: int = 500) -> Iterator[Sequence[int]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def stderr_progress(done: int, total: int) -> None:
    """`swept 120/400 PRs` on one refreshed line, only when stderr is a terminal."""
    if sys.stderr.isatty():
        end = "\n" if done == total else ""
        print(f"\r\033[Kswept {done}/{total} PRs", end=end, file=sys.stderr, flush=True)
