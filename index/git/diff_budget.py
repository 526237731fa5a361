"""When to stop git printing a PR's diff: once it has passed the changed lines the index keeps.

An unmerged PR past its line limit is stored cut: the files that fit keep their lines, the rest
only their names. On ansible/ansible 368 such PRs print 1.1 GB of diff from their fork points
(the other 19,440 PRs print 0.14 GB): git spent most of its time on them, and the indexer on
decoding and splitting text it would not keep. `PairBudget` follows `git diff-tree --stdin
--raw -p` as git prints it, counting the changed lines of each pair the way the stored form
counts them, and names the pair being printed as soon as it is past its limit, so that the
reader can stop git there; the files it had not printed are named from git's raw listing.

It never stops a pair the stored form would keep whole: it counts a line only where it is sure
the stored form does (a file whose path it cannot read, or that the index ignores, is not
counted; a removed line reading `-- ...` is taken for a header and not counted), so its count
is at most the stored form's, and a pair it stops is one the stored form would cut.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

# unidiff's pattern, as the stored form reads a file's header.
from unidiff.constants import RE_DIFF_GIT_HEADER

from index.git.decoding import decode_text

SHA_LINE = re.compile(rb"^([0-9a-f]{40})\n", re.MULTILINE)
# A pair's head (`diff-tree --stdin` prints it alone on a line) or a file's header.
_MARK = re.compile(rb"^(?:([0-9a-f]{40})\n|(diff --git [^\n]*))", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class ListedFile:
    """A file of a diff as git's raw listing names it."""

    status: str  # git's letter: A, D, M, R, T, ...
    old_path: str
    path: str


class PairBudget:
    """Called with each block of whole lines git prints, in order. Records in `passed`, for
    each pair whose counted lines passed its limit, the file (0 for the first file of the
    pair's diff) in which they did: what the reader keeps of that pair is the files before it,
    whatever blocks git's output came in. Returns where to stop reading (the block's end) when
    the pair still being printed has passed its limit, else None. A pair with no limit in
    `limits` is read to its end."""

    def __init__(self, limits: Mapping[str, int], is_ignored: Callable[[str], object]) -> None:
        self._limits = limits
        self._is_ignored = is_ignored
        self.passed: dict[str, int] = {}
        self._head: str | None = None
        self._limit: int | None = None
        self._count = 0
        self._file = -1  # the file of the pair being printed
        self._counting = False  # whether that file's lines count

    @property
    def stopped(self) -> str | None:
        """The pair being printed when reading stopped, if it passed its limit."""
        return self._head if self._head in self.passed else None

    def __call__(self, block: bytes) -> int | None:
        at = 0
        for found in _MARK.finditer(block):
            self._add(block, at, found.start())
            if found.group(1) is not None:  # the next pair's head
                self._head = found.group(1).decode()
                self._limit = self._limits.get(self._head)
                self._count, self._file, self._counting = 0, -1, False
            else:  # the next file of this pair
                self._file += 1
                self._counting = self._limit is not None and self._counts(found.group(2))
            at = found.end()
        self._add(block, at, len(block))
        return len(block) if self.stopped is not None else None

    def _add(self, block: bytes, start: int, end: int) -> None:
        if not self._counting or self._head in self.passed:
            return
        self._count += _changed_lines(block, start, end)
        if self._limit is not None and self._count > self._limit and self._head is not None:
            self.passed[self._head] = self._file

    def _counts(self, header: bytes) -> bool:
        """Whether the stored form counts this file's lines: it reads its path as unidiff
        does, and an ignored file's lines are not counted; a quoted path is left uncounted."""
        line = decode_text(header)
        found = None if '"' in line else RE_DIFF_GIT_HEADER.match(line)
        if found is None:
            return False
        target = found.group("target")
        return target.startswith("b/") and not self._is_ignored(target[2:])


def _changed_lines(block: bytes, start: int, end: int) -> int:
    """Lines starting with `-` or `+` in `block[start:end]`, less the `---` / `+++` headers."""
    first = (start == 0 or block[start - 1] == 10) and block.startswith((b"+", b"-"), start, end)
    if first and block.startswith((b"+++ ", b"--- "), start, end):
        first = False
    return (
        first
        + block.count(b"\n+", start, end)
        + block.count(b"\n-", start, end)
        - block.count(b"\n+++ ", start, end)
        - block.count(b"\n--- ", start, end)
    )


def kept_files(diff: bytes, files: int) -> bytes:
    """The first `files` files of a diff's text."""
    end = 0
    for _ in range(files):
        end = diff.find(b"\ndiff --git ", end + 1)
        if end < 0:
            return diff
    return diff[: end + 1] if files else b""
