"""Candidates for the matcher, for one query (`check`) or a batch of them (`sweep`).

One engine serves both, so a change to retrieval is made once and the sweep cannot drift from
`check`. For one query it asks the index: `lookup.candidate_ids`, then each candidate's
evidence as far as it is shared with the query, and the rarity of the query's lines. For a
batch it first reads, once, every line row that any query of the batch has (`Batch.read`), then
answers each query with the same candidates, evidence and weights, reading less:

- a candidate's evidence is read once per process and trimmed to what each query shares (in
  a batch of a few queries, each reads only what it shares, as `check` does: candidates
  seldom recur);
- with `deciding_only`, it keeps only the candidates whose finding could decide (`could_decide`)
  before reading their evidence; without a replay, and when every line of the query is rare,
  memory holds the lookup's whole answer for those (`_shortlist`).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from itertools import islice
from typing import Any, NamedTuple

from detector.evidence import OPEN_STATES, ChangeEvidence, LineWeights
from detector.grouping import shares_code
from detector.matcher import Query
from index.questions import lookup
from index.questions.lookup import Scope
from index.storage import line_postings
from index.storage.store import IndexStore

# At most this many queries, a batch reads each one's candidates' lines as far as it shares
# them (re-sweeps after a few new PRs); more, and every candidate's lines are read once.
FEW_QUERIES = 32


class ChangeRow(NamedTuple):
    """A `changes` row as a batch reads it: what picks queries, scopes them and names them (a
    named tuple: a sweep makes one for every change of the index before it can start)."""

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
    details: str = ""  # digest of the title, body length and author (see `details_digest`)
    title_from_commit: bool = False  # the title is the head commit's subject (no metadata)
    truncated: bool = False  # stored cut: its lines past the cut are not in the index

    @property
    def is_open_pr(self) -> bool:
        """An indexed PR that is open, or unmerged with its state unknown (`OPEN_STATES`)."""
        return self.number is not None and self.state in OPEN_STATES and self.status == "indexed"

    @property
    def key(self) -> str:
        """`ChangeEvidence.key` as `lookup.load_evidence` writes it."""
        return f"#{self.number}" if self.number is not None else (self.sha or "")[:10]

    @property
    def seen(self) -> tuple[str | None, str, str, str]:
        """What a later sweep compares to notice that this change was updated."""
        return (self.sha, self.state, self.status, self.details)


def details_digest(*fields: object) -> str:
    """A short digest of what the text and same-author signals read from a change's row."""
    text = "\x1f".join("" if value is None else str(value) for value in fields)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def read_change_rows(store: IndexStore) -> dict[int, ChangeRow]:
    """Every change of the index, by id (read as tuples: a busy index has tens of thousands)."""
    rows: dict[int, ChangeRow] = {}
    for (
        change_id,
        kind,
        number,
        sha,
        head_sha,
        patch_id,
        state,
        status,
        title,
        author,
        created_at,
        added,
        removed,
        file_count,
        removed_weight,
        added_weight,
        author_email,
        title_source,
        body_length,
        truncated,
    ) in store.rows(
        "SELECT id, kind, number, sha, head_sha, patch_id, state, status, title, author, "
        "created_at, added, removed, file_count, removed_weight, added_weight, author_email, "
        "title_source, length(body), truncated FROM changes"
    ):
        rows[change_id] = ChangeRow(
            id=change_id,
            kind=kind,
            number=number,
            sha=sha,
            head_sha=head_sha,
            patch_id=patch_id,
            state=state,
            status=status,
            title=title or "",
            author=author,
            created_at=created_at,
            added=added or 0,
            removed=removed or 0,
            files=file_count or 0,
            removed_weight=removed_weight,
            added_weight=added_weight,
            details=details_digest(title, body_length, author, author_email),
            title_from_commit=title_source == "commit",
            truncated=bool(truncated),
        )
    return rows


def admits(scope: Scope, row: ChangeRow) -> bool:
    """Whether `scope` lets `row` be named: `Scope.sql`, in Python."""
    if row.status != "indexed":
        return False
    if row.kind == "commit" and (
        (scope.own_head is not None and row.head_sha == scope.own_head)
        or (scope.own_patch is not None and row.patch_id == scope.own_patch)
    ):
        return False
    if row.number is None:
        return True
    if scope.exclude_number is not None and row.number == scope.exclude_number:
        return False
    return scope.before_number is None or row.number < scope.before_number


def could_decide(query: ChangeEvidence, candidate: ChangeEvidence, replaying: bool) -> bool:
    """Whether the candidate's finding could decide, or be replayed, for this query.

    The index's evidence decides only for pairs that share code (`shares_code`). A replay can
    also prove a fix written differently (`return None` replaced with other code using the same
    names shares no line), but the matcher replays only candidates that share code, or a file
    and the identifiers (`matcher.worth_replaying`). Any other candidate changes no deciding
    finding: findings are measured pair by pair, and it takes no place among those replayed.
    """
    return shares_code(query, candidate) or (replaying and bool(query.files & candidate.files))


@dataclass(frozen=True, slots=True)
class Retrieved:
    """A query's candidates (evidence as far as shared with it) and its lines' rarity."""

    candidates: list[ChangeEvidence]
    weights: LineWeights


class BatchLines(Mapping[int, ChangeEvidence]):
    """Every indexed change's lines that some query of a batch has, as evidence (its key, those
    lines and its patch identity), made when first asked for: most changes share no line with
    a re-sweep's dozen queries, and making evidence for tens of thousands cost more than the
    rest of reading the batch."""

    def __init__(
        self,
        rows: dict[int, ChangeRow],
        indexed: frozenset[int],
        removed: dict[int, set[int]],
        added: dict[int, set[int]],
    ) -> None:
        self._rows = rows
        self._indexed = indexed
        self._removed = removed
        self._added = added
        self._made: dict[int, ChangeEvidence] = {}

    def __getitem__(self, change_id: int) -> ChangeEvidence:
        made = self._made.get(change_id)
        if made is None:
            if change_id not in self._indexed:
                raise KeyError(change_id)
            row = self._rows[change_id]
            made = ChangeEvidence(
                key=row.key,
                removed=frozenset(self._removed.get(change_id, ())),
                added=frozenset(self._added.get(change_id, ())),
                patch_id=row.patch_id,
            )
            self._made[change_id] = made
        return made

    def __contains__(self, change_id: object) -> bool:
        return change_id in self._indexed

    def __iter__(self) -> Iterator[int]:
        return iter(self._indexed)

    def __len__(self) -> int:
        return len(self._indexed)


@dataclass
class Batch:
    """What a sweep reads once for all its queries; forked workers share it."""

    rows: dict[int, ChangeRow]  # change id -> its row
    lines: BatchLines  # indexed change id -> its lines that some query has
    rarity: LineWeights  # document frequency of every line of the batch's queries
    rare: dict[int, list[int]]  # the queries' rare line hash -> changes with it, one per row
    keys: dict[str, int] = field(default_factory=dict)  # ChangeEvidence.key -> change id
    hashes: frozenset[int] = frozenset()  # every line hash of the batch's queries
    lookup_built: bool = False  # the line rows by hash are in `lookup_order` (`rare` too)
    queries: int = 0  # how many changes the batch was read for
    # The rows a scope may refuse beyond their status (`admits`): commits by head and by
    # patch, changes by number. Built on first use.
    _refusable: tuple[dict, dict, dict] | None = field(default=None, repr=False)

    @property
    def indexed(self) -> frozenset[int]:
        """The changes some scope may name: those indexed (`admits`' first rule)."""
        return frozenset(cid for cid, row in self.rows.items() if row.status == "indexed")

    def refused(self, scope: Scope) -> frozenset[int] | None:
        """The indexed changes `scope` refuses, as `admits` would, or None where a set of a
        few does not say it (a scope that names only older PRs refuses most of them)."""
        if scope.before_number is not None or scope.only_ids is not None:
            return None
        if self._refusable is None:
            heads: dict[str | None, list[int]] = {}
            patches: dict[str | None, list[int]] = {}
            numbers: dict[int, list[int]] = {}
            for cid, row in self.rows.items():
                if row.kind == "commit":
                    heads.setdefault(row.head_sha, []).append(cid)
                    patches.setdefault(row.patch_id, []).append(cid)
                if row.number is not None:
                    numbers.setdefault(row.number, []).append(cid)
            self._refusable = (heads, patches, numbers)
        heads, patches, numbers = self._refusable
        refused: set[int] = set()
        if scope.own_head is not None:
            refused.update(heads.get(scope.own_head, ()))
        if scope.own_patch is not None:
            refused.update(patches.get(scope.own_patch, ()))
        if scope.exclude_number is not None:
            refused.update(numbers.get(scope.exclude_number, ()))
        return frozenset(refused)

    @classmethod
    def read(cls, store: IndexStore, query_ids: Sequence[int], rows: dict[int, ChangeRow]) -> Batch:
        """Read, once, the lines of every change that the given changes share any line with."""
        indexed = {cid for cid, row in rows.items() if row.status == "indexed"}
        query_hashes = _line_hashes(store, query_ids)
        rarity = lookup.line_weights(store, query_hashes)
        limit = lookup.rare_line_limit(rarity.total)
        rare: dict[int, list[int]] = {
            h: [] for h in query_hashes if rarity.document_frequency.get(h, 0) <= limit
        }
        removed: defaultdict[int, set[int]] = defaultdict(set)
        added: defaultdict[int, set[int]] = defaultdict(set)
        for change_id, side, line_hash in store.lines.changes_with(query_hashes):
            if change_id in indexed:
                (removed if side == "-" else added)[change_id].add(line_hash)
                if line_hash in rare:
                    rare[line_hash].append(change_id)  # one per row, as the lookup counts
        keys = {row.key: cid for cid, row in rows.items()}
        return cls(
            rows=rows,
            lines=BatchLines(rows, frozenset(indexed), removed, added),
            rarity=rarity,
            rare=rare,
            keys=keys,
            hashes=frozenset(query_hashes),
            lookup_built=store.lines.lookup_is_built(),
            queries=len(query_ids),
        )

    @property
    def few(self) -> bool:
        """Too few queries for a candidate to recur much: each reads what it shares instead
        of every candidate's every line once (a re-sweep after a new PR checks a dozen)."""
        return self.queries <= FEW_QUERIES

    def by_lines(self, query: ChangeEvidence, scope: Scope) -> list[int] | None:
        """`lookup._by_lines`' answer from memory, or None where memory lacks it (a line not
        of the batch's queries: a PR stored cut, read whole from git).

        The lookup adds each rare line's weight to every row holding it, hash by hash in
        `line_postings.lookup_order` and each hash's rows in change order (as `rare` holds
        them), ranks by score (ties: the first change scored first), and keeps the first
        `LINE_CANDIDATES` the scope admits. Rows of changes not indexed, which `rare` leaves
        out, are never admitted and take no other change's place."""
        lines = query.removed | query.added
        if not self.lookup_built or not lines <= self.hashes:
            return None
        weights = self.rarity
        limit = lookup.rare_line_limit(weights.total)
        rare = [h for h in lines if weights.document_frequency.get(h, 0) <= limit]
        scores: dict[int, float] = defaultdict(float)
        for line_hash in line_postings.lookup_order(rare):
            weight = weights(line_hash)
            for change_id in self.rare[line_hash]:
                scores[change_id] += weight
        ranked = sorted(scores, key=lambda cid: -scores[cid])
        admitted = (cid for cid in ranked if admits(scope, self.rows[cid]))
        return list(islice(admitted, lookup.LINE_CANDIDATES))


class CandidateEngine:
    """Retrieval for `check` (one query) and `sweep` (a `Batch` of them), on one store."""

    def __init__(self, store: IndexStore, batch: Batch | None = None) -> None:
        self.store = store
        self.batch = batch
        # In a batch, candidates recur from query to query: each is read once and kept.
        self._evidence: dict[int, ChangeEvidence] = {}
        self._unshared: dict[int, dict[str, Any]] = {}  # its fields `_shared` keeps whole
        # Patch identities read from git for candidates the index read only in part, by
        # (fork point, head): a sweep meets the same candidates query after query.
        self.whole_patch_ids: dict[tuple[str, str], str | None] = {}
        self._postings = lookup.TermPostings(store, batch.indexed) if batch is not None else None

    def query_of(self, number: int) -> Query | None:
        """An indexed PR as a query."""
        return lookup.query_from_index(self.store, number)

    def dismissed(self, number: int | None) -> frozenset[int]:
        """The PRs a maintainer said `number` is no duplicate of."""
        return lookup.dismissed_for(self.store, number)

    def retrieve(
        self,
        query: ChangeEvidence,
        scope: Scope,
        reference: int | None,
        *,
        deciding_only: bool = False,
        replaying: bool = False,
    ) -> Retrieved:
        """The candidates `lookup.candidate_ids` names for the query, with their evidence.

        `reference` is "now" in PR numbers; `deciding_only` keeps the candidates that could
        decide when `replaying` (or not) follows the match: it drops no deciding finding.
        """
        batch = self.batch
        if batch is not None and (query.removed | query.added) <= batch.hashes:
            return self._in_batch(batch, query, scope, reference, deciding_only, replaying)
        # One query, or one whose lines the batch has not all read (a PR stored cut, matched
        # by its whole diff): asked of the index as `check` asks, weighed by its own lines.
        ids = lookup.candidate_ids(self.store, query, scope, reference)
        return self._read_these(query, ids, deciding_only, replaying)

    def retrieve_these(
        self,
        query: ChangeEvidence,
        ids: Sequence[int],
        scope: Scope,
        *,
        deciding_only: bool = False,
        replaying: bool = False,
        known_lines: Mapping[int, ChangeEvidence] | None = None,
    ) -> Retrieved:
        """`retrieve` as if the lookup had named only these changes: those of them in scope,
        with their evidence as far as shared with the query, and its lines' rarity (the sweep
        matches cached PRs against the changes new since alone: `known_lines` holds those
        changes' lines, read once for them all)."""
        where, params = scope.sql()
        admitted = self.store.changes.ids_where(ids, where, params)
        found = [cid for cid in ids if cid in admitted]
        return self._read_these(query, found, deciding_only, replaying, known_lines)

    def _read_these(
        self,
        query: ChangeEvidence,
        ids: Sequence[int],
        deciding_only: bool,
        replaying: bool,
        known_lines: Mapping[int, ChangeEvidence] | None = None,
    ) -> Retrieved:
        """These candidates' evidence as far as shared with the query (those that could
        decide, with `deciding_only`), weighed by the query's own lines' rarity."""
        rarity: dict[int, int] = {}
        candidates = lookup.load_evidence(
            self.store, ids, rarity, shared_with=query, known_lines=known_lines
        )
        if deciding_only:
            candidates = [c for c in candidates if could_decide(query, c, replaying)]
        return Retrieved(candidates, lookup.weights_with(self.store, query, rarity))

    def _in_batch(
        self,
        batch: Batch,
        query: ChangeEvidence,
        scope: Scope,
        reference: int | None,
        deciding_only: bool,
        replaying: bool,
    ) -> Retrieved:
        found = None
        if deciding_only and not replaying:
            found = _shortlist(batch, query, scope)
        if found is None:
            rows = batch.rows
            assert self._postings is not None
            kept = lookup.KeptPostings(
                self._postings,
                lambda cid: cid in rows and admits(scope, rows[cid]),
                batch.refused(scope),
            )
            found = lookup.candidate_ids(
                self.store, query, scope, reference, kept, lambda: batch.by_lines(query, scope)
            )
        if deciding_only:
            touching = (
                lookup.changes_touching(self.store, found, query.files) if replaying else set()
            )
            found = [
                cid
                for cid in found
                if cid in touching or (cid in batch.lines and shares_code(query, batch.lines[cid]))
            ]
        hashes = query.removed | query.added
        if batch.few:
            candidates = lookup.load_evidence(
                self.store, found, shared_with=query, known_lines=batch.lines
            )
            return Retrieved(candidates, batch.rarity)
        self._read(batch, found)
        candidates = [self._shared(batch, cid, hashes) for cid in found if cid in self._evidence]
        return Retrieved(candidates, batch.rarity)

    def _read(self, batch: Batch, ids: list[int]) -> None:
        """`lookup.load_evidence` for the candidates not read yet."""
        missing = [cid for cid in ids if cid not in self._evidence]
        for loaded in lookup.load_evidence(self.store, missing):
            change_id = batch.keys[loaded.key]
            self._evidence[change_id] = loaded
            self._unshared[change_id] = {name: getattr(loaded, name) for name in _WHOLE_FIELDS}

    def _shared(self, batch: Batch, change_id: int, hashes: frozenset[int]) -> ChangeEvidence:
        """A candidate as `load_evidence(..., shared_with=query)` reads it: only the lines it
        shares with the query, and the precomputed weights of its whole sides (its other
        fields are compared by overlap, so reading them whole changes no signal)."""
        row = batch.rows[change_id]
        full = self._evidence[change_id]
        # `dataclasses.replace`, with the fields kept whole listed once per candidate.
        return ChangeEvidence(
            **self._unshared[change_id],
            removed=_in_lookup_order(full.removed & hashes),
            added=_in_lookup_order(full.added & hashes),
            kept=_in_lookup_order(full.kept & hashes),
            removed_total=row.removed_weight,
            added_total=row.added_weight,
        )


def _in_lookup_order(lines: frozenset[int]) -> frozenset[int]:
    """The same lines, made one by one in the lookup's order (by hash), as `check` reads them:
    a set's order follows how it was made, and a reason quotes the first of lines alike."""
    return frozenset(set(sorted(lines)))


# The fields of a candidate's evidence that `_shared` keeps as they were read.
_SHARED_FIELDS = frozenset({"removed", "added", "kept", "removed_total", "added_total"})
_WHOLE_FIELDS = tuple(f.name for f in fields(ChangeEvidence) if f.name not in _SHARED_FIELDS)


def _shortlist(batch: Batch, query: ChangeEvidence, scope: Scope) -> list[int] | None:
    """`lookup.candidate_ids`' answer, as far as code-sharing changes go, or None: ask it.

    The lookup keeps every change that shares a rare line with the query when there are at
    most `LINE_CANDIDATES` of them, then only adds changes found by symbol, issue, words or
    file. When every line of the query is rare, a change that shares code with it shares a
    rare line, so the additions bring none that shares code: memory has the whole answer.
    """
    lines = query.removed | query.added
    if not lines or any(h not in batch.rare for h in lines):
        return None
    found: set[int] = set()
    for line_hash in lines:
        found.update(batch.rare[line_hash])
    found = {cid for cid in found if admits(scope, batch.rows[cid])}
    return sorted(found) if len(found) <= lookup.LINE_CANDIDATES else None


def _line_hashes(store: IndexStore, change_ids: Sequence[int]) -> set[int]:
    return {line_hash for *_, line_hash in store.lines.rows_of(change_ids)}
