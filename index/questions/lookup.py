"""Read the index for the matcher: candidates by lookup (never a scan), and their evidence.

Only stdlib `sqlite3` runs here: this is on `check`'s path, which a person waits for.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from detector.code_words import code_vector, count_words, inverse_frequencies
from detector.decide import THRESHOLDS
from detector.evidence import ChangeEvidence, LineWeights, PartLanded, PrCommit
from detector.matcher import Query
from detector.model import Change, FileChange
from detector.text import rare_subject_words, subject_words, weigh
from index.git.doc_sections import DocumentHunk, is_document
from index.git.hunk_symbols import DEFINITION, is_code
from index.metadata import taken_over
from index.storage.change_rows import HEADER_SYMBOL, SymbolRow
from index.storage.store import IndexStore

_COMMIT_ID = re.compile(r"^[0-9a-f]{7,40}$")

MAX_CANDIDATES = 200
LINE_CANDIDATES = 120
SYMBOL_CANDIDATES = 40
FILE_CANDIDATES = 30
TEXT_CANDIDATES = 40
CODE_WORD_CANDIDATES = 20
COMMON_CODE_WORD = 0.05  # a word in more than this share of changes retrieves nothing
_CHUNK = 500
# A change's text vector is stored as term frequencies (`index.storage.text_model`): its weight
# under the current idf, the value `detector.text.weigh` gives for its text.
TERM_WEIGHT = "t.tf * i.idf / n.norm"
TERM_WEIGHT_JOINS = (
    "JOIN term_idf i ON i.term = t.term JOIN text_norms n ON n.change_id = t.change_id"
)


@dataclass(frozen=True, slots=True)
class Scope:
    """Which indexed changes may be named: never the query itself, optionally only older ones."""

    exclude_number: int | None = None
    before_number: int | None = None  # only PRs numbered below (created before) this one
    only_ids: frozenset[int] | None = None
    # The query PR's own landing, when git did not name it: a merge of its head, or a commit
    # with its very patch. "Already done by itself" is no finding.
    own_head: str | None = None
    own_patch: str | None = None

    def sql(self, column: str = "c") -> tuple[str, list]:
        clauses = [f"{column}.status = 'indexed'"]
        params: list = []
        if self.own_head is not None:
            clauses.append(f"NOT ({column}.kind = 'commit' AND {column}.head_sha IS ?)")
            params.append(self.own_head)
        if self.own_patch is not None:
            clauses.append(f"NOT ({column}.kind = 'commit' AND {column}.patch_id IS ?)")
            params.append(self.own_patch)
        if self.exclude_number is not None:
            clauses.append(f"({column}.number IS NULL OR {column}.number != ?)")
            params.append(self.exclude_number)
        if self.before_number is not None:
            clauses.append(f"({column}.number IS NULL OR {column}.number < ?)")
            params.append(self.before_number)
        return " AND ".join(clauses), params


def chunks(items: Sequence, size: int = _CHUNK) -> Iterable[Sequence]:
    """`items` in slices small enough for one `IN (...)` list."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _values_for(store: IndexStore, table: str, key: str, value: str, keys: Iterable) -> dict:
    """`{key: value}` for the given keys of a two-column lookup table, in chunked IN queries."""
    found: dict = {}
    for chunk in chunks(list(set(keys))):
        marks = ",".join("?" * len(chunk))
        sql = f"SELECT {key}, {value} FROM {table} WHERE {key} IN ({marks})"
        found.update(store.rows(sql, chunk))
    return found


def line_weights(store: IndexStore, hashes: Iterable[int]) -> LineWeights:
    df = _values_for(store, "line_df", "hash", "df", hashes)
    return LineWeights(df, int(store.get_meta("change_count") or 1))


def idf_table(store: IndexStore, terms: Iterable[str]) -> dict[str, float]:
    return _values_for(store, "term_idf", "term", "idf", terms)


def rare_title_words(store: IndexStore, title: str, named: Iterable[str]) -> frozenset[str]:
    """The words of a title's subject that few indexed PR texts use and that the change's
    paths or lines (`named`) hold (`detector.text.rare_subject_words`)."""
    frequency = _values_for(store, "term_idf", "term", "df", subject_words(title))
    documents = int(store.get_meta("text_model") or 0)
    share = THRESHOLDS.rare_line_share
    return rare_subject_words(title, frequency, documents, share, named)


def code_vector_of(store: IndexStore, counts: Mapping[str, int]) -> dict[str, float]:
    """A change's identifier vector, weighed as the index weighs its changes' vectors."""
    documents = int(store.get_meta("code_word_changes") or 0)
    if not counts or documents <= 0:
        return {}
    df = _values_for(store, "code_word_df", "word", "df", counts)
    return code_vector(counts, inverse_frequencies(counts, df, documents))


@dataclass(frozen=True, slots=True)
class ChangeLines:
    """What a parsed change's lines are, as the matcher compares them: no index weights, so a
    PR stored cut can be read whole without weighing words its query keeps from the index."""

    removed: frozenset[int]
    added: frozenset[int]
    kept: frozenset[int]
    hunks: frozenset[int]
    line_text: dict[int, str]
    line_place: dict[int, tuple[str, str | None]]
    files: frozenset[str]
    symbols: frozenset[tuple[str, str]]
    definitions: frozenset[tuple[str, str]]
    patch_id: str | None


def change_lines(
    change: Change,
    symbols: Iterable[SymbolRow],
    hunk_symbols: Mapping[tuple[int, int], str],
) -> ChangeLines:
    """The hashed lines a change removes, adds and keeps, each line's text and place (its file
    and, where known, the symbol its hunk is in), its hunks, files, symbols and patch id."""
    removed: set[int] = set()
    added: set[int] = set()
    line_text: dict[int, str] = {}
    line_place: dict[int, tuple[str, str | None]] = {}
    hunks: set[int] = set()
    kept: set[int] = set()
    for file_index, file in enumerate(change.files):
        kept |= _kept_in(file)
        for hunk_index, hunk in enumerate(file.hunks):
            hunks.add(hunk.content_hash)
            symbol = hunk_symbols.get((file_index, hunk_index))
            for line in hunk.lines:
                if line.trivial:
                    continue
                (removed if line.side == "-" else added).add(line.hash)
                line_text.setdefault(line.hash, line.normalised)
                line_place.setdefault(line.hash, (file.path, symbol))
    symbols = list(symbols)
    return ChangeLines(
        removed=frozenset(removed),
        added=frozenset(added),
        kept=frozenset(kept),
        hunks=frozenset(hunks),
        line_text=line_text,
        line_place=line_place,
        files=frozenset(f.path for f in change.files),
        symbols=frozenset((s.path, s.qualified) for s in symbols),
        definitions=frozenset((s.path, s.qualified) for s in symbols if s.kind == DEFINITION),
        patch_id=None if change.is_empty else change.patch_id,
    )


def query_from_change(
    store: IndexStore,
    change: Change,
    symbols: Iterable[SymbolRow],
    hunk_symbols: dict[tuple[int, int], str],
    title: str = "",
    body: str = "",
    issues: Iterable[str] = (),
    author: str | None = None,
    author_email: str | None = None,
    branch: str | None = None,
    sections: Mapping[tuple[str, str], str] | None = None,
) -> Query:
    """Evidence for a change that is not (necessarily) in the index: a branch or a patch;
    `sections` titles its document hunks (`index.questions.changes.document_sections`)."""
    from detector.text import tokenize

    lines = change_lines(change, symbols, hunk_symbols)
    text = f"{title}\n{body}"
    evidence = ChangeEvidence(
        key="this change",
        state="proposed",
        title=title,
        author=author,
        author_email=author_email,
        branch=branch_name(branch),
        removed=lines.removed,
        added=lines.added,
        kept=lines.kept,
        files=lines.files,
        old_paths=frozenset(f.old_path for f in change.files if f.old_path != f.path),
        added_files=frozenset(f.path for f in change.files if f.status == "added"),
        symbols=lines.symbols,
        hunks=lines.hunks,
        issues=frozenset(issues),
        takes_over=frozenset(taken_over(text)),
        patch_id=lines.patch_id,
        lines_changed=sum(1 for f in change.files for _ in f.changed_lines),
        terms=weigh(text, idf_table(store, tokenize(text))),
        code_terms=code_vector_of(store, count_words(lines.line_text.values())),
        rare_title_words=rare_title_words(store, title, [*lines.files, *lines.line_text.values()]),
    )
    return Query(
        change=evidence,
        line_text=lines.line_text,
        line_place=lines.line_place,
        definitions=lines.definitions,
        sections=sections or {},
    )


def _kept_in(file: FileChange) -> set[int]:
    """Lines the file's diff both removes and adds: moved or re-indented, kept."""
    sides: dict[str, set[int]] = {"-": set(), "+": set()}
    for line in file.changed_lines:
        if not line.trivial:
            sides[line.side].add(line.hash)
    return sides["-"] & sides["+"]


def query_from_index(store: IndexStore, number: int) -> Query | None:
    """Evidence for an indexed PR, with its line texts and places for the reasons."""
    row = store.changes.row(number)
    if row is None:
        return None
    evidence = load_evidence(store, [row["id"]])[0]
    lines = store.lines.rows_of([row["id"]])
    texts = store.lines.texts(line_hash for *_, line_hash in lines)
    line_text = {h: texts[h] for *_, h in lines if h in texts}  # in the order of the rows
    paths = dict(store.rows("SELECT id, path FROM files WHERE change_id = ?", (row["id"],)))
    named = [*paths.values(), *line_text.values()]
    evidence = replace(evidence, rare_title_words=rare_title_words(store, evidence.title, named))
    line_place: dict[int, tuple[str, str | None]] = {}
    for _, file_id, _, line_hash in lines:
        if line_hash in line_text and file_id in paths:
            line_place.setdefault(line_hash, (paths[file_id], None))
    return Query(
        change=evidence,
        line_text=line_text,
        line_place=line_place,
        landed_in_part=part_landed(store, row["id"]),
        definitions=definitions_of(store, row["id"]),
    )


def definitions_of(store: IndexStore, change_id: int) -> frozenset[tuple[str, str]]:
    """A change's (path, symbol) pairs whose hunk header defines the name. Rows written before
    kinds were told apart count for the source files a language names, as they did then."""
    return frozenset(
        (path, name)
        for path, name, kind in store.rows(
            "SELECT path, qualified, kind FROM symbols WHERE change_id = ?", (change_id,)
        )
        if kind == DEFINITION or (kind == HEADER_SYMBOL and is_code(path))
    )


def document_hunks(
    store: IndexStore, change_id: int, head: str, shared: frozenset[tuple[str, str]]
) -> list[DocumentHunk]:
    """The hunks of an indexed change in documents whose header is among `shared` (path,
    symbol), each to be read at `head` (the change's own commit) on its new side."""
    found: list[DocumentHunk] = []
    for path, symbol, new_start in store.rows(
        "SELECT f.path, h.symbol, h.new_start FROM hunks h JOIN files f ON f.id = h.file_id "
        "WHERE h.change_id = ? AND h.symbol IS NOT NULL ORDER BY h.id",
        (change_id,),
    ):
        if (path, symbol) in shared and is_document(path):
            found.append(DocumentHunk(path, symbol, f"{head}:{path}", max(new_start, 1)))
    return found


def part_landed(store: IndexStore, change_id: int) -> PartLanded | None:
    """A PR's landing in part as the index recorded it (`index.git.rebase_landings`), if any."""
    rows = store.landings.in_part(change_id)
    if not rows:
        return None
    return PartLanded(
        target=rows[0].target,
        commits=tuple(PrCommit(r.sha, r.subject, r.files, r.copy) for r in rows),
    )


class TermPostings:
    """Each term's changes with their text weight, read once and kept: a batch of queries
    asks about the same terms query after query. The changes are every change with the
    term that some scope may name (`admissible`: no scope names another), in the order the
    lookup by term gives them; each query's scope is applied after."""

    def __init__(self, store: IndexStore, admissible: Container[int] | None = None) -> None:
        self._store = store
        self._admissible = admissible
        self._by_term: dict[str, list[tuple[int, float]]] = {}

    def of(self, term: str) -> list[tuple[int, float]]:
        if term not in self._by_term:
            found = self._store.rows(
                f"SELECT t.change_id, {TERM_WEIGHT} FROM term_tf t {TERM_WEIGHT_JOINS} "
                "WHERE t.term = ?",
                [term],
            )
            admissible = self._admissible
            self._by_term[term] = (
                list(found) if admissible is None else [p for p in found if p[0] in admissible]
            )
        return self._by_term[term]


@dataclass(frozen=True, slots=True)
class KeptPostings:
    """A batch's `TermPostings` and the query's scope, in Python (`candidates.admits`).

    Where `excluded` is given, it is every change of the postings that `admits` refuses
    (a scope refuses a few: the query itself, its own landing), and is asked instead: a set
    lookup per posting rather than a call.
    """

    postings: TermPostings
    admits: Callable[[int], bool]
    excluded: frozenset[int] | None = None


def candidate_ids(
    store: IndexStore,
    query: ChangeEvidence,
    scope: Scope,
    reference_number: int | None = None,
    kept: KeptPostings | None = None,
    by_lines: Callable[[], list[int] | None] | None = None,
) -> list[int]:
    """Changes that share rare lines, symbols, files, issues or words with the query.

    `reference_number` is "now" in PR numbers (as for the proximity signal): of the many
    changes that touch a busy file or symbol, the PRs nearest to it are kept. With `kept`
    (a batch's), the words are looked up in what earlier queries read; `by_lines` (a
    batch's) gives the lookup by lines from memory, or None where it cannot.
    """
    where, params = scope.sql()
    nearest = _nearest_first(reference_number)
    total = int(store.get_meta("change_count") or 1)
    by_line = by_lines() if by_lines is not None else None
    if by_line is None:
        by_line = _by_lines(store, query, where, params, total)
    chosen: dict[int, None] = dict.fromkeys(by_line)
    # Each lookup only adds changes while fewer than `MAX_CANDIDATES` are chosen: once that
    # many are, the lookups after it could add none, and are not asked.
    for extra in (
        lambda: _by_symbols(store, query, where, params, nearest),
        lambda: _by_issues(store, query, where, params),
        lambda: _by_text(store, query, where, params, kept),
        lambda: _by_code_words(store, query, where, params),
        lambda: _by_files(store, query, where, params, nearest),
    ):
        if len(chosen) >= MAX_CANDIDATES:
            break
        for change_id in extra():
            if len(chosen) >= MAX_CANDIDATES:
                break
            chosen.setdefault(change_id, None)
    return list(chosen)


def _by_lines(
    store: IndexStore, query: ChangeEvidence, where: str, params: list[int], total: int
) -> list[int]:
    """The `LINE_CANDIDATES` changes in scope sharing the most rarity with the query's lines."""
    hashes = list(query.removed | query.added)
    weights = line_weights(store, hashes)
    limit = rare_line_limit(total)
    rare = [h for h in hashes if weights.document_frequency.get(h, 0) <= limit]
    scores: dict[int, float] = defaultdict(float)
    for change_id, _, line_hash in store.lines.changes_with(rare):
        scores[change_id] += weights(line_hash)
    ranked = sorted(scores, key=lambda cid: -scores[cid])
    kept: list[int] = []
    # Best first, a slice at a time: nearly every change is in scope, so one slice or two.
    for chunk in chunks(ranked, LINE_CANDIDATES):
        admitted = store.changes.ids_where(chunk, where, params)
        kept += [change_id for change_id in chunk if change_id in admitted]
        if len(kept) >= LINE_CANDIDATES:
            break
    return kept[:LINE_CANDIDATES]


def rare_line_limit(total: int) -> int:
    """Lines in more than 2% of all changes (and 50) pick candidates poorly, and cost most:
    only lines in at most this many changes retrieve any."""
    return max(50, total // 50)


def _ids_matching(
    store: IndexStore, sql: str, keys: Iterable[tuple], where: str, params: list
) -> list[int]:
    """Change ids for each key of one lookup (`sql` takes the key's values, then the scope)."""
    found: list[int] = []
    for key in keys:
        found.extend(cid for (cid,) in store.rows(sql.format(where=where), [*key, *params]))
    return found


def _nearest_first(reference: int | None) -> str:
    """An ORDER BY for the PRs nearest to `reference` in number (newest first without one),
    then changes without a number (direct commits), newest indexed first.

    Row ids follow indexing order, not time: the PRs read from refs come after every commit
    of the history, so "highest id first" kept unmerged PRs and crowded out merged ones.
    """
    near = "-c.number" if reference is None else f"abs(c.number - {int(reference)})"
    return f"c.number IS NULL, {near}, c.id DESC"


def _by_symbols(
    store: IndexStore, query: ChangeEvidence, where: str, params: list, nearest: str
) -> list[int]:
    sql = (
        "SELECT s.change_id FROM symbols s JOIN changes c ON c.id = s.change_id "
        "WHERE s.qualified = ? AND s.path = ? AND {where} "
        f"GROUP BY s.change_id ORDER BY {nearest} LIMIT {SYMBOL_CANDIDATES}"
    )
    keys = [(name, path) for path, name in sorted(query.symbols)[:50]]
    return _ids_matching(store, sql, keys, where, params)


def _by_files(
    store: IndexStore, query: ChangeEvidence, where: str, params: list, nearest: str
) -> list[int]:
    sql = (
        "SELECT f.change_id FROM files f JOIN changes c ON c.id = f.change_id "
        f"WHERE f.path = ? AND {{where}} GROUP BY f.change_id ORDER BY {nearest} "
        f"LIMIT {FILE_CANDIDATES}"
    )
    return _ids_matching(store, sql, [(path,) for path in sorted(query.files)[:30]], where, params)


def _by_issues(store: IndexStore, query: ChangeEvidence, where: str, params: list) -> list[int]:
    sql = (
        "SELECT i.change_id FROM issue_refs i JOIN changes c ON c.id = i.change_id "
        "WHERE i.issue = ? AND {where}"
    )
    return _ids_matching(store, sql, [(issue,) for issue in sorted(query.issues)], where, params)


def _by_text(
    store: IndexStore,
    query: ChangeEvidence,
    where: str,
    params: list[int],
    kept: KeptPostings | None = None,
) -> list[int]:
    scores: dict[int, float] = defaultdict(float)
    if kept is not None:
        admits, excluded = kept.admits, kept.excluded
        for term, weight in query.terms.items():
            postings = kept.postings.of(term)
            if excluded is not None:
                for change_id, other in postings:
                    if change_id not in excluded:
                        scores[change_id] += weight * other
                continue
            for change_id, other in postings:
                if admits(change_id):
                    scores[change_id] += weight * other
        return sorted(scores, key=lambda cid: -scores[cid])[:TEXT_CANDIDATES]
    for term, weight in query.terms.items():
        for change_id, other in store.rows(
            f"SELECT t.change_id, {TERM_WEIGHT} FROM term_tf t {TERM_WEIGHT_JOINS} "
            f"JOIN changes c ON c.id = t.change_id WHERE t.term = ? AND {where}",
            [term, *params],
        ):
            scores[change_id] += weight * other
    return sorted(scores, key=lambda cid: -scores[cid])[:TEXT_CANDIDATES]


def _by_code_words(
    store: IndexStore, query: ChangeEvidence, where: str, params: list[int]
) -> list[int]:
    """The changes whose identifiers are nearest the query's (cosine of the stored vectors,
    over its words in at most 5% of changes): a fix written differently shares no line, and
    may touch no file in common (a caller fixed instead of the callee)."""
    documents = int(store.get_meta("code_word_changes") or 0)
    df = _values_for(store, "code_word_df", "word", "df", query.code_terms)
    common = max(5, COMMON_CODE_WORD * documents)
    rare = [(w, v) for w, v in query.code_terms.items() if df.get(w, 0) <= common]
    if not rare:
        return []
    # The query's words as a literal table: a temporary one would create a temp database.
    words = ", ".join("(?, ?)" for _ in rare)
    return [
        change_id
        for change_id, _ in store.rows(
            f"WITH q(word, weight) AS (VALUES {words}) "
            f"SELECT t.change_id, sum(q.weight * t.weight) AS s FROM q "
            f"CROSS JOIN code_terms t ON t.word = q.word "
            f"CROSS JOIN changes c ON c.id = t.change_id "
            f"WHERE {where} GROUP BY t.change_id ORDER BY s DESC, t.change_id DESC LIMIT ?",
            [*(value for pair in rare for value in pair), *params, CODE_WORD_CANDIDATES],
        )
    ]


def load_evidence(
    store: IndexStore,
    ids: Sequence[int],
    rarity: dict[int, int] | None = None,
    shared_with: ChangeEvidence | None = None,
    known_lines: Mapping[int, ChangeEvidence] | None = None,
) -> list[ChangeEvidence]:
    """Full evidence for the given change ids, in the given order.

    With `rarity`, also fills it with the document frequency of every line read. With `shared_with`,
    reads only the lines the candidates share with that query, and their precomputed side
    weights: a comparison needs nothing more, and large candidates cost no more than small.
    Files are read whole even so: a replay reads the files of the query a candidate touched,
    under their old name too (a query that renames the file a candidate changed).
    `known_lines` holds each change's lines as far as a batch's queries have them
    (`Batch.lines`, for a query whose every line the batch read): the shared ones are taken
    from there instead of being looked up again.
    """
    if not ids:
        return []
    removed: dict[int, set[int]] = defaultdict(set)
    added: dict[int, set[int]] = defaultdict(set)
    removed_in: dict[int, set[tuple[int, int]]] = defaultdict(set)  # (file id, line hash)
    added_in: dict[int, set[tuple[int, int]]] = defaultdict(set)
    # Read a file and side at a time: each file's removed and added hashes, by change, for
    # the lines a change keeps (the same as from `removed_in & added_in`, without a pair per
    # line; only membership in `kept` is ever asked).
    by_file: dict[int, dict[int, list[list[int]]]] = defaultdict(dict)
    files: dict[int, set[str]] = defaultdict(set)
    old_paths: dict[int, set[str]] = defaultdict(set)
    added_files: dict[int, set[str]] = defaultdict(set)
    symbols: dict[int, set[tuple[str, str]]] = defaultdict(set)
    hunks: dict[int, set[int]] = defaultdict(set)
    issues: dict[int, set[str]] = defaultdict(set)
    terms: dict[int, dict[str, float]] = defaultdict(dict)
    code_terms: dict[int, dict[str, float]] = defaultdict(dict)

    rows: dict[int, Any] = {}  # store rows, read by column name
    lines: Sequence[tuple[int, int | None, str, int]]
    for chunk in chunks(list(ids)):
        marks = ",".join("?" * len(chunk))
        for row in store.query(f"SELECT * FROM changes WHERE id IN ({marks})", chunk):
            rows[row["id"]] = row
        if shared_with is None and rarity is None:
            # Every line, a file and side at a time: the sets get the same lines in the same
            # order as from `rows_of`, a row at a time.
            for cid, set_file, side, hashes in store.lines.sets_of(chunk):
                (removed if side == "-" else added)[cid].update(hashes)
                if set_file is not None:
                    sides = by_file[cid].setdefault(set_file, [[], []])
                    sides[side != "-"].extend(hashes)
            lines = []
        else:
            lines = (
                store.lines.rows_of(chunk)
                if shared_with is None
                else _shared_rows(
                    store, chunk, shared_with.removed | shared_with.added, known_lines
                )
            )
        for cid, file_id, side, line_hash in lines:
            (removed if side == "-" else added)[cid].add(line_hash)
            if file_id is not None:
                (removed_in if side == "-" else added_in)[cid].add((file_id, line_hash))
        if rarity is not None:
            df = _values_for(store, "line_df", "hash", "df", {line[3] for line in lines})
            rarity.update((line[3], df.get(line[3]) or 0) for line in lines)
        # With a query, only what could be shared with it is read: the signals are overlaps,
        # and a replay reads the query's files a candidate changed (by a new name or an old).
        only, params = _shared_only(shared_with, "path", lambda q: q.files | q.old_paths)
        for cid, path, old_path, status in store.rows(
            f"SELECT change_id, path, old_path, status FROM files WHERE change_id IN ({marks}) "
            f"AND status != 'ignored' {only}",
            [*chunk, *params],
        ):
            files[cid].add(path)
            if status == "added":
                added_files[cid].add(path)
            if old_path and old_path != path:
                old_paths[cid].add(old_path)
        # A symbol is compared as (path, name): a name the query changes in another file
        # is no overlap, and common names (`__init__`) are in most changes.
        only, params = _shared_only(shared_with, "qualified", lambda q: {n for _, n in q.symbols})
        in_files, file_params = _shared_only(
            shared_with, "path", lambda q: {p for p, _ in q.symbols}
        )
        for cid, path, name in store.rows(
            f"SELECT change_id, path, qualified FROM symbols WHERE change_id IN ({marks}) "
            f"{only} {in_files}",
            [*chunk, *params, *file_params],
        ):
            symbols[cid].add((path, name))
        only, params = _shared_only(shared_with, "content_hash", lambda q: q.hunks)
        for cid, content in store.rows(
            f"SELECT change_id, content_hash FROM hunks WHERE change_id IN ({marks}) {only}",
            [*chunk, *params],
        ):
            hunks[cid].add(content)
        for cid, issue in store.rows(
            f"SELECT change_id, issue FROM issue_refs WHERE change_id IN ({marks})", chunk
        ):
            issues[cid].add(issue)
        only, params = _shared_only(shared_with, "t.term", lambda q: q.terms.keys())
        for cid, term, weight in store.rows(
            f"SELECT t.change_id, t.term, {TERM_WEIGHT} FROM term_tf t {TERM_WEIGHT_JOINS} "
            f"WHERE t.change_id IN ({marks}) {only}",
            [*chunk, *params],
        ):
            terms[cid][term] = weight
        only, params = _shared_only(shared_with, "word", lambda q: q.code_terms.keys())
        for cid, word, weight in store.rows(
            f"SELECT change_id, word, weight FROM code_terms WHERE change_id IN ({marks}) {only}",
            [*chunk, *params],
        ):
            code_terms[cid][word] = weight
    return [
        ChangeEvidence(
            key=f"#{rows[cid]['number']}"
            if rows[cid]["number"] is not None
            else rows[cid]["sha"][:10],
            number=rows[cid]["number"],
            commit=rows[cid]["merge_commit"] or rows[cid]["sha"],
            state=rows[cid]["state"],
            title=rows[cid]["title"] or "",
            title_from_commit=rows[cid].get("title_source") == "commit",
            author=rows[cid]["author"],
            author_email=rows[cid].get("author_email"),
            branch=branch_of(rows[cid]),
            base_commit=rows[cid]["base_sha"],
            head_commit=rows[cid]["head_sha"],
            landing_base=rows[cid].get("landing_base"),
            merged_at=rows[cid]["merged_at"],
            created_at=rows[cid]["created_at"],
            removed=frozenset(removed[cid]),
            added=frozenset(added[cid]),
            kept=_kept(removed_in[cid], added_in[cid], by_file.get(cid)),
            files=frozenset(files[cid]),
            old_paths=frozenset(old_paths[cid]),
            added_files=frozenset(added_files[cid]),
            symbols=frozenset(symbols[cid]),
            hunks=frozenset(hunks[cid]),
            issues=frozenset(issues[cid]),
            takes_over=takes_over(rows[cid]),
            patch_id=rows[cid]["patch_id"],
            truncated=bool(rows[cid].get("truncated")),
            terms=terms[cid],
            code_terms=code_terms[cid],
            removed_total=rows[cid].get("removed_weight") if shared_with is not None else None,
            added_total=rows[cid].get("added_weight") if shared_with is not None else None,
            file_count=rows[cid].get("file_count"),
            lines_changed=_lines_changed(rows[cid]),
        )
        for cid in ids
        if cid in rows
    ]


def _lines_changed(row: Mapping[str, Any]) -> int | None:
    """The lines a change adds and removes, as the index counted them (None: not counted)."""
    added, removed = row.get("added"), row.get("removed")
    if added is None and removed is None:
        return None
    return (added or 0) + (removed or 0)


def _kept(
    removed_in: set[tuple[int, int]],
    added_in: set[tuple[int, int]],
    by_file: dict[int, list[list[int]]] | None,
) -> frozenset[int]:
    """The lines a change both removes and adds in one file: from (file, hash) pairs, or from
    each file's removed and added hashes."""
    if by_file is None:
        return frozenset(h for _, h in removed_in & added_in)
    kept: set[int] = set()
    for file_removed, file_added in by_file.values():
        if file_removed and file_added:
            kept.update(set(file_removed).intersection(file_added))
    return frozenset(kept)


def takes_over(row: Mapping[str, Any]) -> frozenset[int]:
    """The PRs an indexed change's title or description says it takes over (not itself)."""
    named = taken_over(f"{row['title'] or ''}\n{row['body'] or ''}")
    return frozenset(n for n in named if n != row["number"])


def branch_of(row: Mapping[str, Any]) -> str | None:
    """The branch a PR was proposed for, else the one a change landed on, when known (a target
    given as a commit id names no branch)."""
    landed = row["target"] if row["state"] == "merged" else None
    return branch_name(row["base_ref"]) or branch_name(landed) or row.get("fork_line")


def branch_name(name: str | None) -> str | None:
    """`refs/heads/3.12` and `origin/3.12` are the branch `3.12`; a commit id is no branch."""
    if not name or _COMMIT_ID.match(name):
        return None
    return name.removeprefix("refs/heads/").removeprefix("refs/remotes/").removeprefix("origin/")


def _shared_only(
    query: ChangeEvidence | None, column: str, keys_of: Callable[[ChangeEvidence], Iterable]
) -> tuple[str, list]:
    """An `AND column IN (...)` clause limiting rows to the query's own keys, when it has few
    enough to list (otherwise every row is read, and the overlap is taken in Python)."""
    if query is None:
        return "", []
    keys = list(set(keys_of(query)))
    if not keys:
        return "AND 0", []
    if len(keys) > _CHUNK:
        return "", []
    return f"AND {column} IN ({','.join('?' * len(keys))})", keys


def _shared_rows(
    store: IndexStore,
    change_ids: Sequence[int],
    shared: frozenset[int],
    known: Mapping[int, ChangeEvidence] | None = None,
) -> list[tuple[int, int | None, str, int]]:
    """The line rows of these changes that hold one of the `shared` hashes, by hash first (as
    `LineRows.rows_of` gives them), found through the lookup by hash: reading every line
    of a large candidate to find the few it shares cost more. A row's file is read only for the
    changes with a shared line on both sides, the only ones where it tells a line the change
    keeps (removed and added in one file) from one it moves."""
    wanted = set(change_ids)
    found: list[tuple[int, int | None, str, int]]
    if known is not None and wanted <= known.keys():
        # In the lookup's order (by hash, then change, removed first): the first of lines
        # alike is the one a reason quotes.
        found = sorted(
            (
                (cid, None, side, line_hash)
                for cid in change_ids
                for side, hashes in (("-", known[cid].removed), ("+", known[cid].added))
                for line_hash in hashes & shared
            ),
            key=lambda row: (row[3], row[0], row[2] == "+"),
        )
    else:
        found = [
            (cid, None, side, line_hash)
            for cid, side, line_hash in store.lines.changes_with(sorted(shared))
            if cid in wanted
        ]
    sides: dict[tuple[int, int], set[str]] = defaultdict(set)
    for cid, _, side, line_hash in found:
        sides[(cid, line_hash)].add(side)
    both = sorted({cid for (cid, _), seen in sides.items() if len(seen) == 2})
    if not both:
        return found
    exact = store.lines.rows_of(both, shared)
    read = set(both)
    rows = [row for row in found if row[0] not in read] + list(exact)
    rows.sort(key=lambda row: (row[3], row[0], -1 if row[1] is None else row[1], row[2]))
    return rows


def weights_for(
    store: IndexStore, query: ChangeEvidence, candidates: Iterable[ChangeEvidence]
) -> LineWeights:
    """Rarity weights for every line of the query and the candidates."""
    hashes: set[int] = set(query.removed | query.added)
    for candidate in candidates:
        hashes |= candidate.removed | candidate.added
    return line_weights(store, hashes)


def weights_with(store: IndexStore, query: ChangeEvidence, rarity: dict[int, int]) -> LineWeights:
    """Rarity weights for the candidates' lines (already read) and the query's (looked up)."""
    missing = (query.removed | query.added) - rarity.keys()
    looked_up = line_weights(store, missing).document_frequency if missing else {}
    return LineWeights({**rarity, **looked_up}, int(store.get_meta("change_count") or 1))


def newest_number(store: IndexStore) -> int:
    row = next(store.rows("SELECT max(number) FROM changes"))
    return int(row[0] or 0)


def dismissed_for(store: IndexStore, number: int | None) -> frozenset[int]:
    if number is None:
        return frozenset()
    return frozenset(
        other for (other,) in store.rows("SELECT other FROM dismissals WHERE number = ?", (number,))
    )


def changes_touching(store: IndexStore, ids: Sequence[int], paths: Iterable[str]) -> set[int]:
    """Which of the given changes change one of `paths` (an ignored file counts for none)."""
    wanted = sorted(set(paths))
    found: set[int] = set()
    if not wanted:
        return found
    for chunk in chunks(list(ids)):
        for paths_chunk in chunks(wanted):
            marks, path_marks = ",".join("?" * len(chunk)), ",".join("?" * len(paths_chunk))
            found.update(
                cid
                for (cid,) in store.rows(
                    f"SELECT DISTINCT change_id FROM files WHERE change_id IN ({marks}) "
                    f"AND path IN ({path_marks}) AND status != 'ignored'",
                    [*chunk, *paths_chunk],
                )
            )
    return found
