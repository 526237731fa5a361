"""Group the open backlog's duplicates and name the PR to keep: pure, over the matcher's findings.

The sweep matches every open PR with `detector.matcher.match`, the same function `check` uses;
this module only reads its verdicts. Groups never chain: a PR joins a group only when it has a
deciding link (duplicate, covered, already-merged, at or above the threshold) with the group's
kept PR *and* with every other member, so A~B and B~C never put unrelated A and C together.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from detector.evidence import DECIDING_VERDICTS, OPEN_STATES, ChangeEvidence

SAME_CHANGE = DECIDING_VERDICTS - {"partly-merged"}


@dataclass(frozen=True, slots=True)
class Pull:
    """A PR as grouping sees it: enough to rank which one to keep."""

    number: int
    state: str  # "merged" | "open" | "closed" | "unmerged"
    changed_lines: int = 0


@dataclass(frozen=True, slots=True)
class Link:
    """One finding of the matcher: open PR `query` against another PR or a direct commit."""

    query: int
    candidate: int | None  # None: a direct commit on the target, named by `commit`
    verdict: str
    score: float
    candidate_state: str = "open"
    commit: str | None = None

    def decides(self, min_score: float) -> bool:
        """The same change: a PR that is only partly done needs a rebase, not closing, so it
        joins no group."""
        return self.verdict in SAME_CHANGE and self.score >= min_score


@dataclass(frozen=True, slots=True)
class Group:
    """PRs that all make the same change; `members[0]` is `keep`, the others can be closed."""

    keep: int
    members: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class AlreadyDone:
    """An open PR whose change a merged PR (or a direct commit) already put on the target."""

    pr: int
    by: int | None
    commit: str | None
    score: float


def keep_rank(pull: Pull) -> tuple[bool, int, int]:
    """Sort key, best first: merged, then the most complete (most changed lines), then oldest."""
    return (pull.state != "merged", -pull.changed_lines, pull.number)


def strong_ties(links: Iterable[Link], min_score: float) -> dict[int, dict[int, float]]:
    """Undirected deciding links, each pair with its best score."""
    ties: dict[int, dict[int, float]] = {}
    for link in links:
        other_end = link.candidate
        if other_end is None or other_end == link.query or not link.decides(min_score):
            continue
        for one, other in ((link.query, other_end), (other_end, link.query)):
            best = ties.setdefault(one, {})
            best[other] = max(best.get(other, 0.0), link.score)
    return ties


def group_duplicates(
    pulls: Mapping[int, Pull], links: Iterable[Link], min_score: float
) -> list[Group]:
    """Cliques of deciding links, each around the best PR to keep; no PR is closed twice.

    PRs are taken in keep order. Each one not yet placed keeps a group of the unplaced PRs tied
    to it and to every member so far (strongest tie first). Those left over, tied to the keep
    but not to the others (B contains both A and C), form further groups around the same keep.
    """
    ties = strong_ties(links, min_score)
    known = [number for number in ties if number in pulls]
    placed: set[int] = set()
    groups: list[Group] = []
    for keep in sorted(known, key=lambda n: keep_rank(pulls[n])):
        if keep in placed:
            continue
        tied = ties[keep]
        pool = sorted(
            (n for n in tied if n in pulls and n not in placed),
            key=lambda n: (-tied[n], keep_rank(pulls[n])),
        )
        while pool:
            members = [keep]
            for number in pool:
                if all(other in ties[number] for other in members):
                    members.append(number)
            if len(members) == 1:
                break
            groups.append(Group(keep, tuple(members)))
            placed.update(members)
            pool = [n for n in pool if n not in placed]
    return sorted(groups, key=lambda g: (-len(g.members), keep_rank(pulls[g.keep])))


def already_done(
    links: Iterable[Link], pulls: Mapping[int, Pull], min_score: float
) -> list[AlreadyDone]:
    """Open PRs the matcher calls already-merged against a merged change: they can be closed."""
    best: dict[int, Link] = {}
    for link in links:
        if link.verdict != "already-merged" or link.score < min_score:
            continue
        query = pulls.get(link.query)
        if query is None or query.state not in OPEN_STATES or link.candidate_state != "merged":
            continue
        current = best.get(link.query)
        if current is None or _order(link, pulls) < _order(current, pulls):
            best[link.query] = link
    return [
        AlreadyDone(pr=number, by=link.candidate, commit=link.commit, score=link.score)
        for number, link in sorted(best.items())
    ]


def _order(link: Link, pulls: Mapping[int, Pull]) -> tuple[float, bool, tuple[bool, int, int]]:
    """Best first: the higher score; on a tie, the PR a group would keep; a bare commit last."""
    pull = pulls.get(link.candidate) if link.candidate is not None else None
    rank = keep_rank(pull) if pull is not None else (True, 0, 0)
    return (-link.score, pull is None, rank)


def shares_code(query: ChangeEvidence, candidate: ChangeEvidence) -> bool:
    """Whether the pair shares code: the same patch or a changed line on the same side.

    Without a target probe, `decide.verdict` gives a deciding verdict only to pairs that do
    (its rules and its score threshold alike); a replay can also prove a pair that shares only
    a file and its names (`index.candidates.could_decide` says which pairs the sweep matches).
    """
    return bool(
        (query.patch_id and query.patch_id == candidate.patch_id)
        or not query.removed.isdisjoint(candidate.removed)
        or not query.added.isdisjoint(candidate.added)
    )
