"""Count the identifiers of every change's changed lines, once per change, at index time.

Only changes whose words were never counted are read, so a run that adds one PR reads one PR;
an index built before words existed is filled on its next run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from detector.code_words import code_vector, count_words, inverse_frequencies, most_used
from detector.text import SNAKE, WORD, tokenize, tokenize_snakes
from index.store import IndexStore

_BATCH = 400
_CACHE_LIMIT = 400_000  # tokenised words kept
_LINES_CACHED = 200_000  # and lines
REWEIGH_GROWTH = 1.1


class _WordTokens(dict[str, tuple[str, ...]]):
    """A word's tokens (`tokenize` of the word alone), computed once per distinct word."""

    def __missing__(self, word: str) -> tuple[str, ...]:
        if len(self) >= _CACHE_LIMIT:
            self.clear()
        # A word alone tokenizes to its own parts: it holds no "_", so no snake_case name.
        tokens = self[word] = tuple(tokenize(word))
        return tokens


def cached_tokenizer() -> Callable[[str], frozenset[str]]:
    """`frozenset(tokenize(line))`, computed a word at a time with each word's tokens cached:
    a repository's lines are many, its identifiers few."""
    tokens_of = _WordTokens().__getitem__
    find_words = WORD.findall
    find_snakes = SNAKE.findall

    by_line: dict[str, frozenset[str]] = {}  # lines repeat: a PR and its landing, moves

    def words_of(line: str) -> frozenset[str]:
        found = by_line.get(line)
        if found is not None:
            return found
        words = set().union(*map(tokens_of, set(find_words(line))))
        if "_" in line:
            words.update(tokenize_snakes(find_snakes(line)))
        if len(by_line) >= _LINES_CACHED:
            by_line.clear()
        found = by_line[line] = frozenset(words)
        return found

    return words_of


def fill_code_words(store: IndexStore, counted: Sequence[int] = ()) -> int:
    """Store the words of every change that lacks them, recount their document frequency and
    weigh the vectors of those and of `counted` (changes whose words were stored as they were
    written); returns how many changes were read here."""
    pending = store.changes_without_code_words()
    words_of = cached_tokenizer()
    for start in range(0, len(pending), _BATCH):
        batch = pending[start : start + _BATCH]
        rows = [
            (change_id, word, n)
            for change_id, lines in store.line_texts_of(batch).items()
            for word, n in most_used(count_words(lines.values(), words_of))
        ]
        store.save_code_words(batch, rows)
    if pending or counted or store.get_meta("derived_stale") != "0":
        store.settle_code_word_df()
    weigh_code_words(store, sorted({*pending, *counted}))
    return len(pending)


def weigh_code_words(store: IndexStore, counted: list[int]) -> None:
    """Store the vectors of the changes just counted, or of all of them once the index has
    grown by a tenth since they were last all weighed: document frequencies drift as changes
    are added, and re-weighing everything on every run would cost seconds each time."""
    documents = int(store.get_meta("code_word_changes") or 0)
    weighed_at = int(store.get_meta("code_terms_documents") or 0)
    weigh_all = documents > REWEIGH_GROWTH * weighed_at
    if not counted and not weigh_all:
        return
    df = store.code_word_df()
    idf = inverse_frequencies(df.keys(), df, documents)
    if weigh_all:
        store.replace_all_code_terms(
            (change_id, word, weight)
            for change_id, counts in store.all_code_words()
            for word, weight in code_vector(counts, idf).items()
        )
        store.set_meta("code_terms_documents", str(documents))
        return
    for start in range(0, len(counted), _BATCH):
        batch = counted[start : start + _BATCH]
        rows = [
            (change_id, word, weight)
            for change_id, counts in store.code_words_of(batch).items()
            for word, weight in code_vector(counts, idf).items()
        ]
        store.replace_code_terms(batch, rows)
