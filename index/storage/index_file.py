"""The index file: opening it safely, its transactions and its `meta` table."""

from __future__ import annotations

import contextlib
import functools
import os
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Self

from index.errors import (
    IndexCorrupt,
    IndexDiskFull,
    IndexLocked,
    IndexMissing,
    IndexReadOnly,
    NotAnIndex,
)
from index.storage.file_holders import processes_holding
from index.storage.schema import SCHEMA_VERSION, foreign_tables, migrate, recorded_version


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


CACHE_KIB = 256 * 1024


class IndexFile:
    """An open index file: its connection, transactions and `meta` table, which the parts of
    `IndexStore` write and read their tables through. Writers hold WAL mode, so `check` can
    read while `index` writes."""

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

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get_meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self.write(
            lambda: self.conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value)
            )
        )

    @property
    def schema_version(self) -> int:
        return int(self.get_meta("schema_version") or 0)

    def finished_targets(self) -> list[str]:
        """The target branches whose history a run read to its end (it notes their tip)."""
        return [
            key.removeprefix("target:")
            for (key,) in self.rows("SELECT key FROM meta WHERE key LIKE 'target:%' ORDER BY key")
        ]

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

    def write(self, action: Callable[[], Any]) -> Any:
        """Run `action`'s writes in a transaction of their own, or in the batch that is open."""
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

    @contextlib.contextmanager
    def translated(self) -> Iterator[None]:
        """Reading: SQLite's errors become the index's (locked, damaged...)."""
        try:
            yield
        except sqlite3.DatabaseError as error:
            raise _translate(error, self.path) from None

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

    def map_into_memory(self, size: int) -> None:
        """Map up to `size` bytes of the file instead of reading pages through read() calls:
        thousands of lookups read the same pages (sqlite's page cache is 2 MB by default)."""
        self.conn.execute(f"PRAGMA mmap_size = {int(size)}")
