"""Words of titles, bodies and commit messages, split the same way at index and query time."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from functools import lru_cache

WORD = re.compile(r"[A-Za-z][A-Za-z0-9]+|\d{2,}")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
SNAKE = re.compile(r"[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+")
STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "from",
        "has",
        "have",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "not",
        "of",
        "on",
        "or",
        "so",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "this",
        "to",
        "was",
        "were",
        "when",
        "where",
        "which",
        "will",
        "with",
        "use",
        "used",
        "using",
        "fix",
        "fixed",
        "fixes",
        "fixing",
        "add",
        "added",
        "adds",
        "adding",
        "update",
        "updated",
        "updates",
        "remove",
        "removed",
        "removes",
        "make",
        "makes",
        "made",
        "should",
        "can",
        "could",
        "would",
        "pr",
        "pull",
        "request",
        "merge",
        "merged",
        "branch",
        "issue",
        "issues",
        "also",
        "more",
        "some",
        "all",
        "any",
        "new",
        "now",
        "only",
        "just",
        "when",
        "via",
    ]
)


def tokenize(text: str) -> list[str]:
    """Lower-cased words and their camelCase / snake_case parts, minus words every PR uses."""
    tokens: list[str] = []
    for word in WORD.findall(text or ""):
        rest = word[1:]
        # A camelCase boundary needs a capital after the first letter; most words have none.
        parts = [p for p in _CAMEL.split(word) if p] if rest != rest.lower() else ()
        for token in {word, *parts} if len(parts) > 1 else (word,):
            lowered = token.lower()
            if len(lowered) > 1 and lowered not in STOP_WORDS:
                tokens.append(lowered)
    tokens += tokenize_snakes(SNAKE.findall(text or ""))
    return tokens


# Where a title says which part it changes, not what: "[Form] ...", "fix($aria): ...",
# "docs: ...". Two titles tagged alike name a component, not one purpose.
_TAGS = re.compile(r"^\s*(?:\[[^\]]*\]\s*|[\w$.\-/]{1,30}(?:\([^)]*\))?!?:\s+)")


def subject_words(title: str) -> set[str]:
    """The words of a title's subject: its tags ("[Form]", "fix(scope):") taken off first,
    and numbers (the "37" of a version range names no thing)."""
    rest = title or ""
    while (tag := _TAGS.match(rest)) is not None and tag.end() < len(rest):
        rest = rest[tag.end() :]
    return {word for word in tokenize(rest) if not word.isdigit()}


def rare_subject_words(
    title: str,
    frequency: Mapping[str, int],
    documents: int,
    share: float,
    named: Iterable[str],
) -> frozenset[str]:
    """The words of a title's subject that name something of the change (a word of its
    paths or changed lines: "license" for LICENSE, "outerHTML" for the code that reads it)
    and that at most `share` of the indexed PR texts use (and never fewer than 5, as a rare
    line is rare): what the change is about, not a component every other PR names ("form")
    nor a word of the title's prose ("correct")."""
    limit = max(5, share * documents)
    rare = {w for w in subject_words(title) if 0 < frequency.get(w, 0) <= limit}
    if not rare:
        return frozenset()
    # A word a text yields is a piece of it, lower-cased: only the texts that hold a rare word
    # as such are worth tokenizing (most of a change's lines hold none).
    holding = [text for text in named if any(word in text.lower() for word in rare)]
    return frozenset(rare & set(tokenize("\n".join(holding))))


def shared_subject(rare_title_words: frozenset[str], title: str) -> tuple[str, ...]:
    """The rare subject words of one title (`rare_subject_words`) that another title names."""
    if not rare_title_words:
        return ()
    return tuple(sorted(rare_title_words & _kept_subject_words(title)))


@lru_cache(maxsize=4096)
def _kept_subject_words(title: str) -> frozenset[str]:
    """`subject_words`, kept by title: a sweep asks it of each candidate's title for every PR
    that has it as a candidate (a fifth of measuring a pair's signals)."""
    return frozenset(subject_words(title))


def tokenize_snakes(snakes: list[str]) -> list[str]:
    """The whole snake_case names among a text's tokens (their parts are words already)."""
    return [lowered for lowered in (snake.lower() for snake in snakes) if lowered not in STOP_WORDS]


def weigh(text: str, idf: Mapping[str, float], top: int = 40) -> dict[str, float]:
    """An L2-normalised tf-idf vector of `text` under a fitted vocabulary, unknown words dropped."""
    counts = Counter(t for t in tokenize(text) if t in idf)
    raw = {term: (1 + math.log(n)) * idf[term] for term, n in counts.items()}
    # Ties by term, so a vector does not depend on the order words were first seen in.
    best = dict(sorted(raw.items(), key=lambda kv: (-kv[1], kv[0]))[:top])
    norm = math.sqrt(sum(v * v for v in best.values())) or 1.0
    return {term: value / norm for term, value in best.items()}


def cosine(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    if len(a) > len(b):
        a, b = b, a
    return sum(value * b.get(term, 0.0) for term, value in a.items())
