"""Count the identifiers of every change's changed lines, once per change, at index time.

Only changes whose words were never counted are read, so a run that adds one PR reads one PR;
an index built before words existed is filled on its next run.
"""

from __future__ import annotations

import heapq
import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from detector.code_words import WORDS_PER_CHANGE, code_vector, inverse_frequencies
from detector.text import SNAKE, WORD, tokenize, tokenize_snakes
from index.store import IndexStore

_BATCH = 400
_CACHE_LIMIT = 400_000  # tokenised runs of each kind kept
REWEIGH_GROWTH = 1.1
# bytes.translate tables: every byte but ASCII letters and digits (and "_" for snake_case names)
# becomes a space, so `split()` gives the runs `WORD` and `SNAKE` can match in (no match spans
# another character); a non-ASCII character was encoded as "?" first. Newlines stay: they part
# a change's lines.
_WORD_BYTES = bytes(c if chr(c).isalnum() and c < 128 or c == 10 else 32 for c in range(256))
_SNAKE_BYTES = bytes(c if c == 95 else _WORD_BYTES[c] for c in range(256))


class _RunTokens(dict[bytes, tuple[str, ...]]):
    """The tokens `tokenize` finds in one run of letters and digits, once per distinct run."""

    def __missing__(self, run: bytes) -> tuple[str, ...]:
        if len(self) >= _CACHE_LIMIT:
            self.clear()
        words = WORD.findall(run.decode("ascii"))
        tokens = self[run] = tuple(dict.fromkeys(t for word in words for t in tokenize(word)))
        return tokens


class _SnakeTokens(dict[bytes, tuple[str, ...]]):
    """The snake_case names `tokenize` finds in one run of letters, digits and underscores."""

    def __missing__(self, run: bytes) -> tuple[str, ...]:
        if len(self) >= _CACHE_LIMIT:
            self.clear()
        found = SNAKE.findall(run.decode("ascii")) if b"_" in run else []
        tokens = self[run] = tuple(tokenize_snakes(found))
        return tokens


def code_word_counter() -> Callable[[Iterable[str]], list[tuple[str, int]]]:
    """`most_used(count_words(lines))` for a change's distinct lines, the same words and counts
    several times faster: `tokenize`'s regular expressions run once per distinct identifier,
    and a line is cut into identifiers by `bytes.translate` and `split` (a repository's lines
    are many, its identifiers few). The caches live as long as the counter."""
    run_tokens = _RunTokens().__getitem__
    snake_tokens = _SnakeTokens().__getitem__
    from_iterable = itertools.chain.from_iterable

    def line_tokens(runs: list[bytes]) -> set[str]:
        return set(from_iterable(map(run_tokens, set(runs))))

    def most_used_words(lines: Iterable[str]) -> list[tuple[str, int]]:
        # Normalised lines hold no newline: the change's lines are cut as one text.
        text = "\n".join(lines).encode("ascii", "replace")
        per_line = list(
            map(line_tokens, map(bytes.split, text.translate(_WORD_BYTES).split(b"\n")))
        )
        if b"_" in text:
            for tokens, line in zip(
                per_line, text.translate(_SNAKE_BYTES).split(b"\n"), strict=True
            ):
                if b"_" in line:
                    tokens.update(from_iterable(map(snake_tokens, set(line.split()))))
        counts = Counter(from_iterable(per_line))
        return heapq.nsmallest(WORDS_PER_CHANGE, counts.items(), key=lambda kv: (-kv[1], kv[0]))

    return most_used_words


def fill_code_words(store: IndexStore, counted: Sequence[int] = ()) -> int:
    """Store the words of every change that lacks them, recount their document frequency and
    weigh the vectors of those and of `counted` (changes whose words were stored as they were
    written); returns how many changes were read here."""
    pending = store.changes_without_code_words()
    most_used_words = code_word_counter()
    for start in range(0, len(pending), _BATCH):
        batch = pending[start : start + _BATCH]
        store.save_code_words(
            {
                cid: most_used_words(lines.values())
                for cid, lines in store.line_texts_of(batch).items()
            }
        )
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
