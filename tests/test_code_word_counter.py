"""The index's code-word counter gives `most_used(count_words(lines))`, word for word: it only
cuts lines into identifiers another way (`bytes.translate`, then each identifier once)."""

from __future__ import annotations

from pathlib import Path

from detector.code_words import count_words, most_used
from detector.model import line_hash
from index.storage.code_model import code_word_counter

TRICKY = [
    "def resolve_offload(config): return config.enable_cpu_offload",
    "Config config CONFIG configValue value",  # one token from several identifiers of a line
    "getHTTPResponse parseURL2Json XMLHttpRequest",
    "12ab a1b2 9x x9y_2z 007 1 22 333abc",
    "__init__ a__b _private_name CONSTANT_NAME x_y_z the_fix fix_the",
    "café_au_lait naïveWord Ünïcode_name straße_x",  # non-ASCII letters break identifiers
    "tab\tseparated\xa0nbsp\u2003em\x0bvt",
    "the and fix pr a an",  # stop words only
    "a b c d",  # one-letter words only
    "",
    "x_1 1_x _ __ ___a___b___",
    "\udcff lone surrogate_here",
    "mixed_Case_snake MixedCase_Snake",
]


def _own_source_lines() -> list[str]:
    """Every distinct normalised line of prdup's own Python sources: real code of every kind."""
    lines: dict[str, None] = {}
    root = Path(__file__).resolve().parents[1]
    for path in sorted([*root.glob("*/*.py"), *root.glob("index/*/*.py")]):
        for line in path.read_text().splitlines():
            lines.setdefault(" ".join(line.split()), None)
    return list(lines)


def _by_hash(lines: list[str]) -> dict[int, str]:
    """A change's lines as the index holds them: by line hash."""
    return {line_hash(line): line for line in lines}


def test_tricky_lines_give_the_words_and_counts_count_words_gives():
    counter = code_word_counter()
    for size in range(1, len(TRICKY) + 1):
        lines = TRICKY[:size]
        assert counter(_by_hash(lines)) == most_used(count_words(lines)), lines
    assert counter({}) == most_used(count_words([])) == []


def test_real_code_gives_the_words_and_counts_count_words_gives():
    lines = _own_source_lines()
    assert len(lines) > 2000
    counter = code_word_counter()
    small_cache = code_word_counter(line_cache=150)  # emptied again and again
    for start in range(0, len(lines), 97):  # changes of every size, caches warm and cold
        chunk = lines[start : start + 1 + start % 400]
        expected = most_used(count_words(chunk))
        assert counter(_by_hash(chunk)) == expected
        assert small_cache(_by_hash(chunk)) == expected


def test_a_large_change_keeps_the_most_used_words_ties_by_word():
    """More distinct words than a change stores: the cut falls inside a run of equal counts."""
    lines = [f"alpha{i} beta{i % 7} common_word" for i in range(2000)]
    counter = code_word_counter()
    expected = most_used(count_words(lines))
    assert len(expected) < len(count_words(lines))
    assert counter(_by_hash(lines)) == expected
