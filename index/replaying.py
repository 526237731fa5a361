"""Read what a replay needs from git: the query's files at its base, and before and after each
candidate; and where the candidate sits in history relative to the query.

The comparison itself is pure (`detector.replay`); this module only reads blobs through one
`git cat-file --batch` process and asks git about ancestry, for the few candidates that can
decide.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import git

from detector.evidence import ChangeEvidence, Proof
from detector.model import Change, FileChange
from detector.replay import FileVersions, Replay, replay
from index import gitsource

MAX_FILE_BYTES = 2_000_000
MAX_FILES = 60  # a change of more files is replayed on its first 60 (the rest stays residual)


@dataclass(frozen=True, slots=True)
class QueryHistory:
    """Where the query starts and ends, and the branch it is for (None when unknown)."""

    base: str | None
    head: str | None
    line_tip: str | None
    line_name: str | None
    merged: bool = False


class Replayer:
    """Replays one query change at any number of candidates, reading each blob once."""

    def __init__(self, repo: git.Repo, change: Change, history: QueryHistory) -> None:
        self._repo = repo
        self._blobs = gitsource.BlobReader(repo)
        self._history = history
        self._files = [f for f in change.files if f.hunks and f.status != "binary"][:MAX_FILES]
        self._change = Change(files=tuple(self._files))
        self._patch_id = change.patch_id
        self._base = {f.path: self._base_lines(f) for f in self._files}

    def prove(self, candidate: ChangeEvidence) -> Proof | None:
        """Replay at the candidate: its landing for a merged one, its head for an open one."""
        span = self._span(candidate)
        if span is None:
            return None
        before, after = span
        versions = {
            f.path: FileVersions(
                base=self._base[f.path],
                before=self._lines_at(before, f),
                after=self._lines_at(after, f),
            )
            for f in self._files
        }
        result = replay(self._change, versions, after)
        return self._placed(candidate, after, result)

    def _span(self, candidate: ChangeEvidence) -> tuple[str, str] | None:
        if candidate.state == "merged":
            landing = candidate.commit
            if not landing or gitsource.resolve(self._repo, f"{landing}^1", required=False) is None:
                return None  # a root commit, or one this clone does not have
            return f"{landing}^1", landing
        if candidate.base_commit and candidate.head_commit:
            return candidate.base_commit, candidate.head_commit
        return None

    def _placed(self, candidate: ChangeEvidence, after: str, result: Replay) -> Proof:
        """Ancestry matters only where the replay turned: ask git only then."""
        history = self._history
        if not (result.complete or result.partial or candidate.patch_id == self._patch_id):
            return Proof(replay=result)
        in_base = other_line = None
        carries = False
        repo = self._repo
        if candidate.state == "merged":
            if history.base:
                in_base = gitsource.is_ancestor(repo, after, history.base)
            if history.line_tip and not gitsource.is_ancestor(repo, after, history.line_tip):
                other_line = candidate.branch or "another branch"
        elif history.head:
            carries = gitsource.is_ancestor(repo, history.head, after)
        return Proof(
            replay=result,
            in_query_base=bool(in_base),
            other_line=other_line,
            carries_query=carries,
        )

    def _base_lines(self, file: FileChange) -> list[str] | None:
        if file.status == "added":
            return []
        if file.old_blob:
            data = self._blobs.read(file.old_blob, MAX_FILE_BYTES)
            if data is not None:
                return _lines(data)
        if self._history.base:
            return self._lines_at(self._history.base, file, new_path_first=False)
        return None

    def _lines_at(
        self, commit: str, file: FileChange, new_path_first: bool = True
    ) -> list[str] | None:
        paths = (file.path, file.old_path) if new_path_first else (file.old_path, file.path)
        for path in dict.fromkeys(paths):
            data = self._blobs.read(f"{commit}:{path}", MAX_FILE_BYTES)
            if data is not None:
                return _lines(data)
        return None


def _lines(data: bytes) -> list[str]:
    return data.decode("utf-8", "replace").splitlines()


def prove_all(replayer: Replayer, candidates: Iterable[ChangeEvidence]) -> dict[str, Proof]:
    """Proofs by candidate key, for those that could be replayed."""
    proofs: dict[str, Proof] = {}
    for candidate in candidates:
        proof = replayer.prove(candidate)
        if proof is not None:
            proofs[candidate.key] = proof
    return proofs


def landing_candidates(landings: Sequence, known: set[str]) -> list[ChangeEvidence]:
    """Target commits the tip probe named that the index does not hold as candidates."""
    found = []
    for landing in landings:
        key = f"#{landing.number}" if landing.number is not None else landing.commit[:10]
        if key in known:
            continue
        found.append(
            ChangeEvidence(
                key=key,
                number=landing.number,
                commit=landing.commit,
                state="merged",
                title=landing.title,
            )
        )
    return found
