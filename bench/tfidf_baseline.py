"""The TF-IDF baseline of issue 12, scored on the same queries as prdup.

Each PR is one document: its whitespace-normalised changed lines, each prefixed with its sign
('+' or '-'), plus the lowercase words of its title. The change is the one prdup's index records
for the PR (`changes.base_sha..changes.sha` of its `kind = 'pr'` row: the PR head, or the merge
commit for a PR that landed by a merge), diffed with `git diff -U0` semantics (renames on) in one
`git diff-tree --stdin` process. A PR with no diff in the index is its title words alone.
scikit-learn's `TfidfVectorizer` with an identity analyzer, default smoothing and l2 norm is
fitted over every query and every candidate; every earlier PR (lower number) is a candidate, the
similarity is the cosine, and an alarm is a cosine of at least `ALARM`.

Run by `bench/accuracy.py`; never by tests.
"""

from __future__ import annotations

import re
import sqlite3
import subprocess
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

ALARM = 0.65
DIFF_OPTIONS = ("-p", "-U0", "-M", "--no-color", "--no-ext-diff", "--no-textconv")
_SHA = re.compile(rb"^[0-9a-f]{40}$")
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class IndexedRange:
    """The diff prdup's index holds for one PR: `git diff base end`."""

    number: int
    base: str | None
    end: str | None
    title: str


def indexed_ranges(db_path: Path, below: int) -> dict[int, IndexedRange]:
    """Every PR row of the index numbered below `below`, read-only."""
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        rows = db.execute(
            "SELECT number, base_sha, sha, title FROM changes"
            " WHERE kind = 'pr' AND number IS NOT NULL AND number < ?",
            (below,),
        ).fetchall()
    finally:
        db.close()
    return {n: IndexedRange(n, base, end, title or "") for n, base, end, title in rows}


def _diff_process(git_dir: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        ["git", "--git-dir", str(git_dir), "diff-tree", "--stdin", *DIFF_OPTIONS],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )


def stream_diffs(git_dir: Path, pairs: list[tuple[str, str]]) -> Iterator[tuple[str, bytes]]:
    """Yield (end, diff) for each (end, base) through `git diff-tree --stdin`.

    diff-tree prints each input line's first commit before that pair's diff, and nothing for an
    empty diff. A snapshot can lack a blob: git then dies inside a diff; that pair is dropped and
    a new process takes the pairs after it.
    """
    remaining = pairs
    while remaining:
        process = _diff_process(git_dir)
        assert process.stdin is not None and process.stdout is not None
        payload = "".join(f"{end} {base}\n" for end, base in remaining).encode()
        # git writes while it reads: feed from a thread so neither pipe fills up and blocks
        writer = threading.Thread(target=_feed, args=(process, payload), daemon=True)
        writer.start()
        position = {end: i for i, (end, _) in enumerate(remaining)}
        current: str | None = None
        body: list[bytes] = []
        for raw in process.stdout:
            line = raw.rstrip(b"\n")
            if len(line) == 40 and _SHA.match(line):
                if current is not None:
                    yield current, b"".join(body)
                current, body = line.decode(), []
            else:
                body.append(raw)
        writer.join()
        if process.wait() == 0:
            if current is not None:
                yield current, b"".join(body)
            return
        # git died inside `current`'s diff (or before the first): go on after it
        failed = position.get(current, -1) if current is not None else -1
        remaining = remaining[failed + 1 :] if failed >= 0 else remaining[1:]


def _feed(process: subprocess.Popen[bytes], payload: bytes) -> None:
    assert process.stdin is not None
    try:
        process.stdin.write(payload)
        process.stdin.close()
    except BrokenPipeError:
        pass


def signed_lines(diff: bytes) -> list[str]:
    """The diff's changed lines, whitespace-normalised, each prefixed with its sign; no blanks."""
    tokens: list[str] = []
    for raw in diff.decode("utf-8", "replace").splitlines():
        if raw.startswith(("+++ ", "--- ")) or raw[:1] not in ("+", "-"):
            continue
        text = " ".join(raw[1:].split())
        if text:
            tokens.append(raw[0] + text)
    return tokens


def title_words(title: str) -> list[str]:
    return _WORD.findall(title.lower())


def documents(
    git_dir: Path, ranges: dict[int, IndexedRange], titles: dict[int, str], numbers: Iterable[int]
) -> dict[int, list[str]]:
    """Each PR's document: its signed changed lines plus its title's words."""
    wanted = sorted(set(numbers))
    by_end: dict[str, list[int]] = {}
    pairs: list[tuple[str, str]] = []
    for number in wanted:
        found = ranges.get(number)
        if found is None or not found.base or not found.end:
            continue
        if found.end not in by_end:
            pairs.append((found.end, found.base))
            by_end[found.end] = []
        by_end[found.end].append(number)
    lines: dict[int, list[str]] = {}
    for end, diff in stream_diffs(git_dir, pairs):
        tokens = signed_lines(diff)
        for number in by_end.get(end, []):
            lines[number] = tokens
    docs = {}
    for number in wanted:
        title = titles.get(number) or (ranges[number].title if number in ranges else "")
        docs[number] = lines.get(number, []) + title_words(title)
    return docs


@dataclass
class BaselineRanking:
    """For one query: earlier PRs by cosine, best first (ties: the newer PR first)."""

    query: int
    ranked: list[tuple[int, float]]

    def cosine_of(self, number: int) -> float:
        return next((c for n, c in self.ranked if n == number), 0.0)

    def rank_of(self, number: int) -> int | None:
        return next((i + 1 for i, (n, _) in enumerate(self.ranked) if n == number), None)


def rank_queries(docs: dict[int, list[str]], queries: list[int], keep: int = 50) -> dict:
    """Fit over every document and rank each query's earlier PRs by cosine."""
    import numpy as np
    from sklearn.feature_extraction.text import TfidfVectorizer

    numbers = sorted(docs)
    vectorizer = TfidfVectorizer(analyzer=lambda tokens: tokens)
    matrix = vectorizer.fit_transform([docs[n] for n in numbers])
    row = {n: i for i, n in enumerate(numbers)}
    order = np.array(numbers)
    rankings: dict[int, BaselineRanking] = {}
    for query in queries:
        if query not in row:
            rankings[query] = BaselineRanking(query, [])
            continue
        earlier = int(np.searchsorted(order, query))  # rows of lower numbers
        if earlier == 0:
            rankings[query] = BaselineRanking(query, [])
            continue
        cosines = (matrix[:earlier] @ matrix[row[query]].T).toarray().ravel()
        # best first; among equal cosines the newer PR first (as prdup breaks ties)
        top = np.lexsort((-order[:earlier], -cosines))[:keep]
        rankings[query] = BaselineRanking(
            query, [(int(order[i]), float(cosines[i])) for i in top if cosines[i] > 0]
        )
    return rankings
