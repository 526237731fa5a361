"""The diff model's line normalisation: the index's line hashes depend on it exactly."""

from __future__ import annotations

import random
import re

from detector.model import line_hash, normalise_line, parse_files
from index.git import gitsource
from tests.repo_builder import RepoBuilder
from tests.test_stored_diff import _history

_WHITESPACE = [" ", "\t", "\r", "\x0b", "\x0c", "\x1c", "\x1f", "\x85", "\xa0", "\u2003", "\u3000"]
_OTHER = ["a", "(", "é", "\u200b", "\ufeff", "x = 1"]


def test_normalising_collapses_every_unicode_whitespace_like_the_regex_it_replaced():
    rng = random.Random(7)
    for _ in range(20_000):
        text = "".join(rng.choice(_WHITESPACE + _OTHER) for _ in range(rng.randrange(12)))
        assert normalise_line(text) == re.sub(r"\s+", " ", text.strip()), repr(text)


def test_reindented_lines_hash_alike():
    assert line_hash(normalise_line("\tif  x:\r")) == line_hash(normalise_line("    if x:"))


def test_a_diff_parsed_a_file_at_a_time_reads_as_parsed_whole(builder: RepoBuilder):
    """A huge diff is parsed a file at a time, each file's lines only when asked for, and a cut
    file's hunk identities read without unidiff's lines: every file reads as the whole parse
    reads it, on every kind of change git prints (renames, binary files, CRLF, a missing last
    newline, lines that look like headers, a mode change)."""
    builder = _history(builder)
    repo = gitsource.open_repository(builder.path)
    commits = list(gitsource.first_parent_log(repo, "main"))
    diffs = [c.diff for c in commits]
    root = builder.repo.git.rev_list("--max-parents=0", "HEAD")
    diffs.append(gitsource.diff_between(repo, root, builder.head()))
    for diff in diffs:
        whole, by_file = parse_files(diff), parse_files(diff, lazily=True)
        assert [f.text is not None for f in by_file] == [True] * len(by_file)
        assert [f.path for f in by_file] == [f.path for f in whole]
        assert [f.changed for f in by_file] == [f.changed for f in whole]
        assert [f.change() for f in by_file] == [f.change() for f in whole]
        assert [f.change(with_lines=False) for f in by_file] == [
            f.change(with_lines=False) for f in whole
        ]
        assert [f.hunk_ids() for f in by_file] == [
            [h.content_hash for h in f.change().hunks] for f in whole
        ]
