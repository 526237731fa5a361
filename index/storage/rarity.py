"""Rarity: in how many changes each line hash is removed, or added, and each change's weight.

`check` weighs a line by `ln((N + 1) / (df + 1)) + 0.05` (`detector.evidence.LineWeights`), N
the indexed changes and df the larger of its two per-side change counts (`line_df`): a line one
change added and two removed is in two changes' worth of evidence, not three (its introduction
is expected). It reads each change's total per side (`changes.removed_weight`,
`added_weight`) instead of its lines. A first run counts everything at its end (`rebuild`).
Afterwards the counts follow the writes (`LineCounts`, called in the transaction that adds or
deletes a change's lines) and `refresh` settles only what moved: the hashes those changes
touched and the sums of the changes holding one whose df changed.

A change's total is kept as its line count and its summed `ln(df + 1)` per side, the sum in
fixed point (`SCALE`): integers add and subtract exactly, so a sum moved line by line equals
one counted afresh, and `weigh_all` turns them into weights for the current N
(`rows * (ln(N + 1) + 0.05) - sum / SCALE`, the same total up to rounding).
"""

from __future__ import annotations

import math
import sqlite3
from collections import Counter
from collections.abc import Iterable
from typing import Any

from index.storage import line_postings, line_sets
from index.storage.line_sets import LineSet

SCALE = 4294967296.0  # 2**32: ln(df + 1) to within 1e-10 per line, sums far below 2**63


_WHOLE_TABLE = 100_000  # distinct hashes beyond which all of line_df is read at once


def _fixed(df: str) -> str:
    """SQL for `ln(df + 1)` in fixed point."""
    return f"CAST(round(ln({df} + 1) * {SCALE}) AS INTEGER)"


def _fixed_log(df: int) -> int:
    """`_fixed` in Python: C's log, as SQLite's ln, rounded half away from zero as `round`."""
    return math.floor(math.log(df + 1) * SCALE + 0.5)


def _save_sums(conn: sqlite3.Connection, sets: list[LineSet]) -> None:
    """Each change's line count and summed `ln(df + 1)` per side over these line sets (every
    set of each change given), for the lines whose hash `line_df` counts."""
    import numpy

    sets = [item for item in sets if item[3]]
    if not sets:
        return
    keys = numpy.frombuffer(b"".join(blob for *_, blob in sets), dtype="<i8")
    known, dfs = _document_frequencies(conn, numpy.unique(keys))
    at = numpy.minimum(numpy.searchsorted(known, keys), max(len(known) - 1, 0))
    found = known[at] == keys if len(known) else numpy.zeros(len(keys), dtype=bool)
    logs = numpy.where(found, _fixed_logs(dfs)[at] if len(known) else 0, 0)
    _insert_sums(conn, sets, found, logs)


def _fixed_logs(dfs: Any) -> Any:
    """`_fixed_log` of each df, computed once per distinct value."""
    import numpy

    distinct, which = numpy.unique(dfs, return_inverse=True)
    return numpy.array([_fixed_log(int(df)) for df in distinct], dtype=numpy.int64)[which]


def _insert_sums(conn: sqlite3.Connection, sets: list[LineSet], found: Any, logs: Any) -> None:
    """`_save_sums` given, in the order of the sets' hashes, whether `line_df` counts each
    line and its fixed-point log."""
    import numpy

    sizes = numpy.fromiter((len(blob) // 8 for *_, blob in sets), numpy.int64, len(sets))
    logs = logs.astype(numpy.int64)
    starts = numpy.r_[0, numpy.cumsum(sizes)[:-1]]
    counted = numpy.add.reduceat(found.astype(numpy.int64), starts).tolist()
    summed = numpy.add.reduceat(logs, starts).tolist()
    totals: dict[int, list[int]] = {}
    for (change_id, _, side, _), rows, log in zip(sets, counted, summed, strict=True):
        total = totals.setdefault(change_id, [0, 0, 0, 0])
        total[side == "+"] += rows
        total[2 + (side == "+")] += log
    conn.executemany(
        "INSERT INTO rarity_sums(change_id, removed_rows, added_rows, removed_log, added_log) "
        "VALUES (?, ?, ?, ?, ?)",
        [(cid, *total) for cid, total in totals.items() if total[0] + total[1]],
    )


def _document_frequencies(conn: sqlite3.Connection, hashes: Any) -> tuple[Any, Any]:
    """`line_df` for these (sorted, distinct) hashes, as sorted hash and df arrays."""
    import numpy

    if len(hashes) > _WHOLE_TABLE:
        rows = conn.execute("SELECT hash, df FROM line_df ORDER BY hash").fetchall()
    else:
        rows = []
        wanted = hashes.tolist()
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows += conn.execute(
                f"SELECT hash, df FROM line_df WHERE hash IN ({marks})", chunk
            ).fetchall()
        rows.sort()
    known = numpy.fromiter((h for h, _ in rows), numpy.int64, len(rows))
    dfs = numpy.fromiter((df for _, df in rows), numpy.int64, len(rows))
    return known, dfs


def rebuild(conn: sqlite3.Connection) -> None:
    """Count everything from the line sets, the lines by hash included (a first run, or
    counts not to be trusted): one sort of every line row gives the lines by hash, each
    hash's per-side change counts and each line's df."""
    import numpy

    sets = [item for item in line_sets.all_sets(conn) if item[3]]
    keys, values, starts, order = line_postings.sorted_entries(
        (change_id, side, blob) for change_id, _, side, blob in sets
    )
    line_postings.write_sorted(conn, (keys, values, starts))
    conn.execute("DELETE FROM line_df")
    conn.execute("DELETE FROM rarity_sums")
    if len(keys):
        # Each (hash, change, side) once: a change holding the line in two files has two
        # entries, next to each other once sorted.
        first = numpy.r_[True, (keys[1:] != keys[:-1]) | (values[1:] != values[:-1])]
        plus = (values & 1).astype(bool)
        added = numpy.add.reduceat((first & plus).astype(numpy.int64), starts)
        removed = numpy.add.reduceat((first & ~plus).astype(numpy.int64), starts)
        conn.executemany(
            "INSERT INTO line_df(hash, df, removed, added) VALUES (?, max(?2, ?3), ?2, ?3)",
            zip(keys[starts].tolist(), removed.tolist(), added.tolist(), strict=True),
        )
        sizes = numpy.diff(numpy.r_[starts, len(keys)])
        logs = numpy.empty(len(keys), dtype=numpy.int64)
        logs[order] = numpy.repeat(_fixed_logs(numpy.maximum(removed, added)), sizes)
        _insert_sums(conn, sets, numpy.ones(len(keys), dtype=bool), logs)
    weigh_all(conn)


def refresh(conn: sqlite3.Connection, touched: Iterable[int], written: Iterable[int]) -> None:
    """Settle the counts after `LineCounts` followed a run's writes: `touched` holds every
    line hash whose counts moved, `written` every change whose lines were added or deleted."""
    for table, columns in (
        ("rarity_touched", "hash INTEGER PRIMARY KEY"),
        ("rarity_written", "id INTEGER PRIMARY KEY"),
        ("rarity_moved", "hash INTEGER PRIMARY KEY, step INTEGER NOT NULL"),
    ):
        conn.execute(f"CREATE TEMP TABLE IF NOT EXISTS {table} ({columns})")
        conn.execute(f"DELETE FROM temp.{table}")
    conn.executemany("INSERT INTO temp.rarity_touched VALUES (?)", ((h,) for h in touched))
    changed = sorted(written)
    conn.executemany("INSERT INTO temp.rarity_written VALUES (?)", ((i,) for i in changed))
    # The changes left as they were keep their sums, moved by each hash whose df changed.
    conn.execute(
        "INSERT INTO temp.rarity_moved(hash, step) SELECT d.hash, "
        f"{_fixed('max(d.removed, d.added)')} - {_fixed('d.df')} "
        "FROM temp.rarity_touched t JOIN line_df d ON d.hash = t.hash "
        "WHERE max(d.removed, d.added) != d.df"
    )
    steps = dict(conn.execute("SELECT hash, step FROM temp.rarity_moved"))
    shifts: dict[int, list[int]] = {}
    for change_id, side, line_hash in line_postings.changes_with(conn, steps):
        shifts.setdefault(change_id, [0, 0])[side == "+"] += steps[line_hash]
    conn.executemany(
        "UPDATE rarity_sums SET removed_log = removed_log + ?, added_log = added_log + ? "
        "WHERE change_id = ?",
        [(removed, added, change_id) for change_id, (removed, added) in shifts.items()],
    )
    conn.execute(
        "UPDATE line_df SET df = max(removed, added) "
        "WHERE hash IN (SELECT hash FROM temp.rarity_touched)"
    )
    conn.execute(
        "DELETE FROM line_df WHERE df = 0 AND hash IN (SELECT hash FROM temp.rarity_touched)"
    )
    # The changes written are summed afresh (their rows are new, or gone).
    conn.execute("DELETE FROM rarity_sums WHERE change_id IN (SELECT id FROM temp.rarity_written)")
    _save_sums(conn, list(line_sets.sets_of(conn, changed)))
    weigh_all(conn)


def weigh_all(conn: sqlite3.Connection) -> None:
    """Every change's weight per side for the current number of indexed changes."""
    conn.execute(
        "INSERT OR REPLACE INTO meta(key, value) "
        "SELECT 'change_count', count(*) FROM changes WHERE status = 'indexed'"
    )
    total = int(conn.execute("SELECT value FROM meta WHERE key = 'change_count'").fetchone()[0])
    conn.execute(
        "UPDATE changes SET "
        f"removed_weight = s.removed_rows * (ln(? + 1.0) + 0.05) - s.removed_log / {SCALE}, "
        f"added_weight = s.added_rows * (ln(? + 1.0) + 0.05) - s.added_log / {SCALE} "
        "FROM rarity_sums s WHERE s.change_id = changes.id",
        (total, total),
    )
    conn.execute(
        "UPDATE changes SET removed_weight = 0, added_weight = 0 "
        "WHERE id NOT IN (SELECT change_id FROM rarity_sums) "
        "AND (removed_weight IS NOT 0 OR added_weight IS NOT 0)"
    )


class LineCounts:
    """The per-side change counts of line hashes, kept up to date as a run writes (only on an
    index whose counts are settled: a first run counts at its end instead)."""

    def __init__(self) -> None:
        self.touched: set[int] = set()  # line hashes whose counts moved
        self.written: set[int] = set()  # changes whose lines were added or deleted

    def add(self, conn: sqlite3.Connection, rows: Iterable[tuple[int, int, str, int]]) -> None:
        """Count the line rows (change, file, side, hash) just inserted."""
        self._apply(conn, rows, 1)

    def remove(self, conn: sqlite3.Connection, change_id: int) -> None:
        """Uncount a change's line rows, before they are deleted."""
        rows = list(line_sets.rows_of(conn, [change_id]))
        self.written.add(change_id)
        self._apply(conn, rows, -1)

    def _apply(
        self, conn: sqlite3.Connection, rows: Iterable[tuple[int, int, str, int]], sign: int
    ) -> None:
        # A change counts once per side for a hash, however many of its files have it.
        distinct = {(change_id, side, line_hash) for change_id, _, side, line_hash in rows}
        removed: Counter[int] = Counter()
        added: Counter[int] = Counter()
        for change_id, side, line_hash in distinct:
            (removed if side == "-" else added)[line_hash] += sign
            self.written.add(change_id)
        hashes = removed.keys() | added.keys()
        self.touched |= hashes
        conn.executemany(
            "INSERT INTO line_df(hash, df, removed, added) VALUES (?, 0, ?, ?) "
            "ON CONFLICT(hash) DO UPDATE SET removed = removed + excluded.removed, "
            "added = added + excluded.added",
            [(h, removed[h], added[h]) for h in hashes],
        )
