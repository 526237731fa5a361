"""A change's changed lines: one row per file and side, its distinct line hashes in a blob.

A row per line (change, file, side, hash) cost 26 bytes of ansible/ansible's index per line,
and a tuple per line to write; a blob of 8-byte hashes per file and side costs about 10, and a
tuple per file. Lines are read a change at a time (`check` reads its candidates' lines, rarity
sums them per change); the other direction, changes by hash, is `index.storage.line_postings`.

Hashes are stored little-endian, 64-bit signed, in the order the diff gave them.
"""

from __future__ import annotations

import sqlite3
import sys
from array import array
from collections.abc import Iterable, Iterator, Sequence

from index.storage.packed import pack_ints, unpack_ints

LineRow = tuple[int, int, str, int]  # change id, file id, side, line hash
LineSet = tuple[int, int, str, bytes]  # change id, file id, side, packed hashes

_CHUNK = 500  # change ids per `IN (...)` list
_BIG_ENDIAN = sys.byteorder == "big"


def pack(hashes: Iterable[int]) -> bytes:
    return pack_ints("q", hashes)


def unpack(blob: bytes) -> array:
    return unpack_ints("q", blob)


def hashes_in(blob: bytes) -> Sequence[int]:
    """The hashes, read in place where the machine is little-endian (no copy)."""
    return unpack(blob) if _BIG_ENDIAN else memoryview(blob).cast("q")


def expand(sets: Iterable[LineSet]) -> Iterator[LineRow]:
    """A row per line of these sets."""
    for change_id, file_id, side, blob in sets:
        for line_hash in unpack(blob):
            yield change_id, file_id, side, line_hash


def sets_of(conn: sqlite3.Connection, change_ids: Sequence[int]) -> Iterator[LineSet]:
    for start in range(0, len(change_ids), _CHUNK):
        chunk = list(change_ids[start : start + _CHUNK])
        marks = ",".join("?" * len(chunk))
        yield from conn.execute(
            f"SELECT change_id, file_id, side, hashes FROM line_sets WHERE change_id IN ({marks})",
            chunk,
        )


def rows_of(conn: sqlite3.Connection, change_ids: Sequence[int]) -> Iterator[LineRow]:
    """Every line row of these changes."""
    return expand(sets_of(conn, change_ids))


def hashes_of(conn: sqlite3.Connection, change_ids: Sequence[int]) -> set[int]:
    """The distinct line hashes of these changes, either side."""
    found: set[int] = set()
    for _, _, _, blob in sets_of(conn, change_ids):
        found.update(unpack(blob))
    return found


def all_sets(conn: sqlite3.Connection) -> Iterator[LineSet]:
    return conn.execute("SELECT change_id, file_id, side, hashes FROM line_sets")


def write(conn: sqlite3.Connection, sets: Iterable[LineSet]) -> None:
    conn.executemany(
        "INSERT INTO line_sets(change_id, file_id, side, hashes) VALUES (?, ?, ?, ?)", sets
    )
