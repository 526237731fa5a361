"""What the index derives from the changes it holds: rarity (`line_df`, `rarity_sums`), the
text model (`text_docs`, `term_tf`, `text_norms`, `term_idf`) and the code model (`change_words`,
`code_word_df`, `code_terms`); and the counts that follow a run's writes (`follow_counts`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from index.storage import line_sets, rarity
from index.storage.line_sets import LineSet
from index.storage.packed import pack_counts, packed_words, squeeze, unpack_counts, unsqueeze
from index.storage.rarity import LineCounts
from index.storage.word_counts import WordCounts

if TYPE_CHECKING:
    from collections.abc import Iterable

    from index.storage.index_file import IndexFile
    from index.storage.line_rows import LineRows

# What is emptied with the changes (the words' frequencies stay until a run counts them again).
_DERIVED_TABLES = (
    "change_words",
    "code_terms",
    "line_df",
    "rarity_sums",
    "text_docs",
    "term_tf",
    "text_norms",
    "term_idf",
)


class DerivedRows:
    """`store.derived`: writes and reads the derived tables, on the store's connection and in
    its transactions."""

    def __init__(self, file: IndexFile, lines: LineRows) -> None:
        self.file = file
        self.conn = file.conn
        self.lines = lines  # whether a first run defers its texts: it counts at its end
        # Set by `follow_counts` when a run starts on an index whose derived counts are
        # settled: they then follow each write, and the run's end settles only what moved.
        self.line_counts: LineCounts | None = None
        self.word_counts: WordCounts | None = None

    def count_lines(self, sets: list[LineSet]) -> None:
        """Inside a transaction: follow the line sets of changes just written."""
        if self.line_counts is not None:
            self.line_counts.add(self.conn, line_sets.expand(sets))

    def add_code_words(self, code_words: list[tuple[int, str]]) -> None:
        """Inside a transaction: the words of changes just written, (change, its packed words)."""
        self.conn.executemany(
            "INSERT INTO change_words(change_id, words) VALUES (?, ?)",
            [(change_id, squeeze(packed)) for change_id, packed in code_words],
        )
        if self.word_counts is not None:
            self.word_counts.add(self.conn, code_words)

    def forget(self, change_id: int) -> None:
        """Inside a transaction, before its lines are deleted: uncount a change and drop its
        words. The text model's rows stay: its refresh tells a changed or deleted text by its
        digest."""
        if self.line_counts is not None:
            self.line_counts.remove(self.conn, change_id)
        if self.word_counts is not None:
            self.word_counts.remove(self.conn, [change_id])
        for table in ("change_words", "code_terms"):
            self.conn.execute(f"DELETE FROM {table} WHERE change_id = ?", (change_id,))

    def clear(self) -> None:
        """Inside a transaction: drop what was derived from every change."""
        for table in _DERIVED_TABLES:
            self.conn.execute(f"DELETE FROM {table}")

    def stop_following(self) -> None:
        """Count everything anew at the run's end (nothing is left to follow)."""
        self.line_counts = self.word_counts = None

    def follow_counts(self) -> None:
        """At a run's start: on an index whose rarity counts, code-word frequencies and text
        model the last run settled, follow the counts through this run's writes, so that its
        end settles only what moved; otherwise the end counts everything again."""
        settled = not self.lines.defer_texts and self.file.get_meta("derived_stale") == "0"
        self.line_counts = LineCounts() if settled else None
        self.word_counts = WordCounts() if settled else None

    def refresh(self) -> None:
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

        self.file.write(action)
        if counts is not None:
            counts.touched.clear()
            counts.written.clear()

    def changes_without_code_words(self) -> list[int]:
        """Changes whose words were never counted (new, or re-read since)."""
        return [
            row[0]
            for row in self.conn.execute(
                "SELECT id FROM changes WHERE words_counted = 0 ORDER BY id"
            )
        ]

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

        self.file.write(action)

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

    def all_code_words(self) -> Iterator[tuple[int, dict[str, int]]]:
        """(change id, its word counts) for every change with words, in id order."""
        for change_id, words in self.conn.execute(
            "SELECT change_id, words FROM change_words ORDER BY change_id"
        ):
            yield change_id, unpack_counts(unsqueeze(words))

    def replace_all_code_terms(self, rows: Iterable[tuple[int, str, float]]) -> None:
        """Every change's vector at once (rows may be a generator reading this index)."""

        def action() -> None:
            self.conn.execute("DELETE FROM code_terms")
            self.conn.executemany(
                "INSERT INTO code_terms(change_id, word, weight) VALUES (?, ?, ?)", rows
            )

        self.file.write(action)

    def replace_code_terms(
        self, change_ids: Sequence[int], rows: Sequence[tuple[int, str, float]]
    ) -> None:
        self.file.write(
            lambda: self._replace_rows("code_terms", ("word", "weight"), change_ids, rows)
        )

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
            self.file.write(lambda: counts.settle(self.conn))

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

        self.file.write(action)
