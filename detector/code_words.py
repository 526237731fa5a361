"""The identifiers a change's lines use, weighed like words: what it is about, in code.

Two fixes of the same bug written differently share few lines but many names: the function,
the option, the variable they both touch. Shared lines decide; these words only rank the
candidates that share no line (see `Signals.unshared_code_similarity`).
"""

from __future__ import annotations

import functools
import heapq
import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping

from detector.text import tokenize

WORDS_PER_CHANGE = 300  # stored per change: the most used; a vector keeps far fewer
TERMS_PER_VECTOR = 40


def count_words(
    lines: Iterable[str], words_of: Callable[[str], Iterable[str]] = tokenize
) -> Counter[str]:
    """In how many of the given (distinct, changed) lines each identifier appears; `words_of`
    may be a cached `tokenize` (the index reads the same lines for many changes)."""
    counts: Counter[str] = Counter()
    for line in lines:
        counts.update(set(words_of(line)))
    return counts


def most_used(counts: Counter[str]) -> list[tuple[str, int]]:
    """The words worth storing for one change, most used first (ties by word, for stability)."""
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:WORDS_PER_CHANGE]


@functools.cache
def _tf(count: int) -> float:
    return 1 + math.log(count)


def inverse_frequencies(
    words: Iterable[str], document_frequency: Mapping[str, int], documents: int
) -> dict[str, float]:
    """idf of each word among `documents` changes (an unseen word counts as in none)."""
    return {
        word: math.log((documents + 1) / (document_frequency.get(word, 0) + 1)) for word in words
    }


def code_vector(counts: Mapping[str, int], idf: Mapping[str, float]) -> dict[str, float]:
    """An L2-normalised tf-idf vector of a change's words: its `TERMS_PER_VECTOR` heaviest."""
    raw = [(word, _tf(n) * idf.get(word, 0.0)) for word, n in counts.items() if n > 0]
    best = heapq.nsmallest(TERMS_PER_VECTOR, raw, key=lambda kv: (-kv[1], kv[0]))
    norm = math.sqrt(sum(value * value for _, value in best)) or 1.0
    return {word: value / norm for word, value in best if value > 0}
