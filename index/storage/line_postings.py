"""Which changes hold a line hash: one row per hash, its changes packed in a blob.

`line_sets` holds a change's lines (they are read together); looking lines up by hash needs
the other direction. An SQL index on `(hash, change_id)` over a row per line repeats every line
(138 MiB of ansible/ansible's 1,145 MiB index); a row per hash whose `changes` blob holds an
entry per line row, little-endian 32-bit `change_id * 2 + (side == '+')`, takes under half of
it. An entry per file, not per change: a change that has the line in two files is found twice,
as a lookup through such an index found it, so what reads it weighs changes as before.

A first run writes none of it (`PENDING` in `meta`): its end recounts rarity from every line
set, and builds this table in the same pass, as SQLite would sort an index in. Every other
write adds or takes away its own changes' entries in its transaction, and any full recount of
rarity builds the table afresh. Whether to follow a write is read from `meta` in the writing
transaction, so a run that finishes another's first run (two `prdup index` at once) is
followed by the rest of that first run. While it is pending (an interrupted first run, before
the next `prdup index`), lookups read every line set: slower, never incomplete.
"""

from __future__ import annotations

import sqlite3
from array import array
from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import Any

from index.storage import line_sets
from index.storage.line_sets import LineRow
from index.storage.packed import pack_ints, unpack_ints

PENDING = "line_changes_pending"  # meta key: `line_changes` not built yet
_CHUNK = 500  # hashes per `IN (...)` list


def entry(change_id: int, side: str) -> int:
    return change_id * 2 + (side == "+")


def pack(entries: Iterable[int]) -> bytes:
    return pack_ints("I", entries)


def unpack(blob: bytes) -> array:
    """The entries, in the order they were written."""
    return unpack_ints("I", blob)


def is_pending(conn: sqlite3.Connection) -> bool:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (PENDING,)).fetchone()
    return bool(row and row[0] == "1")


def mark_pending(conn: sqlite3.Connection) -> None:
    """Before a first run: its writes leave the table to be built at its end."""
    conn.execute("DELETE FROM line_changes")
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, '1')", (PENDING,))


def changes_with(conn: sqlite3.Connection, hashes: Iterable[int]) -> Iterator[tuple[int, str, int]]:
    """(change id, side, hash) for each line row holding one of `hashes`."""
    wanted = list(dict.fromkeys(hashes))
    if is_pending(conn):  # one pass over every change's lines
        look_for = set(wanted)
        for change_id, _, side, line_hash in line_sets.expand(line_sets.all_sets(conn)):
            if line_hash in look_for:
                yield change_id, side, line_hash
        return
    for start in range(0, len(wanted), _CHUNK):
        chunk = wanted[start : start + _CHUNK]
        marks = ",".join("?" * len(chunk))
        for line_hash, blob in conn.execute(
            f"SELECT hash, changes FROM line_changes WHERE hash IN ({marks}) ORDER BY hash", chunk
        ):
            # In change order, as an index on (hash, change) gave them: the first change to
            # reach a score wins its ties. Entries appended by later runs come last.
            for value in sorted(unpack(blob)):
                yield value >> 1, "+" if value & 1 else "-", line_hash


def lookup_order(hashes: Iterable[int]) -> list[int]:
    """The order `changes_with` gives these hashes' rows in (once the table is built): 500 at
    a time as given, each 500 by hash."""
    wanted = list(dict.fromkeys(hashes))
    return [
        h for start in range(0, len(wanted), _CHUNK) for h in sorted(wanted[start : start + _CHUNK])
    ]


def add(conn: sqlite3.Connection, rows: Iterable[LineRow]) -> None:
    """Record line rows just written (unless the table waits to be built)."""
    if is_pending(conn):
        return
    by_hash: dict[int, list[int]] = defaultdict(list)
    for change_id, _, side, line_hash in rows:
        by_hash[line_hash].append(entry(change_id, side))
    conn.executemany(
        "INSERT INTO line_changes(hash, changes) VALUES (?, ?) "
        "ON CONFLICT(hash) DO UPDATE SET changes = CAST(changes || excluded.changes AS BLOB)",
        [(h, pack(sorted(found))) for h, found in by_hash.items()],
    )


def remove(conn: sqlite3.Connection, change_id: int) -> None:
    """Take a change's entries away, before its line sets are deleted (unless the table waits
    to be built)."""
    if is_pending(conn):
        return
    hashes = list(line_sets.hashes_of(conn, [change_id]))
    gone = {entry(change_id, "-"), entry(change_id, "+")}
    kept: list[tuple[bytes, int]] = []
    emptied: list[tuple[int]] = []
    for start in range(0, len(hashes), _CHUNK):
        chunk = hashes[start : start + _CHUNK]
        marks = ",".join("?" * len(chunk))
        for line_hash, blob in conn.execute(
            f"SELECT hash, changes FROM line_changes WHERE hash IN ({marks})", chunk
        ).fetchall():
            left = [value for value in unpack(blob) if value not in gone]
            if left:
                kept.append((pack(left), line_hash))
            else:
                emptied.append((line_hash,))
    conn.executemany("UPDATE line_changes SET changes = ? WHERE hash = ?", kept)
    conn.executemany("DELETE FROM line_changes WHERE hash = ?", emptied)


def rebuild(conn: sqlite3.Connection) -> None:
    """Build the table from the line sets (an index from before it)."""
    keys, values, starts, _ = sorted_entries(
        conn.execute("SELECT change_id, side, hashes FROM line_sets")
    )
    write_sorted(conn, (keys, values, starts))


def sorted_entries(sets: Iterable[tuple[int, str, bytes]]) -> tuple[Any, Any, Any, Any]:
    """Every line row of these sets (change id, side, packed hashes) as an entry, sorted by
    hash then entry: (hashes, entries, where each hash's entries start, and where each row
    was in the sets' order), numpy arrays."""
    import numpy

    sets = list(sets)
    sizes = numpy.fromiter((len(blob) // 8 for *_, blob in sets), numpy.int64, len(sets))
    keys = numpy.frombuffer(b"".join(blob for *_, blob in sets), dtype="<i8")
    owners = numpy.fromiter(
        (entry(change_id, side) for change_id, side, _ in sets), numpy.int64, len(sets)
    )
    if len(owners) and owners.max() >= 1 << 32:
        raise ValueError("change ids beyond 2**31 do not fit the packed entries")
    values = numpy.repeat(owners, sizes).astype("<u4")
    order = numpy.lexsort((values, keys))
    keys, values = keys[order], values[order]
    starts = numpy.flatnonzero(numpy.r_[True, keys[1:] != keys[:-1]]) if len(keys) else keys
    return keys, values, starts, order


def write_sorted(conn: sqlite3.Connection, found: tuple[Any, Any, Any]) -> None:
    """The table, written afresh from `sorted_entries`."""
    import numpy

    keys, values, starts = found
    conn.execute("DELETE FROM line_changes")
    if len(keys):
        bounds = zip(starts.tolist(), numpy.r_[starts[1:], len(keys)].tolist(), strict=True)
        packed = values.tobytes()
        conn.executemany(
            "INSERT INTO line_changes(hash, changes) VALUES (?, ?)",
            zip(keys[starts].tolist(), (packed[4 * a : 4 * b] for a, b in bounds), strict=True),
        )
    conn.execute("DELETE FROM meta WHERE key = ?", (PENDING,))
