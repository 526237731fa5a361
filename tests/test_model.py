"""The diff model's line normalisation: the index's line hashes depend on it exactly."""

from __future__ import annotations

import random
import re

from detector.model import line_hash, normalise_line

_WHITESPACE = [" ", "\t", "\r", "\x0b", "\x0c", "\x1c", "\x1f", "\x85", "\xa0", "\u2003", "\u3000"]
_OTHER = ["a", "(", "é", "\u200b", "\ufeff", "x = 1"]


def test_normalising_collapses_every_unicode_whitespace_like_the_regex_it_replaced():
    rng = random.Random(7)
    for _ in range(20_000):
        text = "".join(rng.choice(_WHITESPACE + _OTHER) for _ in range(rng.randrange(12)))
        assert normalise_line(text) == re.sub(r"\s+", " ", text.strip()), repr(text)


def test_reindented_lines_hash_alike():
    assert line_hash(normalise_line("\tif  x:\r")) == line_hash(normalise_line("    if x:"))
