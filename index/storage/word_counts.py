"""In how many changes each code word appears (`code_word_df`), kept up to date as a run writes.

A first run counts them all at its end (`DerivedRows.rebuild_code_word_df`); a later run adds
the words of each change it writes and takes away those of each change it deletes, in the same
transaction, and `settle` drops the words no change has left: the same rows as a recount,
without reading every change's words again.
"""

from __future__ import annotations

import itertools
import sqlite3
from collections import Counter
from collections.abc import Iterable

from index.storage.packed import packed_words, unsqueeze


class WordCounts:
    """Document frequencies of code words, followed through a run's writes."""

    def __init__(self) -> None:
        self.touched: set[str] = set()

    def add(self, conn: sqlite3.Connection, rows: Iterable[tuple[int, str]]) -> None:
        """Count the (change, packed words) rows just inserted."""
        self._apply(conn, Counter(itertools.chain.from_iterable(packed_words(w) for _, w in rows)))

    def remove(self, conn: sqlite3.Connection, change_ids: Iterable[int]) -> None:
        """Uncount these changes' words, before their rows are deleted."""
        words: Counter[str] = Counter()
        for change_id in change_ids:
            for (packed,) in conn.execute(
                "SELECT words FROM change_words WHERE change_id = ?", (change_id,)
            ):
                words.update(packed_words(unsqueeze(packed)))
        self._apply(conn, Counter({word: -n for word, n in words.items()}))

    def _apply(self, conn: sqlite3.Connection, steps: Counter[str]) -> None:
        self.touched |= steps.keys()
        conn.executemany(
            "INSERT INTO code_word_df(word, df) VALUES (?, ?) "
            "ON CONFLICT(word) DO UPDATE SET df = df + excluded.df",
            steps.items(),
        )

    def settle(self, conn: sqlite3.Connection) -> None:
        """Drop words no change uses any more, and count the changes that have words."""
        conn.executemany(
            "DELETE FROM code_word_df WHERE word = ? AND df <= 0", ((w,) for w in self.touched)
        )
        self.touched.clear()
        conn.execute(
            "INSERT OR REPLACE INTO meta(key, value) "
            "SELECT 'code_word_changes', count(*) FROM change_words"
        )
