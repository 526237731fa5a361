"""In how many changes each code word appears (`code_word_df`), kept up to date as a run writes.

A first run counts them all at its end (`IndexStore.rebuild_code_word_df`); a later run adds
the words of each change it writes and takes away those of each change it deletes, in the same
transaction, and `settle` drops the words no change has left: the same rows as a recount,
without reading every change's words again.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterable


class WordCounts:
    """Document frequencies of code words, followed through a run's writes."""

    def __init__(self) -> None:
        self.touched: set[str] = set()

    def add(self, conn: sqlite3.Connection, rows: Iterable[tuple[int, str, int]]) -> None:
        """Count the (change, word, count) rows just inserted: one per change and word."""
        self._apply(conn, Counter(word for _, word, _ in rows))

    def remove(self, conn: sqlite3.Connection, change_ids: Iterable[int]) -> None:
        """Uncount these changes' words, before their rows are deleted."""
        words: Counter[str] = Counter()
        for change_id in change_ids:
            words.update(
                word
                for (word,) in conn.execute(
                    "SELECT word FROM code_words WHERE change_id = ?", (change_id,)
                )
            )
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
            "INSERT OR REPLACE INTO meta(key, value) SELECT 'code_word_changes', count(*) "
            "FROM changes c WHERE EXISTS (SELECT 1 FROM code_words w WHERE w.change_id = c.id)"
        )
