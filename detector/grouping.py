"""Sort the open backlog into what a maintainer acts on: pure, over the matcher's findings.

The sweep matches every open PR with `detector.matcher.match`, the same function `check` uses;
this module only reads its verdicts. Each open PR's answer is the finding `check --pr N` shows
first (its first finding at or above the threshold), and that answer alone puts the PR in one
class: already done, a duplicate to close into another PR, partly done, or related work.

Groups are built by the PR to keep: a PR whose answer is "duplicate" or "covered" joins the group
of the PR it names, or, when that PR is itself closable into another, the group of the PR at the
end of that chain. Groups of PRs naming the same issue merge where a deciding link joins them.
A link below the threshold, or one that is not a claim, never puts a PR in a group.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from detector.evidence import DECIDING_VERDICTS, ChangeEvidence

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
    # The open PR of its group it duplicates, itself already done by `by`: this PR is done
    # through it (its own answer names that PR, which `check --pr N` shows first).
    through: int | None = None


def keep_rank(pull: Pull) -> tuple[bool, int]:
    """Sort key, best first, where answers do not say which PR to keep (a loop, groups joined
    by an issue): the landed one, then the earliest opened. (Answers point at the PR to keep:
    a later copy names the earlier PR, a part names the PR that holds it and more.)"""
    return (pull.state != "merged", pull.number)


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


CLOSE_INTO = frozenset({"duplicate", "covered"})
CLASSES = ("already-done", "superseded", "duplicate", "partly-done", "related")


def triage_class(verdict: str) -> str:
    """The class an answer puts its PR in (`CLASSES`, in the report's order)."""
    if verdict == "already-merged":
        return "already-done"
    if verdict == "superseded":
        return "superseded"  # a landing rewrote its lines: close it, or rebase what is wanted
    if verdict in CLOSE_INTO:
        return "duplicate"
    if verdict == "partly-merged":
        return "partly-done"
    return "related"


def answers(links: Iterable[Link], min_score: float) -> dict[int, Link]:
    """Each PR's answer: its first link at or above `min_score`, the links of each PR being in
    `check`'s order (best evidence first)."""
    first: dict[int, Link] = {}
    for link in links:
        if link.score >= min_score and link.query not in first:
            first[link.query] = link
    return first


def group_by_kept(
    pulls: Mapping[int, Pull],
    answered: Mapping[int, Link],
    links: Iterable[Link],
    issues: Mapping[int, frozenset[str]],
    min_score: float,
) -> list[Group]:
    """One group per PR to keep: each PR answered "duplicate" or "covered" with the PR at the
    end of its chain of answers; then groups of PRs that name the same issue, joined by a
    deciding link between them, as one. Largest groups first."""
    into = {
        number: link.candidate
        for number, link in answered.items()
        if link.verdict in CLOSE_INTO and link.candidate is not None and link.candidate != number
    }
    roots = {number: _root(number, into, pulls) for number in into}
    members: dict[int, set[int]] = {}
    for number, root in roots.items():
        members.setdefault(root, {root}).add(number)
    members = _merged_by_issue(members, issues, strong_ties(links, min_score), pulls)
    groups = [
        Group(keep, (keep, *sorted(found - {keep}, key=lambda n: _member_order(n, answered))))
        for keep, found in members.items()
        if len(found) > 1
    ]
    return sorted(groups, key=lambda g: (-len(g.members), _rank(pulls, g.keep)))


def _rank(pulls: Mapping[int, Pull], number: int) -> tuple[bool, int]:
    return keep_rank(pulls.get(number) or Pull(number, "open"))


def _member_order(number: int, answered: Mapping[int, Link]) -> tuple[float, int]:
    link = answered.get(number)
    return (-(link.score if link else 0.0), number)


def _root(number: int, into: Mapping[int, int], pulls: Mapping[int, Pull]) -> int:
    """Where a chain of "close into" answers ends; in a loop (A names B, B names A), the PR of
    the loop a group would keep."""
    path = [number]
    current = number
    while current in into:
        following = into[current]
        if following in path:
            loop = path[path.index(following) :]
            return min(loop, key=lambda n: _rank(pulls, n))
        path.append(following)
        current = following
    return current


def _merged_by_issue(
    members: Mapping[int, set[int]],
    issues: Mapping[int, frozenset[str]],
    ties: Mapping[int, Mapping[int, float]],
    pulls: Mapping[int, Pull],
) -> dict[int, set[int]]:
    """The groups (by the PR to keep) once merged: a member naming an issue with a deciding
    link to a member of another group in which some member names it too joins the two; the
    merged group keeps the better of their kept PRs."""
    group_of = {n: keep for keep, found in members.items() for n in found}
    naming: dict[str, set[int]] = {}
    for keep, found in members.items():
        for number in found:
            for issue in issues.get(number, ()):
                naming.setdefault(issue, set()).add(keep)
    parent = {keep: keep for keep in members}

    def find(keep: int) -> int:
        while parent[keep] != keep:
            parent[keep] = parent[parent[keep]]
            keep = parent[keep]
        return keep

    for number, keep in group_of.items():
        for issue in issues.get(number, ()):
            for other in ties.get(number, {}):
                other_keep = group_of.get(other)
                if other_keep is None or other_keep == keep or other_keep not in naming[issue]:
                    continue
                one, two = find(keep), find(other_keep)
                if one != two:
                    best, rest = sorted((one, two), key=lambda n: _rank(pulls, n))
                    parent[rest] = best
    merged: dict[int, set[int]] = {}
    for keep, found in members.items():
        merged.setdefault(find(keep), set()).update(found)
    return merged


def done_answers(answered: Mapping[int, Link]) -> list[AlreadyDone]:
    """The PRs whose answer is "already done": a merged PR or a direct commit made them."""
    return [
        AlreadyDone(pr=number, by=link.candidate, commit=link.commit, score=link.score)
        for number, link in sorted(answered.items())
        if link.verdict == "already-merged"
    ]


def done_through_kept(
    groups: Iterable[Group], answered: Mapping[int, Link], pulls: Mapping[int, Pull]
) -> tuple[list[Group], list[AlreadyDone]]:
    """The groups still to act on, and the members of the others as already done: a group
    whose kept PR landed, or whose kept PR is itself already done, is done, all of it (its
    members duplicate a change the target holds; "keep #K" would keep a PR to close)."""
    kept: list[Group] = []
    done: list[AlreadyDone] = []
    for group in groups:
        own = answered.get(group.keep)
        pull = pulls.get(group.keep)
        by: int | None
        commit: str | None
        through: int | None
        if pull is not None and pull.state == "merged":
            by, commit, through, score = group.keep, None, None, 1.0
        elif own is not None and own.verdict == "already-merged":
            by, commit, through, score = own.candidate, own.commit, group.keep, own.score
        else:
            kept.append(group)
            continue
        for number in group.members[1:]:
            link = answered.get(number)
            named = link is not None and link.candidate == by
            done.append(
                AlreadyDone(
                    pr=number,
                    by=by,
                    commit=link.commit if named and link is not None else commit,
                    score=min(score, link.score) if link is not None else score,
                    through=None if named else through,
                )
            )
    return kept, done


def shares_code(query: ChangeEvidence, candidate: ChangeEvidence) -> bool:
    """Whether the pair shares code: the same patch or a changed line on the same side.

    Without a target probe, `decide.verdict` gives a deciding verdict only to pairs that do
    (its rules and its score threshold alike); a replay can also prove a pair that shares only
    a file and its names (`index.questions.candidates.could_decide` says which pairs the sweep
    matches).
    """
    return bool(
        (query.patch_id and query.patch_id == candidate.patch_id)
        or not query.removed.isdisjoint(candidate.removed)
        or not query.added.isdisjoint(candidate.added)
    )
