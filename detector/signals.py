"""Measure how two changes relate: line containment by side, patches, hunks, symbols, text."""

from __future__ import annotations

from detector.evidence import ChangeEvidence, LineWeights, Signals
from detector.text import cosine


def _share(part: set[int] | frozenset[int], whole: frozenset[int], weights: LineWeights) -> float:
    total = weights.sum(whole)
    return weights.sum(part) / total if total else 0.0


def _overlap(mine: frozenset, theirs: frozenset) -> float:
    return len(mine & theirs) / len(mine) if mine else 0.0


def measure(query: ChangeEvidence, candidate: ChangeEvidence, weights: LineWeights) -> Signals:
    """All signals between the query and one candidate; direction matters throughout."""
    shared_removed = query.removed & candidate.removed
    shared_added = query.added & candidate.added
    query_lines = _tagged(query)
    candidate_lines = _tagged(candidate)
    shared = query_lines & candidate_lines
    undone = {h for h in query.added & candidate.removed} | {
        h for h in query.removed & candidate.added
    }
    return Signals(
        removed_in_candidate=_share(shared_removed, query.removed, weights),
        added_in_candidate=_share(shared_added, query.added, weights),
        candidate_removed_here=_share(shared_removed, candidate.removed, weights),
        candidate_added_here=_share(shared_added, candidate.added, weights),
        query_coverage=_tagged_share(shared, query_lines, weights),
        candidate_coverage=_tagged_share(shared, candidate_lines, weights),
        reverts=_share(undone, query.added | query.removed, weights),
        same_patch=bool(query.patch_id and query.patch_id == candidate.patch_id),
        hunk_overlap=_overlap(query.hunks, candidate.hunks),
        file_overlap=_overlap(query.files, candidate.files),
        symbol_overlap=_overlap(query.symbols, candidate.symbols),
        shared_issue=bool(query.issues & candidate.issues),
        text_similarity=cosine(query.terms, candidate.terms),
    )


def _tagged(change: ChangeEvidence) -> set[tuple[str, int]]:
    return {("-", h) for h in change.removed} | {("+", h) for h in change.added}


def _tagged_share(
    part: set[tuple[str, int]], whole: set[tuple[str, int]], weights: LineWeights
) -> float:
    total = sum(weights(h) for _, h in whole)
    return sum(weights(h) for _, h in part) / total if total else 0.0
