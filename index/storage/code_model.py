"""Count the identifiers of every change's changed lines, once per change, at index time.

Only changes whose words were never counted are read, so a run that adds one PR reads one PR;
an index built before words existed is filled on its next run.
"""

from __future__ import annotations

import itertools
import operator
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from detector.code_words import WORDS_PER_CHANGE, code_vector, inverse_frequencies
from detector.text import SNAKE, WORD, tokenize, tokenize_snakes
from index.storage.store import IndexStore

_BATCH = 400
_CACHE_LIMIT = 400_000  # tokenised runs of each kind kept
_LINE_CACHE_LIMIT = 600_000  # lines whose words are kept (about 60 MiB)
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


def code_word_counter(
    line_cache: int = _LINE_CACHE_LIMIT,
) -> Callable[[Mapping[int, str]], list[tuple[str, int]]]:
    """`most_used(count_words(lines))` for a change's distinct lines (line hash -> text), the
    same words and counts several times faster: `tokenize`'s regular expressions run once per
    distinct identifier, a line is cut into identifiers by `bytes.translate` and `split`, and
    each line's words once per line hash. A repository's lines repeat across its changes (a
    PR's head and its landing, a line added then removed, a file moved): three in four of
    ansible's stored lines are repeats. The caches live as long as the counter."""
    run_tokens = _RunTokens().__getitem__
    snake_tokens = _SnakeTokens().__getitem__
    from_iterable = itertools.chain.from_iterable
    line_words: dict[int, tuple[str, ...]] = {}

    def line_tokens(runs: list[bytes]) -> set[str]:
        return set(from_iterable(map(run_tokens, set(runs))))

    def words_of(lines: list[str]) -> list[set[str]]:
        # Normalised lines hold no newline: the lines are cut as one text.
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
        return per_line

    def most_used_words(lines: Mapping[int, str]) -> list[tuple[str, int]]:
        known = list(map(line_words.get, lines))
        fresh = list(itertools.compress(lines, map(_is_none, known))) if None in known else []
        if fresh:
            if len(line_words) + len(fresh) > line_cache:
                line_words.clear()
            found = words_of([lines[h] for h in fresh])
            line_words.update(zip(fresh, map(tuple, found), strict=True))
        counts = Counter(from_iterable(filter(None, known)))
        if fresh:
            counts.update(from_iterable(found))
        return _most_used(counts)

    return most_used_words


def _most_used(counts: Counter[str]) -> list[tuple[str, int]]:
    """`detector.code_words.most_used` without a key call per word: sorted by word, then by
    count with a stable sort (ties keep word order), both in C; past `WORDS_PER_CHANGE`
    words, only those at least as used as the last one kept are sorted."""
    items = counts.items()
    if len(counts) > WORDS_PER_CHANGE:
        cutoff = sorted(counts.values(), reverse=True)[WORDS_PER_CHANGE - 1]
        items = [item for item in items if item[1] >= cutoff]  # type: ignore[assignment]
    return sorted(sorted(items), key=_count, reverse=True)[:WORDS_PER_CHANGE]


_count = operator.itemgetter(1)


def _is_none(value: object) -> bool:
    return value is None


def fill_code_words(store: IndexStore, counted: Sequence[int] = ()) -> int:
    """Store the words of every change that lacks them, recount their document frequency and
    weigh the vectors of those and of `counted` (changes whose words were stored as they were
    written); returns how many changes were read here."""
    pending = store.derived.changes_without_code_words()
    most_used_words = code_word_counter()
    for start in range(0, len(pending), _BATCH):
        batch = pending[start : start + _BATCH]
        store.derived.save_code_words(
            {cid: most_used_words(lines) for cid, lines in store.lines.texts_of(batch).items()}
        )
    if pending or counted or store.get_meta("derived_stale") != "0":
        store.derived.settle_code_word_df()
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
    df = store.derived.code_word_df()
    idf = inverse_frequencies(df.keys(), df, documents)
    if weigh_all:
        store.derived.replace_all_code_terms(
            (change_id, word, weight)
            for change_id, counts in store.derived.all_code_words()
            for word, weight in code_vector(counts, idf).items()
        )
        store.set_meta("code_terms_documents", str(documents))
        return
    for start in range(0, len(counted), _BATCH):
        batch = counted[start : start + _BATCH]
        rows = [
            (change_id, word, weight)
            for change_id, counts in store.derived.code_words_of(batch).items()
            for word, weight in code_vector(counts, idf).items()
        ]
        store.derived.replace_code_terms(batch, rows)
