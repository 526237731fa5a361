"""A change's lines: their packed sets (`line_sets`), the lookup by hash (`line_changes`) and
their normalised texts (`line_texts`, and `line_texts_pending` while a first run defers them)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from index.storage import line_postings, line_sets
from index.storage.line_sets import LineSet
from index.storage.schema import create_lookup_indexes, drop_lookup_indexes

if TYPE_CHECKING:
    from index.storage.index_file import IndexFile

_TEXTS_SEEN_LIMIT = 2_000_000  # line hashes remembered while deferring texts (~150 MiB)


class LineRows:
    """`store.lines`: writes and reads the line tables, on the store's connection and in its
    transactions."""

    def __init__(self, file: IndexFile) -> None:
        self.file = file
        self.conn = file.conn
        self.defer_texts = False  # a first run appends line texts, merged at its end
        self._texts_seen: set[int] = set()

    def add(self, sets: list[LineSet], texts: dict[int, str]) -> None:
        """Inside a transaction: the line sets of changes just written, and their texts."""
        line_sets.write(self.conn, sets)
        line_postings.add(self.conn, line_sets.expand(sets))
        self._save_texts(texts)

    def forget(self, change_id: int) -> None:
        """Inside a transaction: drop a change's lines (their texts stay, shared by hash)."""
        line_postings.remove(self.conn, change_id)
        self.conn.execute("DELETE FROM line_sets WHERE change_id = ?", (change_id,))

    def clear(self) -> None:
        """Inside a transaction: drop every line, its lookup by hash and its text."""
        for table in ("line_sets", "line_texts", "line_changes"):
            self.conn.execute(f"DELETE FROM {table}")

    def prepare_lookup_indexes(self) -> None:
        """Before a run. On an empty index, drop the lookup indexes and defer line texts:
        `build_lookup_indexes` sorts them in once at the end, several times cheaper than
        growing them batch by batch. On any other, finish what an interrupted first run left."""
        empty = self.conn.execute("SELECT 1 FROM changes LIMIT 1").fetchone() is None
        if empty:

            def action() -> None:
                drop_lookup_indexes(self.conn)
                line_postings.mark_pending(self.conn)

            self.file.write(action)
            self.defer_texts = True
        else:
            self.build_lookup_indexes()

    def build_lookup_indexes(self) -> None:
        """Create whatever lookup index is missing and merge deferred line texts (nothing to
        do unless this is, or follows, a first run)."""
        self.merge_texts()
        self.file.write(lambda: create_lookup_indexes(self.conn))

    def merge_texts(self) -> None:
        """Move deferred line texts into `line_texts`, in hash order."""

        def action() -> None:
            self.conn.execute(
                "INSERT OR IGNORE INTO line_texts(hash, text) "
                "SELECT hash, text FROM line_texts_pending ORDER BY hash"
            )
            self.conn.execute("DELETE FROM line_texts_pending")

        self.file.write(action)
        self.defer_texts = False
        self._texts_seen.clear()

    def _save_texts(self, texts: dict[int, str]) -> None:
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

    def texts_of(self, change_ids: Sequence[int]) -> dict[int, dict[int, str]]:
        """Each change's distinct changed lines, by hash, with their normalised text."""
        hashes: dict[int, list[int]] = {cid: [] for cid in change_ids}
        for cid, _, _, line_hash in line_sets.rows_of(self.conn, list(change_ids)):
            hashes[cid].append(line_hash)
        texts = self.texts({h for found in hashes.values() for h in found})
        return {cid: {h: texts[h] for h in found if h in texts} for cid, found in hashes.items()}

    def texts(self, hashes: Iterable[int]) -> dict[int, str]:
        """The normalised text of each of these line hashes the index knows."""
        wanted = list(hashes)
        found: dict[int, str] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            found.update(
                self.file.rows(f"SELECT hash, text FROM line_texts WHERE hash IN ({marks})", chunk)
            )
        return found

    def rows_of(
        self, change_ids: Sequence[int], only: set[int] | frozenset[int] | None = None
    ) -> list[tuple[int, int, str, int]]:
        """Every line row (change id, file id, side, hash) of these changes, in that order; with
        `only`, the rows of those hashes alone, by hash first. These are the orders the rows
        came in from the table of a row per line and its index on (hash, change): sets built
        from them iterate as they did, so equal weights keep their order in the reasons."""
        with self.file.translated():
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

    def lookup_is_built(self) -> bool:
        """Whether `changes_with` reads the lookup by hash (in `line_postings.lookup_order`),
        not every line set (an interrupted first run's index)."""
        with self.file.translated():
            return not line_postings.is_pending(self.conn)

    def sets_of(self, change_ids: Sequence[int]) -> Iterator[tuple[int, int, str, list[int]]]:
        """`rows_of(change_ids)` a file and side at a time: (change id, file id, side, its
        hashes in the order `rows_of` gives them)."""
        with self.file.translated():
            for change_id, file_id, side, blob in line_sets.sets_of(self.conn, change_ids):
                yield change_id, file_id, side, sorted(line_sets.hashes_in(blob))

    def changes_with(self, hashes: Iterable[int]) -> Iterator[tuple[int, str, int]]:
        """(change id, side, hash) for each line row holding one of `hashes`."""
        with self.file.translated():
            yield from line_postings.changes_with(self.conn, hashes)
