"""Measure how two changes relate: line containment by side, patches, hunks, symbols, text."""

from __future__ import annotations

import math
import re

from detector.decide import THRESHOLDS
from detector.evidence import OPEN_STATES, ChangeEvidence, LineWeights, Signals
from detector.replay import commonly_added
from detector.text import cosine, shared_subject

# PR numbers: duplicates are mostly opened while the original is fresh. Proximity falls by this
# much for each tenfold gap (0.94 for the PR just before, 0.6 for 99 before, 0 from 99,999),
# so "9 against 90 PRs ago" counts as much in a 500-PR repository as in a 25,000-PR one.
PROXIMITY_PER_DECADE = 0.2


def measure(
    query: ChangeEvidence,
    candidate: ChangeEvidence,
    weights: LineWeights,
    reference_number: int | None = None,
) -> Signals:
    """All signals between the query and one candidate; direction matters throughout.

    `reference_number` stands for "now" in PR numbers (the query's own number, or the newest
    indexed PR for a branch), for the proximity signal.
    """
    shared_removed, shared_added = shared_lines(query, candidate)
    removed_weight = weights.sum(shared_removed)
    added_weight = weights.sum(shared_added)
    query_removed = weights.sum(query.removed)
    query_added = weights.sum(query.added)
    their_removed = candidate.side_weight("-", weights)
    their_added = candidate.side_weight("+", weights)
    undone = ((query.added - query.kept) & (candidate.removed - candidate.kept)) | (
        (query.removed - query.kept) & (candidate.added - candidate.kept)
    )
    share = THRESHOLDS.rare_line_share
    # A bot rewriting its block again: every line this change removes, the candidate removes.
    same_removed = bool(query.removed) and _ratio(removed_weight, query_removed) >= SAME_SIDE
    resubmission = is_resubmission(query, candidate, same_removed)
    distinctive_removed = any(weights.is_rare(h, share) for h in shared_removed)
    return Signals(
        removed_in_candidate=_ratio(removed_weight, query_removed),
        added_in_candidate=_ratio(added_weight, query_added),
        candidate_removed_here=_ratio(removed_weight, their_removed),
        candidate_added_here=_ratio(added_weight, their_added),
        query_coverage=_ratio(removed_weight + added_weight, query_removed + query_added),
        candidate_coverage=_ratio(removed_weight + added_weight, their_removed + their_added),
        reverts=_ratio(weights.sum(undone), query_removed + query_added),
        same_patch=bool(query.patch_id and query.patch_id == candidate.patch_id),
        candidate_cut=candidate.truncated,
        hunk_overlap=_overlap(query.hunks, candidate.hunks),
        file_overlap=_overlap(query.files, candidate.files),
        symbol_overlap=_overlap(query.symbols, candidate.symbols),
        shared_issue=bool(query.issues & candidate.issues),
        text_similarity=cosine(query.terms, candidate.terms),
        code_similarity=cosine(query.code_terms, candidate.code_terms),
        removed_coverage=_ratio(removed_weight, query_removed + query_added),
        proximity=_proximity(reference_number, candidate.number),
        recent_overlap=_proximity(reference_number, candidate.number)
        * _ratio(removed_weight + added_weight, query_removed + query_added),
        same_author=bool(query.identities & candidate.identities),
        resubmitted=resubmission and _opened_before(query, candidate),
        resubmits=resubmission and _opened_before(candidate, query),
        regenerated=is_regenerated(query, candidate, same_removed),
        distinctive_removed=distinctive_removed,
        distinctive_shared=distinctive_removed
        or any(weights.is_rare(h, share) for h in shared_added),
        backport=is_backport(query.branch, candidate.branch),
        port=is_port(query, candidate),
        takes_over=candidate.number is not None and candidate.number in query.takes_over,
        taken_over=query.number is not None and query.number in candidate.takes_over,
        same_subject=shared_subject(query.rare_title_words, candidate.title),
        same_new_file=any(
            not commonly_added(path) for path in query.added_files & candidate.added_files
        ),
    )


def is_resubmission(
    query: ChangeEvidence, candidate: ChangeEvidence, same_removed: bool = False
) -> bool:
    """Two open PRs by one author for the same branch with the same head commit or the same
    patch, or a bot's two PRs rewriting the same lines of the same files: the same work
    proposed twice."""
    same_work = bool(
        (query.head_commit and query.head_commit == candidate.head_commit)
        or (query.patch_id and query.patch_id == candidate.patch_id)
        or (same_removed and is_bot(query.author) and rewrites_the_same_files(query, candidate))
    )
    return bool(
        same_work
        and query.identities & candidate.identities
        and query.state in OPEN_STATES
        and candidate.state in OPEN_STATES
        and query.branch == candidate.branch
    )


def is_regenerated(query: ChangeEvidence, candidate: ChangeEvidence, same_removed: bool) -> bool:
    """A bot's open PR whose every removed line the same bot's later PR, over the same files,
    removed too and landed: the bot generated that block again since (a dependency bumped
    again, a sponsor list refreshed), so this PR's version of it is stale. The new lines need
    not agree: a bump of an action pinned by commit hash changes the whole reference."""
    return bool(
        same_removed
        and is_bot(query.author)
        and query.identities & candidate.identities
        and query.state in OPEN_STATES
        and candidate.state == "merged"
        and query.branch in (None, candidate.branch)  # unknown: another line is the replay's
        and _opened_before(query, candidate)
        and rewrites_the_same_files(query, candidate)
    )


def is_bot(author: str | None) -> bool:
    """A bot's account or git name (`dependabot[bot]`, `sponsors-bot`): it rewrites what it
    generates from scratch, so its later PR over the same lines replaces the earlier one."""
    return bool(author and _BOT.search(author))


_BOT = re.compile(r"(?:\[bot\]|\bbot)$", re.IGNORECASE)


def rewrites_the_same_files(query: ChangeEvidence, candidate: ChangeEvidence) -> bool:
    """Both change exactly the same files (and the candidate removes this change's lines,
    `measure` checks): a bot's block rewritten again. A candidate's evidence may hold only
    what it shares, so its file count is the index's."""
    count = candidate.file_count if candidate.file_count is not None else len(candidate.files)
    return (
        bool(query.files)
        and query.files <= candidate.files
        and count == len(query.files)
        and not (query.truncated or candidate.truncated)
    )


def _opened_before(first: ChangeEvidence, second: ChangeEvidence) -> bool:
    """`first` was opened before `second`: by PR number, which GitHub hands out in order."""
    return first.number is not None and second.number is not None and first.number < second.number


SAME_SIDE = 0.999  # a share of line weight that is all of it, floating point aside

# Branches that hold the newest line of development; release lines are named by version.
_DEVELOPMENT_BRANCHES = frozenset({"main", "master", "trunk", "develop", "development", "default"})
_RELEASE_LINE = re.compile(
    r"^(?:v|release[-/]?|rel[-/]|lts[-/]|stable[-/]|branch[-/])?"
    r"(\d+(?:[.\-_]\d+)*)(?:[.\-_]x)?$",
    re.IGNORECASE,
)
# A project's own name before a dotted version: `tokio-1.47.x`, `django-4.2` (not `fix-42`).
_NAMED_RELEASE_LINE = re.compile(r"^[a-z][a-z0-9]*[-_](\d+\.\d+(?:\.\d+)*)(?:\.x)?$", re.I)


def release_line(branch: str) -> tuple[float, ...] | None:
    """Where a branch sits in release order: `3.12`, `8.3.x`, `release-1-13`, `lts-2-8` and
    `tokio-1.47.x` by version, `main` last; None for any other name (`fix-42` is a topic, not
    release 42)."""
    if branch in _DEVELOPMENT_BRANCHES:
        return (math.inf,)
    match = _RELEASE_LINE.match(branch) or _NAMED_RELEASE_LINE.match(branch)
    if match is None:
        return None
    return tuple(float(n) for n in re.split(r"[.\-_]", match.group(1)))


def is_release_line(branch: str) -> bool:
    """Named as a maintained release line (`1.4.x`, `tokio-1.47.x`), not a development
    branch (`main`), a topic (`fix-42`), or a bare number (`26258`, `20240919`: an issue or a
    date)."""
    line = release_line(branch)
    return line is not None and line != (math.inf,) and not branch.isdigit()


def is_backport(branch: str | None, candidate_branch: str | None) -> bool:
    """This change is for an older release line than the candidate: a backport. A fix on main
    does not reach `3.12` (projects that merge fixes upwards do it the other way round: a fix
    on `2.7` reaches `2.8` and main, so that direction stays a duplicate)."""
    if not branch or not candidate_branch or branch == candidate_branch:
        return False
    mine, theirs = release_line(branch), release_line(candidate_branch)
    return mine is not None and theirs is not None and mine < theirs


# A title that says its PR carries a change to another line: "Backport #123 to 3.x", "[3.x]
# Port the offload fix", "Forward-port ...", "cherry-pick of ...".
_PORT_WORDS = re.compile(r"\b(?:(?:back|forward)[- ]?)?port(?:s|ed|ing)?\b|\bcherry[- ]?pick", re.I)


def is_port(query: ChangeEvidence, candidate: ChangeEvidence) -> bool:
    """The two are for different branches and one says it ports a change: a title that says
    so, names the other PR, or is tagged with its own branch (`[3.x] ...`). The same rewrite
    made on purpose for two release lines is a port, whichever way it goes."""
    mine, theirs = query.branch, candidate.branch
    if not mine or not theirs or mine == theirs:
        return False
    return _says_port(query, candidate) or _says_port(candidate, query)


def _says_port(change: ChangeEvidence, other: ChangeEvidence) -> bool:
    title = change.title or ""
    if _PORT_WORDS.search(title):
        return True
    if other.number is not None and re.search(rf"#{other.number}(?!\d)", title):
        return True
    branch = re.escape(change.branch or "")
    return bool(branch) and re.match(rf"\s*\[{branch}\]", title, re.I) is not None


def shared_lines(
    query: ChangeEvidence, candidate: ChangeEvidence
) -> tuple[frozenset[int], frozenset[int]]:
    """The removed and the added lines both changes share, in the same part in each.

    A line that a file's diff both removes and adds (normalised, so also re-indented) is one
    the change keeps: code moved within the file or wrapped in a new block. It matches a line
    the other change keeps too, not one the other really removes or adds: a change that moves
    a line has not made the edit of one that rewrites or deletes it.
    """
    removed = query.removed & candidate.removed
    added = query.added & candidate.added
    kept, their_kept = query.kept, candidate.kept
    if not kept and not their_kept:
        return removed, added
    return (
        frozenset(h for h in removed if (h in kept) == (h in their_kept)),
        frozenset(h for h in added if (h in kept) == (h in their_kept)),
    )


def _proximity(reference: int | None, number: int | None) -> float:
    if reference is None or number is None:
        return 0.0
    gap = max(0, reference - number)
    return max(0.0, 1.0 - PROXIMITY_PER_DECADE * math.log10(1 + gap))


def _ratio(part: float, whole: float) -> float:
    return min(1.0, part / whole) if whole > 0 else 0.0


def _overlap(mine: frozenset, theirs: frozenset) -> float:
    return len(mine & theirs) / len(mine) if mine else 0.0
