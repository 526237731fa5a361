"""The index file: opening it safely, writing one change per transaction, and reading it back."""

from __future__ import annotations

import contextlib
import functools
import os
import sqlite3
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from index.errors import (
    IndexCorrupt,
    IndexDiskFull,
    IndexLocked,
    IndexMissing,
    IndexReadOnly,
    NotAnIndex,
)
from index.git.hunk_symbols import header_kind
from index.git.stored_diff import CUT, StoredChange
from index.metadata import instant_or_zero
from index.storage import line_postings, line_sets, rarity
from index.storage.file_holders import processes_holding
from index.storage.line_sets import LineSet
from index.storage.packed import pack_counts, packed_words, squeeze, unpack_counts, unsqueeze
from index.storage.rarity import LineCounts
from index.storage.schema import (
    SCHEMA_VERSION,
    create_lookup_indexes,
    drop_lookup_indexes,
    foreign_tables,
    migrate,
    recorded_version,
)
from index.storage.word_counts import WordCounts

DEFAULT_DB_NAME = "prdup.db"
# The tables whose rows belong to one change (`change_id`): removed with it.
CHANGE_CHILDREN = (
    "files",
    "hunks",
    "line_sets",
    "symbols",
    "issue_refs",
    "change_words",
    "part_landings",
)
# The kind of a symbol named by git's hunk header in rows written before a definition was
# told from other headers (`index.git.hunk_symbols.DEFINITION`, `CONTEXT`).
HEADER_SYMBOL = "hunk-header"


@dataclass(frozen=True, slots=True)
class SymbolRow:
    path: str
    qualified: str
    kind: str
    side: str


@dataclass(frozen=True, slots=True)
class PartLandingRow:
    """One commit of a PR that landed in part: `copy` is the target commit with its patch,
    None while it is still to do."""

    change_id: int
    position: int  # its place among the PR's commits, oldest first
    sha: str
    subject: str
    files: tuple[str, ...]
    copy: str | None
    target: str | None


@dataclass(slots=True)
class ChangeRecord:
    """What the index stores about a change besides its diff."""

    kind: str  # "pr" | "commit"
    state: str  # "merged" | "open" | "closed" | "unmerged" (not merged, open or closed unknown)
    source: str  # "merge-commit" | "squash" | "rebase" | "ref" | "direct" | "metadata"
    number: int | None = None
    sha: str | None = None
    head_sha: str | None = None
    base_sha: str | None = None
    merge_commit: str | None = None
    target: str | None = None
    base_ref: str | None = None
    fork_line: str | None = None  # an unmerged PR's release line, from git (`base_ref`: GitHub's)
    title: str | None = None
    body: str | None = None
    author: str | None = None
    created_at: str | None = None
    merged_at: str | None = None
    closed_at: str | None = None
    status: str = "indexed"  # "indexed" | "skipped" | "metadata-only"
    skip_reason: str | None = None
    truncated: bool = False
    # A PR's own commits (on no branch when read), as `index.git.rebase_landings` encodes them.
    own_commits: str | None = None
    landing_base: str | None = None  # where a landing of several commits starts
    issues: tuple[str, ...] = ()
    state_source: str | None = None  # "metadata" where GitHub's metadata gave the state
    title_source: str | None = None  # "commit" where the title is the head commit's subject
    symbols: tuple[SymbolRow, ...] = field(default=())


def _translate(error: sqlite3.DatabaseError, path: Path) -> Exception:
    message = str(error).lower()
    if "locked" in message or "busy" in message:
        holders = processes_holding(path)
        if holders:
            who = f"processes with it open: {', '.join(holders)}"
        else:
            who = "which process holds it is not known"
        return IndexLocked(
            f"{path}: the index is locked for writing; {who}; wait for it and run again"
        )
    if "disk is full" in message:
        # SQLite rolls the batch back: the index holds every batch written before it.
        return IndexDiskFull(
            f"{path}: the disk is full ({_free_space(path.parent)} free); the index keeps what "
            "was written before: free some space and run again"
        )
    read_only = read_only_reason(path)
    if "readonly" in message or (read_only and "unable to open" in message):
        return IndexReadOnly(
            f"{path}: the index is read-only ({read_only or 'opened for reading only'}) and "
            "this needs to write it: make it writable, or give --db a writable file"
        )
    if "unable to open" in message and not path.parent.is_dir():
        return IndexMissing(f"{path}: cannot create the index: {path.parent} does not exist")
    if "not a database" in message and not _has_sqlite_header(path):
        return IndexCorrupt(
            f"{path}: not an SQLite database (a damaged index, or another kind of file); if it "
            "is prdup's index, delete it and run 'prdup index' again"
        )
    return IndexCorrupt(
        f"{path}: the index file is damaged ({error}); delete it and run 'prdup index' again"
    )


def _free_space(folder: Path) -> str:
    try:
        stats = os.statvfs(folder)
    except OSError:
        return "unknown space"
    return f"{stats.f_bavail * stats.f_frsize / 2**20:.0f} MB"


def _has_sqlite_header(path: Path) -> bool:
    try:
        with open(path, "rb") as file:
            return file.read(16) == b"SQLite format 3\0"
    except OSError:
        return False


def read_only_reason(path: Path) -> str | None:
    """Why the index at `path` cannot be written (or created) by this process, or None.

    `os.access` asks the kernel, which also knows read-only media and immutable files (which
    bind root too); SQLite needs the folder writable as well, for its -wal and -shm files.
    """
    folder = path.parent
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return "on read-only media"
    except OSError:
        return None  # no such folder: nothing to say about writing there
    if path.exists() and not os.access(path, os.W_OK):
        return "the file is read-only"
    if not os.access(folder, os.W_OK):
        return f"its folder {folder} is read-only"
    return None


def default_db_path(repo: Any) -> Path:
    """Inside the git directory: never committed, shared by every work tree of the clone."""
    return Path(repo.git_dir) / DEFAULT_DB_NAME


CACHE_KIB = 256 * 1024
_TEXTS_SEEN_LIMIT = 2_000_000  # line hashes remembered while deferring texts (~150 MiB)


class IndexStore:
    """An open index. Writers hold WAL mode, so `check` can read while `index` writes."""

    def __init__(self, path: str | Path, *, create: bool = True, timeout: float = 5.0) -> None:
        """`create`: open to write (`prdup index`), creating the file if need be. Otherwise the
        index must exist, and one that cannot be written is opened read-only (`read_only`)."""
        self.path = Path(path)
        if not create and not self.path.exists():
            raise IndexMissing(
                f"{self.path}: no index yet; build it with 'prdup index' in the repository"
            )
        reason = read_only_reason(self.path)
        if create and reason:
            raise IndexReadOnly(
                f"{self.path}: the index is read-only ({reason}) and 'prdup index' writes it: "
                "make it writable, or give --db a writable file"
            )
        self.read_only = reason is not None
        try:
            self.conn = (
                self._connect_read_only(timeout) if self.read_only else self._connect(timeout)
            )
            foreign = foreign_tables(self.conn)
            if foreign:
                self.conn.close()
                raise NotAnIndex(
                    f"{self.path}: not a prdup index (a database with other tables: "
                    f"{', '.join(foreign[:5])}); give --db a prdup index or a new file"
                )
            if self.read_only:
                self._check_readable()
            else:
                self._prepare_for_writing()
        except sqlite3.DatabaseError as error:
            raise _translate(error, self.path) from None
        self.defer_texts = False  # a first run appends line texts, merged at its end
        self._texts_seen: set[int] = set()
        # Set by `follow_counts` when a run starts on an index whose derived counts are
        # settled: they then follow each write, and the run's end settles only what moved.
        self.line_counts: LineCounts | None = None
        self.word_counts: WordCounts | None = None

    def _connect(self, timeout: float) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=timeout, isolation_level=None)

    def _connect_read_only(self, timeout: float) -> sqlite3.Connection:
        """Open for reading only: `mode=ro`, or `immutable=1` where even SQLite's -wal and
        -shm files cannot be created beside the index (a read-only folder or medium, where
        nobody can be writing it either; a -wal left there by a crashed writer is ignored)."""
        uri = f"{self.path.resolve().as_uri()}?mode=ro"
        conn = sqlite3.connect(uri, uri=True, timeout=timeout, isolation_level=None)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return conn
        except sqlite3.OperationalError:
            conn.close()
        return sqlite3.connect(
            f"{uri}&immutable=1", uri=True, timeout=timeout, isolation_level=None
        )

    def _check_readable(self) -> None:
        """A read-only index is read as it is: one an older prdup wrote cannot be upgraded."""
        version = recorded_version(self.conn) or 0
        if version < SCHEMA_VERSION:
            raise IndexReadOnly(
                f"{self.path}: the index is read-only ({read_only_reason(self.path)}) and an "
                "older prdup wrote it; run 'prdup index' where it can be written to upgrade it"
            )

    def _prepare_for_writing(self) -> None:
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute("PRAGMA foreign_keys=ON")
        # Indexing inserts line hashes in random order into a B-tree that outgrows SQLite's
        # default 2 MB page cache within a few hundred PRs; a bigger cache (a ceiling, not
        # an allocation) keeps those pages in memory.
        self.conn.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
        migrate(self.conn)

    @functools.cached_property
    def db(self) -> Any:
        """sqlite-utils' view of the same connection, for writes; imported only when writing
        (it costs ~150 ms to import, and `check` only reads)."""
        import sqlite_utils

        return sqlite_utils.Database(self.conn)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> IndexStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- meta -------------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self._write(
            lambda: self.conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value)
            )
        )

    @property
    def schema_version(self) -> int:
        return int(self.get_meta("schema_version") or 0)

    # --- writing ----------------------------------------------------------------------------

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """Group many writes into one transaction: all of them land, or none (and a rerun redoes
        them). Writing history a commit per transaction spends most of its time committing."""
        if self.conn.in_transaction:
            yield
            return
        try:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self._roll_back()
                raise
            self.conn.execute("COMMIT")
        except sqlite3.DatabaseError as error:
            raise _translate(error, self.path) from None

    def _roll_back(self) -> None:
        # SQLite has already rolled back after some errors (a full disk): a second ROLLBACK
        # would fail and hide the error that matters.
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")

    def _write(self, action: Any) -> Any:
        if self.conn.in_transaction:  # inside a batch: it commits
            try:
                return action()
            except sqlite3.DatabaseError as error:
                raise _translate(error, self.path) from None
        try:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                result = action()
            except BaseException:
                self._roll_back()
                raise
            self.conn.execute("COMMIT")
            return result
        except sqlite3.DatabaseError as error:
            raise _translate(error, self.path) from None

    def save_change(
        self,
        record: ChangeRecord,
        change: StoredChange | None,
        code_words: Sequence[tuple[str, int]] | None = None,
    ) -> int:
        """Replace whatever the index held for this PR or commit, in one transaction.

        `code_words` (the change's most used identifiers, counted by the caller) marks it
        counted; without them `index.storage.code_model` counts it later from its stored lines.
        """
        return self.save_changes([(record, change, code_words)])[0]

    def save_changes(
        self,
        items: Sequence[tuple[ChangeRecord, StoredChange | None, Sequence[tuple[str, int]] | None]],
    ) -> list[int]:
        """`save_change` for many changes in one transaction, each table written at once."""

        def action() -> list[int]:
            rows = _Rows(self._next_file_id())
            ids = [self._save(record, change, words, rows) for record, change, words in items]
            rows.write(self)
            return ids

        return list(self._write(action))

    def _next_file_id(self) -> int:
        return int(self.conn.execute("SELECT coalesce(max(id), 0) + 1 FROM files").fetchone()[0])

    def _existing_id(self, record: ChangeRecord) -> int | None:
        if record.number is not None:
            row = self.conn.execute(
                "SELECT id FROM changes WHERE number = ?", (record.number,)
            ).fetchone()
        else:
            row = self.conn.execute(
                "SELECT id FROM changes WHERE kind = 'commit' AND sha = ?", (record.sha,)
            ).fetchone()
        return row[0] if row else None

    def _delete_children(self, change_id: int) -> None:
        # The text model's rows stay: its refresh tells a changed or deleted text by its digest.
        if self.line_counts is not None:
            self.line_counts.remove(self.conn, change_id)
        if self.word_counts is not None:
            self.word_counts.remove(self.conn, [change_id])
        line_postings.remove(self.conn, change_id)
        for table in (*CHANGE_CHILDREN, "code_terms"):
            self.conn.execute(f"DELETE FROM {table} WHERE change_id = ?", (change_id,))

    def _save(
        self,
        record: ChangeRecord,
        change: StoredChange | None,
        code_words: Sequence[tuple[str, int]] | None,
        rows: _Rows,
    ) -> int:
        existing = self._existing_id(record)
        columns = {
            "kind": record.kind,
            "number": record.number,
            "sha": record.sha,
            "head_sha": record.head_sha,
            "base_sha": record.base_sha,
            "merge_commit": record.merge_commit,
            "target": record.target,
            "base_ref": record.base_ref,
            "fork_line": record.fork_line,
            "state": record.state,
            "state_source": record.state_source,
            "source": record.source,
            "title": record.title,
            "title_source": record.title_source,
            "body": record.body,
            "author": record.author,
            # Whoever wrote the change's head now: a PR whose head moved to another author's
            # commit must not keep the e-mail of the old one (`fill_author_emails` reads it).
            "author_email": None,
            "created_at": record.created_at,
            "merged_at": record.merged_at,
            "closed_at": record.closed_at,
            "status": record.status,
            "skip_reason": record.skip_reason,
            "truncated": int(record.truncated),
            "own_commits": record.own_commits,
            "landing_base": record.landing_base,
            "patch_id": change.patch_id if change and not change.is_empty else None,
            "file_count": len(change.files) if change else 0,
            "added": change.added_count if change else 0,
            "removed": change.removed_count if change else 0,
            "words_counted": int(code_words is not None),
        }
        if existing is None:
            cursor = self.conn.execute(
                f"INSERT INTO changes ({', '.join(columns)}) VALUES "
                f"({', '.join('?' for _ in columns)})",
                tuple(columns.values()),
            )
            change_id = int(cursor.lastrowid or 0)
        else:
            change_id = existing
            self._delete_children(change_id)
            rows.forget(change_id)
            assignments = ", ".join(f"{name} = ?" for name in columns)
            self.conn.execute(
                f"UPDATE changes SET {assignments} WHERE id = ?",
                (*columns.values(), change_id),
            )
        rows.symbols.extend(
            (change_id, s.path, s.qualified, s.kind, s.side) for s in set(record.symbols)
        )
        if change is not None:
            rows.add_diff(change_id, change)
        rows.issues.extend((change_id, issue) for issue in sorted(set(record.issues)))
        if code_words:
            rows.code_words.append((change_id, pack_counts(code_words)))
        return change_id

    def save_line_texts(self, texts: dict[int, str]) -> None:
        """Line texts by hash; during a first run appended to `line_texts_pending`, new ones
        only as far as this run remembers (the merge at its end drops any other repeat)."""
        if not self.defer_texts:
            self.conn.executemany(
                "INSERT OR IGNORE INTO line_texts(hash, text) VALUES (?, ?)", texts.items()
            )
            return
        seen = self._texts_seen
        new = [(h, t) for h, t in texts.items() if h not in seen]
        if len(seen) > _TEXTS_SEEN_LIMIT:
            seen.clear()
        seen.update(h for h, _ in new)
        self.conn.executemany("INSERT INTO line_texts_pending(hash, text) VALUES (?, ?)", new)

    def update_metadata(self, number: int, fields: dict[str, Any], issues: Sequence[str]) -> bool:
        """Refresh titles, states and the like of an indexed PR; False when it is not indexed."""

        def action() -> bool:
            row = self.conn.execute("SELECT id FROM changes WHERE number = ?", (number,)).fetchone()
            if row is None:
                return False
            if fields:
                self.db["changes"].update(row[0], fields)
            if issues:
                self.conn.execute("DELETE FROM issue_refs WHERE change_id = ?", (row[0],))
                self.conn.executemany(
                    "INSERT INTO issue_refs(change_id, issue) VALUES (?, ?)",
                    [(row[0], issue) for issue in sorted(set(issues))],
                )
            return True

        return bool(self._write(action))

    def set_heads(self, heads: Sequence[tuple[int, str]]) -> None:
        """Record the head commits of indexed PRs, by (number, head sha), in one transaction."""
        if heads:
            self._write(
                lambda: self.conn.executemany(
                    "UPDATE changes SET head_sha = ? WHERE number = ?",
                    [(head, number) for number, head in heads],
                )
            )

    def changes_without_code_words(self) -> list[int]:
        """Changes whose words were never counted (new, or re-read since)."""
        return [
            row[0]
            for row in self.conn.execute(
                "SELECT id FROM changes WHERE words_counted = 0 ORDER BY id"
            )
        ]

    def line_texts_of(self, change_ids: Sequence[int]) -> dict[int, dict[int, str]]:
        """Each change's distinct changed lines, by hash, with their normalised text."""
        hashes: dict[int, list[int]] = {cid: [] for cid in change_ids}
        for cid, _, _, line_hash in line_sets.rows_of(self.conn, list(change_ids)):
            hashes[cid].append(line_hash)
        texts = self.line_texts({h for found in hashes.values() for h in found})
        return {cid: {h: texts[h] for h in found if h in texts} for cid, found in hashes.items()}

    def line_texts(self, hashes: Iterable[int]) -> dict[int, str]:
        """The normalised text of each of these line hashes the index knows."""
        wanted = list(hashes)
        found: dict[int, str] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            found.update(
                self.rows(f"SELECT hash, text FROM line_texts WHERE hash IN ({marks})", chunk)
            )
        return found

    def line_rows(
        self, change_ids: Sequence[int], only: set[int] | frozenset[int] | None = None
    ) -> list[tuple[int, int, str, int]]:
        """Every line row (change id, file id, side, hash) of these changes, in that order; with
        `only`, the rows of those hashes alone, by hash first. These are the orders the rows
        came in from the table of a row per line and its index on (hash, change): sets built
        from them iterate as they did, so equal weights keep their order in the reasons."""
        try:
            if only is None:
                return [
                    (change_id, file_id, side, line_hash)
                    for change_id, file_id, side, blob in line_sets.sets_of(self.conn, change_ids)
                    for line_hash in sorted(line_sets.hashes_in(blob))
                ]
            found = [
                (line_hash, change_id, file_id, side)
                for change_id, file_id, side, blob in line_sets.sets_of(self.conn, change_ids)
                for line_hash in only.intersection(line_sets.hashes_in(blob))
            ]
            found.sort()
            return [(change_id, file_id, side, h) for h, change_id, file_id, side in found]
        except sqlite3.DatabaseError as error:
            raise _translate(error, self.path) from None

    def save_code_words(self, words: Mapping[int, Sequence[tuple[str, int]]]) -> None:
        """The words of these changes, most used first (a change may have none)."""
        rows = [(change_id, pack_counts(found)) for change_id, found in words.items() if found]
        change_ids = list(words)

        def action() -> None:
            if self.word_counts is not None:
                self.word_counts.remove(self.conn, change_ids)
                self.word_counts.add(self.conn, rows)
            self.conn.executemany(
                "DELETE FROM change_words WHERE change_id = ?", [(i,) for i in change_ids]
            )
            self.conn.executemany(
                "INSERT INTO change_words(change_id, words) VALUES (?, ?)",
                [(change_id, squeeze(packed)) for change_id, packed in rows],
            )
            self.conn.executemany(
                "UPDATE changes SET words_counted = 1 WHERE id = ?", [(i,) for i in change_ids]
            )

        self._write(action)

    def code_words_of(self, change_ids: Sequence[int]) -> dict[int, dict[str, int]]:
        found: dict[int, dict[str, int]] = {cid: {} for cid in change_ids}
        marks = ",".join("?" * len(change_ids))
        for cid, words in self.conn.execute(
            f"SELECT change_id, words FROM change_words WHERE change_id IN ({marks})",
            list(change_ids),
        ):
            found[cid] = unpack_counts(unsqueeze(words))
        return found

    def code_word_df(self) -> dict[str, int]:
        return dict(self.conn.execute("SELECT word, df FROM code_word_df"))

    def replace_all_code_terms(self, rows: Iterable[tuple[int, str, float]]) -> None:
        """Every change's vector at once (rows may be a generator reading this index)."""

        def action() -> None:
            self.conn.execute("DELETE FROM code_terms")
            self.conn.executemany(
                "INSERT INTO code_terms(change_id, word, weight) VALUES (?, ?, ?)", rows
            )

        self._write(action)

    def all_code_words(self) -> Iterator[tuple[int, dict[str, int]]]:
        """(change id, its word counts) for every change with words, in id order."""
        for change_id, words in self.conn.execute(
            "SELECT change_id, words FROM change_words ORDER BY change_id"
        ):
            yield change_id, unpack_counts(unsqueeze(words))

    def replace_code_terms(
        self, change_ids: Sequence[int], rows: Sequence[tuple[int, str, float]]
    ) -> None:
        self._write(lambda: self._replace_rows("code_terms", ("word", "weight"), change_ids, rows))

    def _replace_rows(
        self, table: str, columns: tuple[str, str], change_ids: Sequence[int], rows: Sequence
    ) -> None:
        """Swap these changes' rows of a per-change table for `rows` (change id first)."""
        self.conn.executemany(
            f"DELETE FROM {table} WHERE change_id = ?", [(i,) for i in change_ids]
        )
        self.conn.executemany(
            f"INSERT INTO {table}(change_id, {', '.join(columns)}) VALUES (?, ?, ?)", rows
        )

    def settle_code_word_df(self) -> None:
        """Bring the words' document frequencies up to date after a run: only the words its
        writes touched when it followed them (`follow_counts`), else all of them."""
        counts = self.word_counts
        if counts is None:
            self.rebuild_code_word_df()
        else:
            self._write(lambda: counts.settle(self.conn))

    def rebuild_code_word_df(self) -> None:
        """In how many changes each word appears, and how many changes have words."""

        def action() -> None:
            df: Counter[str] = Counter()
            changes = 0
            for (words,) in self.conn.execute("SELECT words FROM change_words"):
                df.update(packed_words(unsqueeze(words)))
                changes += 1
            self.conn.execute("DELETE FROM code_word_df")
            self.conn.executemany("INSERT INTO code_word_df(word, df) VALUES (?, ?)", df.items())
            self.conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('code_word_changes', ?)",
                (str(changes),),
            )

        self._write(action)

    def commits_without_author_email(self) -> list[tuple[int, str]]:
        """(change id, the commit whose author wrote it) for changes whose e-mail is unknown."""
        return [
            (row[0], row[1])
            for row in self.rows(
                "SELECT id, COALESCE(head_sha, sha) FROM changes "
                "WHERE author_email IS NULL AND COALESCE(head_sha, sha) IS NOT NULL"
            )
        ]

    def set_author_emails(self, emails: Iterable[tuple[int, str]]) -> None:
        """Record (change id, e-mail) pairs; '' marks a commit git could not tell about."""

        def action() -> None:
            self.conn.executemany(
                "UPDATE changes SET author_email = ? WHERE id = ?",
                [(email.lower(), change_id) for change_id, email in emails],
            )

        self._write(action)

    def prs_read_in_part(self) -> list[tuple[int, str, str, set[str]]]:
        """(id, fork point, head, files, ignored ones aside) of the unlanded PRs stored cut
        without a patch identity (read only up to their line limit)."""
        found = {
            change_id: (base, head)
            for change_id, base, head in self.rows(
                "SELECT id, base_sha, head_sha FROM changes WHERE kind = 'pr' AND truncated = 1 "
                "AND patch_id IS NULL AND merge_commit IS NULL AND status = 'indexed' "
                "AND base_sha IS NOT NULL AND head_sha IS NOT NULL"
            )
        }
        paths = self.changed_paths(list(found))
        return [(cid, base, head, paths.get(cid, set())) for cid, (base, head) in found.items()]

    def changed_paths(self, change_ids: list[int]) -> dict[int, set[str]]:
        """Each change's files, ignored ones aside."""
        found: dict[int, set[str]] = {}
        for start in range(0, len(change_ids), 500):
            chunk = change_ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for change_id, path in self.rows(
                f"SELECT change_id, path FROM files WHERE change_id IN ({marks}) "
                "AND status != 'ignored'",
                chunk,
            ):
                found.setdefault(change_id, set()).add(path)
        return found

    def set_own_commits(self, own: Iterable[tuple[int, str]]) -> None:
        """Record (change id, own commits as `index.git.rebase_landings` encodes them) pairs."""
        rows = [(text, change_id) for change_id, text in own]
        self._write(
            lambda: self.conn.executemany("UPDATE changes SET own_commits = ? WHERE id = ?", rows)
        )

    def set_part_landings(self, rows: Iterable[PartLandingRow]) -> None:
        """Replace every PR's landing in part with these rows (a run finds them all at once)."""
        values = [
            (r.change_id, r.position, r.sha, r.subject, "\n".join(r.files), r.copy, r.target)
            for r in rows
        ]

        def action() -> None:
            self.conn.execute("DELETE FROM part_landings")
            self.conn.executemany("INSERT INTO part_landings VALUES (?, ?, ?, ?, ?, ?, ?)", values)

        self._write(action)

    def part_landing(self, change_id: int) -> list[PartLandingRow]:
        """A PR's commits as its landing in part recorded them, in its order; [] for none."""
        return [
            PartLandingRow(
                change_id, position, sha, subject, tuple(files.splitlines()), copy, target
            )
            for position, sha, subject, files, copy, target in self.rows(
                "SELECT position, sha, subject, files, copy, target FROM part_landings "
                "WHERE change_id = ? ORDER BY position",
                (change_id,),
            )
        ]

    def set_patch_ids(self, patch_ids: Iterable[tuple[int, str]]) -> None:
        """Record (change id, patch identity) pairs."""

        def action() -> None:
            self.conn.executemany(
                "UPDATE changes SET patch_id = ? WHERE id = ?",
                [(patch_id, change_id) for change_id, patch_id in patch_ids],
            )

        self._write(action)

    def relabel_commit_as_pr(self, change_id: int, number: int, head: str, source: str) -> None:
        """Turn a direct commit's row into PR `number`'s (it landed without a merge commit)."""

        def action() -> None:
            for (other,) in self.conn.execute(
                "SELECT id FROM changes WHERE number = ? AND id != ?", (number, change_id)
            ).fetchall():
                self._delete_children(other)
                self.conn.execute("DELETE FROM changes WHERE id = ?", (other,))
            self.conn.execute(
                "UPDATE changes SET kind = 'pr', number = ?, head_sha = ?, source = ?, "
                "title_source = 'commit' WHERE id = ?",  # the title: its landed commit's subject
                (number, head, source, change_id),
            )

        self._write(action)

    def pull_texts(self) -> list[sqlite3.Row]:
        """What the index knows of each PR that git cannot tell again: its title, body,
        author, dates, base branch, and its state where GitHub's metadata gave it."""
        return self.query(
            "SELECT number, title, body, author, created_at, closed_at, base_ref, state, "
            "state_source, title_source FROM changes WHERE number IS NOT NULL"
        )

    def set_states(self, states: Sequence[tuple[int, str]]) -> None:
        """Set the states of PRs, by (number, state), in one transaction."""
        if states:
            self._write(
                lambda: self.conn.executemany(
                    "UPDATE changes SET state = ? WHERE number = ?",
                    [(state, number) for number, state in states],
                )
            )

    def mark_commit_titles(self, numbers: Sequence[int]) -> None:
        """Record that these PRs' titles are their head commits' subjects."""
        if numbers:
            self._write(
                lambda: self.conn.executemany(
                    "UPDATE changes SET title_source = 'commit' WHERE number = ?",
                    [(number,) for number in numbers],
                )
            )

    def count_unknown_states(self) -> int:
        """How many PRs the index holds whose state is unknown: not merged, and nothing tells
        whether they are open or closed."""
        query = "SELECT count(*) FROM changes WHERE kind = 'pr' AND state = 'unmerged'"
        return int(next(self.rows(query))[0])

    def clear_changes(self) -> None:
        """Delete every change and what was derived from it; dismissals stay."""

        self.line_counts = self.word_counts = None  # nothing left to follow: count anew

        def action() -> None:
            derived = ("code_terms", "line_texts", "line_df", "rarity_sums", "line_changes")
            text_model = ("text_docs", "term_tf", "text_norms", "term_idf")
            for table in (*CHANGE_CHILDREN, *derived, *text_model):
                self.conn.execute(f"DELETE FROM {table}")
            self.conn.execute("DELETE FROM changes")
            self.conn.execute("DELETE FROM meta WHERE key LIKE 'target:%'")

        self._write(action)

    def delete_change(self, change_id: int) -> None:
        def action() -> None:
            self._delete_children(change_id)
            self.conn.execute("DELETE FROM changes WHERE id = ?", (change_id,))

        self._write(action)

    def prepare_lookup_indexes(self) -> None:
        """Before a run. On an empty index, drop the lookup indexes and defer line texts:
        `build_lookup_indexes` sorts them in once at the end, several times cheaper than
        growing them batch by batch. On any other, finish what an interrupted first run left."""
        empty = self.conn.execute("SELECT 1 FROM changes LIMIT 1").fetchone() is None
        if empty:

            def action() -> None:
                drop_lookup_indexes(self.conn)
                line_postings.mark_pending(self.conn)

            self._write(action)
            self.defer_texts = True
        else:
            self.build_lookup_indexes()

    def build_lookup_indexes(self) -> None:
        """Create whatever lookup index is missing and merge deferred line texts (nothing to
        do unless this is, or follows, a first run)."""
        self.merge_line_texts()
        self._write(lambda: create_lookup_indexes(self.conn))

    def merge_line_texts(self) -> None:
        """Move deferred line texts into `line_texts`, in hash order."""

        def action() -> None:
            self.conn.execute(
                "INSERT OR IGNORE INTO line_texts(hash, text) "
                "SELECT hash, text FROM line_texts_pending ORDER BY hash"
            )
            self.conn.execute("DELETE FROM line_texts_pending")

        self._write(action)
        self.defer_texts = False
        self._texts_seen.clear()

    def follow_counts(self) -> None:
        """At a run's start: on an index whose rarity counts, code-word frequencies and text
        model the last run settled, follow the counts through this run's writes, so that its
        end settles only what moved; otherwise the end counts everything again."""
        settled = not self.defer_texts and self.get_meta("derived_stale") == "0"
        self.line_counts = LineCounts() if settled else None
        self.word_counts = WordCounts() if settled else None

    def refresh_derived(self) -> None:
        """Rarity and the text model after a run that wrote something (or after one that was
        interrupted): only what moved when the counts were followed, else from scratch."""
        from index.storage.text_model import refresh_text_model  # only a run that wrote needs it

        counts = self.line_counts

        def action() -> None:
            if counts is None:
                rarity.rebuild(self.conn)
            else:
                rarity.refresh(self.conn, counts.touched, counts.written)
            refresh_text_model(self.conn, full=counts is None)
            self.conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('derived_stale', '0')"
            )

        self._write(action)
        if counts is not None:
            counts.touched.clear()
            counts.written.clear()

    def add_dismissal(self, number: int, other: int, by: str | None, at: str | None) -> None:
        """One way, and backed by no GitHub fact (a script's): no label or comment takes it
        back, and a fresh index does not have it. The bot's go through `index.github.dismissals`."""
        self._write(
            lambda: self.conn.execute(
                "INSERT OR REPLACE INTO dismissals(number, other, by, at, source) "
                "VALUES (?, ?, ?, ?, 'local')",
                (number, other, by, at),
            )
        )

    # --- reading ----------------------------------------------------------------------------

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        try:
            cursor = self.conn.execute(sql, params)
            names = [d[0] for d in cursor.description or ()]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]  # type: ignore[misc]
        except sqlite3.DatabaseError as error:
            raise _translate(error, self.path) from None

    def rows(self, sql: str, params: Sequence[Any] = ()) -> Iterator[tuple[Any, ...]]:
        try:
            yield from self.conn.execute(sql, params)
        except sqlite3.DatabaseError as error:
            raise _translate(error, self.path) from None

    def changes_with_lines(self, hashes: Iterable[int]) -> Iterator[tuple[int, str, int]]:
        """(change id, side, hash) for each line row holding one of `hashes`."""
        try:
            yield from line_postings.changes_with(self.conn, hashes)
        except sqlite3.DatabaseError as error:
            raise _translate(error, self.path) from None

    def ids_where(self, change_ids: Iterable[int], where: str, params: Sequence[Any]) -> set[int]:
        """Those of `change_ids` whose `changes` row, named `c`, meets `where`."""
        ids = list(change_ids)
        found: set[int] = set()
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            found.update(
                cid
                for (cid,) in self.rows(
                    f"SELECT c.id FROM changes c WHERE c.id IN ({marks}) AND {where}",
                    [*chunk, *params],
                )
            )
        return found

    def commits_by_file_count(self) -> dict[int, list[int]]:
        """Target commits' ids by how many files each changes, ignored ones aside."""
        found: dict[int, list[int]] = {}
        for change_id, count in self.rows(
            "SELECT id, file_count FROM changes WHERE kind = 'commit' ORDER BY id"
        ):
            found.setdefault(count, []).append(change_id)
        return found

    def any_changes_exactly(self, change_ids: list[int], paths: set[str]) -> bool:
        """Whether one of these changes changes exactly these files, ignored ones aside
        (`change_ids` are those with as many files: those with one of them are checked)."""
        first = min(paths)
        for start in range(0, len(change_ids), 500):
            chunk = change_ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            having = [
                change_id
                for (change_id,) in self.rows(
                    f"SELECT change_id FROM files WHERE change_id IN ({marks}) AND path = ?",
                    [*chunk, first],
                )
            ]
            if paths in self.changed_paths(having).values():
                return True
        return False

    def landed_patches(self, patch_ids: set[str]) -> dict[str, str | None]:
        """Which of these patches a merged change in the index has (a rebased copy of it), each
        with when the first such change landed: a commit made before then is the original, and
        the landing its copy. None where one such change's landing time is unknown."""
        if not patch_ids:
            return {}
        marks = ",".join("?" * len(patch_ids))
        first: dict[str, str | None] = {}
        for patch, merged_at in self.rows(
            f"SELECT patch_id, merged_at FROM changes WHERE state = 'merged' "
            f"AND patch_id IN ({marks})",
            list(patch_ids),
        ):
            known = first.get(patch, merged_at)
            # Stored times carry their own offsets (GitHub's `Z`, git's `+02:00`): compared as
            # instants, not as text.
            first[patch] = (
                None
                if known is None or merged_at is None
                else min(known, merged_at, key=instant_or_zero)
            )
        return first

    def change_row(self, number: int) -> dict[str, Any] | None:
        found = self.query("SELECT * FROM changes WHERE number = ?", (number,))
        return dict(found[0]) if found else None

    def heads_by_number(self) -> dict[int, tuple[str | None, str]]:
        """PR number -> (indexed head sha, state), to skip PRs whose head has not moved."""
        return {
            number: (head, state)
            for number, head, state in self.rows(
                "SELECT number, head_sha, state FROM changes WHERE number IS NOT NULL"
            )
        }

    def landed_on(self, target: str) -> list[dict[str, Any]]:
        """The rows a target's history put in the index, each with its `landing` commit: its
        direct commits, the PRs that landed on it (merged, squashed, fast-forwarded, rebased),
        and the PRs read from a ref that git called merged as a target reached their head. Not
        those with imported metadata (it names a base branch): GitHub may have called them
        merged, and that is not git's to take back."""
        rows = self.query(
            f"SELECT {_LEFT_COLUMNS}, coalesce(merge_commit, sha) AS landing FROM changes "
            "WHERE (target = ? AND (kind = 'commit' OR merge_commit IS NOT NULL)) "
            "OR (kind = 'pr' AND state = 'merged' AND merge_commit IS NULL "
            "AND sha IS NOT NULL AND base_ref IS NULL)",
            (target,),
        )
        return [dict(row) for row in rows]

    def unlanded_prs_based_on(self, commits: set[str]) -> list[dict[str, Any]]:
        """The PRs with no landing whose change was read from one of these fork points."""
        wanted = sorted(commits)
        found: list[dict[str, Any]] = []
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            found += map(
                dict,
                self.query(
                    f"SELECT {_LEFT_COLUMNS} FROM changes WHERE kind = 'pr' "
                    f"AND merge_commit IS NULL AND base_sha IN ({marks})",
                    chunk,
                ),
            )
        return found

    def indexed_commits(self) -> set[str]:
        return {sha for (sha,) in self.rows("SELECT sha FROM changes WHERE sha IS NOT NULL")}

    def target_commits(self) -> set[str]:
        """The commits read from a target's first-parent line (a PR ref's head is not one)."""
        return {
            sha
            for (sha,) in self.rows(
                "SELECT sha FROM changes WHERE target IS NOT NULL AND sha IS NOT NULL"
            )
        }

    def finished_targets(self) -> list[str]:
        """The target branches whose history a run read to its end (it notes their tip)."""
        return [
            key.removeprefix("target:")
            for (key,) in self.rows("SELECT key FROM meta WHERE key LIKE 'target:%' ORDER BY key")
        ]

    def dismissals(self) -> dict[int, list[int]]:
        """PR number -> the PRs it was said to be no duplicate of, in number order."""
        found: dict[int, list[int]] = {}
        rows = self.rows("SELECT DISTINCT number, other FROM dismissals ORDER BY other")
        for number, other in rows:
            found.setdefault(number, []).append(other)
        return found

    def change_contents(self, change_id: int) -> dict[str, Any]:
        """What a change's diff holds, as `prdup show` prints it: its files (path, old path,
        status, why skipped), the symbols it touches, its hunk count and linked issues."""
        files = self.query(
            "SELECT path, CASE old_path WHEN '' THEN path ELSE old_path END AS old_path, status, "
            "skip_reason FROM files WHERE change_id = ? ORDER BY id",
            (change_id,),
        )
        symbols = sorted(
            {
                f"{path}::{name}"
                for path, name in self.rows(
                    "SELECT path, qualified FROM symbols WHERE change_id = ?", (change_id,)
                )
            }
        )
        hunks = next(self.rows("SELECT count(*) FROM hunks WHERE change_id = ?", (change_id,)))[0]
        issues = [
            issue
            for (issue,) in self.rows(
                "SELECT issue FROM issue_refs WHERE change_id = ? ORDER BY issue", (change_id,)
            )
        ]
        return {"files": files, "symbols": symbols, "hunks": hunks, "issues": issues}

    def map_into_memory(self, size: int) -> None:
        """Map up to `size` bytes of the file instead of reading pages through read() calls:
        thousands of lookups read the same pages (sqlite's page cache is 2 MB by default)."""
        self.conn.execute(f"PRAGMA mmap_size = {int(size)}")

    def counts(self) -> dict[str, int]:
        return {
            f"{kind}:{state}": count
            for kind, state, count in self.rows(
                "SELECT kind, state, count(*) FROM changes GROUP BY kind, state"
            )
        }


_LEFT_COLUMNS = "id, number, head_sha"  # of a row that may have left a target's history


class _Rows:
    """The child rows of a batch of changes, written a table at a time. File ids are given
    here, so a change's hunks and lines can name their file before it is written."""

    def __init__(self, next_file_id: int) -> None:
        self.next_file_id = next_file_id
        self.files: list[tuple[int, int, str, str, str, str | None]] = []
        self.hunks: list[tuple] = []
        self.line_sets: list[LineSet] = []
        self.texts: dict[int, str] = {}
        self.symbols: list[tuple[int, str, str, str, str]] = []
        self.issues: list[tuple[int, str]] = []
        self.code_words: list[tuple[int, str]] = []  # (change, its packed words)

    def add_diff(self, change_id: int, change: StoredChange) -> None:
        """Files, hunks and distinct changed lines, and the symbols the hunk headers name."""
        symbols: set[tuple[int, str, str, str, str]] = set()
        # A file cut from a huge change is among its files and its skipped files: one row, with
        # the reason. An unrenamed file's old path is stored empty (read back as its path).
        for file in change.files:
            file_id = self.next_file_id
            self.next_file_id += 1
            old_path = "" if file.old_path == file.path else file.old_path
            why = CUT if file.cut else None
            self.files.append((file_id, change_id, file.path, old_path, file.status, why))
            for hunk in file.hunks:
                self.hunks.append(
                    (
                        change_id,
                        file_id,
                        hunk.old_start,
                        hunk.old_length,
                        hunk.new_start,
                        hunk.new_length,
                        None,  # the header's text: its symbol is what anything reads
                        hunk.symbol,
                        hunk.content_hash,
                    )
                )
                if hunk.symbol:
                    kind = header_kind(file.path, hunk.section)
                    symbols.update(
                        (change_id, file.path, hunk.symbol, kind, side) for side in hunk.sides
                    )
            if file.removed:
                self.line_sets.append((change_id, file_id, "-", line_sets.pack(file.removed)))
            if file.added:
                self.line_sets.append((change_id, file_id, "+", line_sets.pack(file.added)))
        for path, why in change.skipped_files:
            if why == CUT:
                continue  # its row is written above
            file_id = self.next_file_id
            self.next_file_id += 1
            self.files.append((file_id, change_id, path, "", "ignored", why))
        self.symbols.extend(symbols)
        self.texts.update(change.texts)

    def forget(self, change_id: int) -> None:
        """Drop the rows gathered for a change saved again in the same batch."""
        for name in ("files", "hunks", "line_sets", "symbols", "issues", "code_words"):
            column = 1 if name == "files" else 0  # where the row names its change
            rows = getattr(self, name)
            if any(row[column] == change_id for row in rows):
                setattr(self, name, [row for row in rows if row[column] != change_id])

    def write(self, store: IndexStore) -> None:
        conn = store.conn
        conn.executemany(
            "INSERT INTO files(id, change_id, path, old_path, status, skip_reason) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            self.files,
        )
        conn.executemany(
            "INSERT INTO hunks(change_id, file_id, old_start, old_length, new_start, "
            "new_length, section, symbol, content_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            self.hunks,
        )
        line_sets.write(conn, self.line_sets)
        line_postings.add(conn, line_sets.expand(self.line_sets))
        if store.line_counts is not None:
            store.line_counts.add(conn, line_sets.expand(self.line_sets))
        store.save_line_texts(self.texts)
        conn.executemany(
            "INSERT INTO symbols(change_id, path, qualified, kind, side) VALUES (?, ?, ?, ?, ?)",
            self.symbols,
        )
        conn.executemany("INSERT INTO issue_refs(change_id, issue) VALUES (?, ?)", self.issues)
        conn.executemany(
            "INSERT INTO change_words(change_id, words) VALUES (?, ?)",
            [(change_id, squeeze(packed)) for change_id, packed in self.code_words],
        )
        if store.word_counts is not None:
            store.word_counts.add(conn, self.code_words)
