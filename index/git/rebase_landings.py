"""PRs landed by rebase or cherry-pick: every commit of the PR's own copied onto a target.

"Rebase and merge", `git rebase` and `git cherry-pick` give each commit a new sha and
committer, but keep its author, author date and patch. So a PR's commits (those of its head
that no branch held when it was read, and that its author wrote: a branch that carries other
people's commits did not make them) are looked for among the commits of the targets' history
with the same author date, and each pair is confirmed by git's own patch identity
(`git patch-id --stable`, what `git cherry` compares), or, where the patch differs, by the same
author and subject: a commit amended as it landed (a conflict resolved while rebasing, its
context moved, a maintainer's edit) keeps all three, and its patch identity changes. A PR every
one of whose commits is on one target that way landed there; its landing is the target commit
that completes it (the last of them), and its landed change starts at the parent of the first.

Only a target commit made after the PR was opened, and after the PR's own commit, counts: an
older one with the same patch is an earlier change (as for landings by a whole-patch match),
and a backport's cherry-picks of commits already on the target are copies made from them, not
the reverse. A target commit lands one PR: where two PRs carry the same commits, the one the
copies' messages say they close (`Closes #N`), else the one whose author wrote them, else the
first opened.

A PR some of whose own commits have a copy on a target, and not all, landed there in part
(`PartLanding`): which of its commits landed, as which target commits, and which remain (those
whose patch the target does not hold). It stays unlanded; `check` names what landed and what
is still to do.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from detector.evidence import identities
from index.git.gitsource import HistoryCommit
from index.metadata import earlier, instant_or_zero, landing_pr

MAX_OWN_COMMITS = 250  # a longer branch is not one PR's work (a fork's history, a wrong base)


@dataclass(frozen=True, slots=True)
class OwnCommit:
    """A commit of a PR's own, with the dates and author its copies are found by."""

    sha: str
    authored_at: str  # kept by a rebase or cherry-pick
    committed_at: str  # a copy made from it is committed later
    author_email: str = ""
    author: str = ""


_COMMIT, _FIELD = "\x1e", "\x1f"  # no name, e-mail or date holds them


def encode_own_commits(commits: Iterable[OwnCommit]) -> str:
    """Each commit's sha, dates, e-mail and name, oldest first as given; "" for none."""
    return _COMMIT.join(
        _FIELD.join((c.sha, c.authored_at, c.committed_at, c.author_email, c.author))
        for c in commits
    )


def decode_own_commits(text: str | None) -> list[OwnCommit]:
    commits = []
    for word in (text or "").split(_COMMIT):
        sha, authored, committed, email, name = (word.split(_FIELD) + [""] * 4)[:5]
        if sha and authored:
            commits.append(OwnCommit(sha, authored, committed, email, name))
    return commits


@dataclass(frozen=True, slots=True)
class TargetCommit:
    """A commit of a target's history: a direct commit the index holds, or one off the
    first-parent line (in a branch merged into it) that only git knows."""

    change_id: int | None  # its row as a direct commit; None off the first-parent line
    sha: str
    parent: str | None
    authored_at: str
    committed_at: str | None
    target: str | None
    author: str | None = None
    author_email: str | None = None
    landed_for: int | None = None  # the PR whose landing brought it, off the first-parent line
    closes: frozenset[str] = frozenset()  # what its message says it closes: `#N`, as indexed

    @classmethod
    def from_row(cls, row: Any, closes: frozenset[str] = frozenset()) -> TargetCommit:
        """A direct commit's index row (its `created_at` is the author date, `merged_at` the
        commit date), and the issue references of its message that say it closes them."""
        return cls(
            change_id=row["id"],
            sha=row["sha"],
            parent=row["base_sha"],
            authored_at=row["created_at"],
            committed_at=row["merged_at"],
            target=row["target"],
            author=row["author"],
            author_email=row["author_email"],
            closes=closes,
        )

    @classmethod
    def from_history(cls, commit: HistoryCommit) -> TargetCommit:
        """A commit of a target's history that no row holds."""
        return cls(
            change_id=None,
            sha=commit.sha,
            parent=commit.parents[0] if commit.parents else None,
            authored_at=commit.authored_at,
            committed_at=commit.committed_at,
            target=commit.target,
            author=commit.author,
            author_email=commit.author_email,
        )


@dataclass(frozen=True, slots=True)
class UnlandedPull:
    """A PR with no known landing, and its own commits."""

    number: int
    created_at: str | None
    author: str | None
    author_email: str | None
    commits: tuple[OwnCommit, ...]


@dataclass(frozen=True, slots=True)
class RebaseLanding:
    """Where a PR's commits landed: `landing` completes it, `start` is just before the first."""

    number: int
    landing: TargetCommit
    start: str | None
    copies: tuple[TargetCommit, ...]  # every landed copy, in the target's order


@dataclass(frozen=True, slots=True)
class PartLanding:
    """A PR some of whose own commits have a copy on `target`, and not all: each of its
    commits that landed, with its copy, and each still to do (its patch is not on the target),
    with None; in the PR's order (oldest first). A commit it carries that landed by another
    PR is in neither."""

    number: int
    target: str | None
    commits: tuple[tuple[OwnCommit, TargetCommit | None], ...]

    @property
    def copies(self) -> list[tuple[OwnCommit, TargetCommit]]:
        return [(own, copy) for own, copy in self.commits if copy is not None]

    @property
    def remaining(self) -> list[OwnCommit]:
        return [own for own, copy in self.commits if copy is None]


@dataclass(frozen=True, slots=True)
class Landings:
    """What `find_landings` found: the PRs landed whole, and those landed in part."""

    whole: list[RebaseLanding]
    part: list[PartLanding]


PatchIds = Callable[[list[str]], Mapping[str, str]]
Subjects = Callable[[list[str]], Mapping[str, str]]
Carried = tuple[OwnCommit, list[TargetCommit]]  # a commit a branch carries, its possible copies


@dataclass(frozen=True, slots=True)
class _Looked:
    """A PR as looked for on the targets: its own work, the possible copies of each of its
    own commits (`options`), and the target commits with the author date of each commit it
    carries."""

    pull: UnlandedPull
    mine: UnlandedPull
    options: list[list[TargetCommit]]
    carried: list[Carried]

    @property
    def may_land_whole(self) -> bool:
        return bool(self.mine.commits) and all(self.options) and all(f for _, f in self.carried)


@dataclass(frozen=True, slots=True)
class _Identity:
    """Whether a target commit with a PR commit's author date is a copy of it: the same patch
    (`git patch-id --stable`), or the same author and subject (amended as it landed)."""

    patches: Mapping[str, str]
    subjects: Mapping[str, str]

    def same_patch(self, own: OwnCommit, copy: TargetCommit) -> bool:
        patch = self.patches.get(own.sha)
        return bool(patch) and self.patches.get(copy.sha) == patch

    def amended(self, own: OwnCommit, copy: TargetCommit) -> bool:
        subject = self.subjects.get(own.sha)
        return (
            bool(subject)
            and self.subjects.get(copy.sha) == subject
            and bool(
                identities(own.author, own.author_email)
                & identities(copy.author, copy.author_email)
            )
        )

    def same(self, own: OwnCommit, copy: TargetCommit) -> bool:
        return self.same_patch(own, copy) or self.amended(own, copy)

    def best_first(self, own: OwnCommit, found: list[TargetCommit]) -> list[TargetCommit]:
        """The copies of `own` among `found`, those with its very patch first."""
        return [c for c in found if self.same_patch(own, c)] + [
            c for c in found if not self.same_patch(own, c) and self.amended(own, c)
        ]


def find_rebase_landings(
    pulls: Iterable[UnlandedPull],
    commits: Iterable[TargetCommit],
    patch_ids: PatchIds,
    subjects: Subjects | None = None,
) -> list[RebaseLanding]:
    """The PRs all of whose own commits have a copy on a target (`find_landings`)."""
    return find_landings(pulls, commits, patch_ids, subjects).whole


def find_landings(
    pulls: Iterable[UnlandedPull],
    commits: Iterable[TargetCommit],
    patch_ids: PatchIds,
    subjects: Subjects | None = None,
) -> Landings:
    """The PRs all of whose own commits have a copy on a target (same author date, same
    patch), each target commit credited to one PR: of a branch that carries other people's
    commits, only its author's are credited to it (and the others need a copy too). Then the
    PRs only some of whose own commits have a copy (`PartLanding`). One `patch_ids` call for
    all of them."""
    by_date: dict[str, list[TargetCommit]] = {}
    for commit in commits:
        by_date.setdefault(commit.authored_at, []).append(commit)
    looked = [_look(pull, by_date) for pull in pulls]
    looked = [item for item in looked if any(item.options)]
    if not looked:
        return Landings([], [])
    wanted = {own.sha for item in looked for own in item.pull.commits}
    for item in looked:
        wanted |= {c.sha for own in item.pull.commits for c in by_date.get(own.authored_at, ())}
    identity = _Identity(patch_ids(sorted(wanted)), subjects(sorted(wanted)) if subjects else {})
    taken: set[str] = set()
    whole = _land_whole([item for item in looked if item.may_land_whole], identity, taken)
    landed = {landing.number for landing in whole}
    rest = [item for item in looked if item.pull.number not in landed]
    return Landings(whole, _land_parts(rest, by_date, identity, taken))


def _look(pull: UnlandedPull, by_date: Mapping[str, list[TargetCommit]]) -> _Looked:
    mine = _own_work(pull)
    options = [
        [
            c
            for c in by_date.get(own.authored_at, ())
            if not earlier(c.committed_at, pull.created_at)
            and not earlier(c.committed_at, own.committed_at)
            and c.landed_for in (None, pull.number)
        ]
        for own in mine.commits
    ]
    carried = [(c, by_date.get(c.authored_at, [])) for c in pull.commits if c not in mine.commits]
    return _Looked(pull, mine, options, carried)


def _land_whole(
    possible: list[_Looked], identity: _Identity, taken: set[str]
) -> list[RebaseLanding]:
    landings: list[RebaseLanding] = []
    for item in sorted(possible, key=_credit_order(identity)):
        pull, mine, options, carried = item.pull, item.mine, item.options, item.carried
        if not all(any(identity.same(own, c) for c in found) for own, found in carried):
            continue  # a carried commit is not on the target: the branch did not land whole
        copies = _copies(mine, options, identity, taken)
        if copies is None:
            continue
        taken.update(c.sha for c in copies)
        ordered = tuple(sorted(copies, key=_target_order))
        landings.append(
            RebaseLanding(
                number=pull.number, landing=ordered[-1], start=_run_start(ordered), copies=ordered
            )
        )
    return landings


def _land_parts(
    looked: list[_Looked],
    by_date: Mapping[str, list[TargetCommit]],
    identity: _Identity,
    taken: set[str],
) -> list[PartLanding]:
    """The PRs not landed whole that landed in part, each copy credited to one PR, in the
    order whole landings are (`_land_whole`)."""
    found: list[PartLanding] = []
    for item in sorted(looked, key=_credit_order(identity)):
        part = _land_part(item, by_date, identity, taken)
        if part is not None:
            taken.update(copy.sha for _, copy in part.copies)
            found.append(part)
    return sorted(found, key=lambda part: part.number)


def _land_part(
    item: _Looked,
    by_date: Mapping[str, list[TargetCommit]],
    identity: _Identity,
    taken: set[str],
) -> PartLanding | None:
    """What of a PR not landed whole has copies on one target: each own commit's first copy
    there that no landing took (on the target with the most of them), and the commits whose
    patch that target does not hold at all. None when none of its own commits, or all of its
    commits, are there."""
    by_target: dict[str | None, list[tuple[OwnCommit, TargetCommit]]] = {}
    used: set[str] = set()
    for own, found in zip(item.mine.commits, item.options, strict=True):
        on: set[str | None] = set()
        for copy in identity.best_first(own, sorted(found, key=_target_order)):
            if copy.sha in taken | used:
                continue
            if copy.target not in on:  # one copy of each commit on each target
                on.add(copy.target)
                used.add(copy.sha)
                by_target.setdefault(copy.target, []).append((own, copy))
    if not by_target:
        return None
    # The target with the most copies; among as many, the one where they landed first.
    target, copies = min(
        by_target.items(),
        key=lambda kv: (-len(kv[1]), min(instant_or_zero(c.committed_at) for _, c in kv[1])),
    )
    copy_of = {own.sha: copy for own, copy in copies}
    commits = tuple(
        (own, copy_of.get(own.sha))
        for own in item.pull.commits
        if own.sha in copy_of or not _on_target(own, target, by_date, identity)
    )
    if all(copy is not None for _, copy in commits):
        return None  # every patch is there: not this PR's landing (earlier, or another's)
    return PartLanding(item.pull.number, target, commits)


def _on_target(
    own: OwnCommit,
    target: str | None,
    by_date: Mapping[str, list[TargetCommit]],
    identity: _Identity,
) -> bool:
    """Whether `target` holds a copy of this commit (its author date, and its patch or its
    author and subject), whoever landed it."""
    return any(
        c.target == target and identity.same(own, c) for c in by_date.get(own.authored_at, ())
    )


def _credit_order(
    identity: _Identity,
) -> Callable[[_Looked], tuple[bool, bool, bool, str, int]]:
    """The PR the copies' messages say they close (`Closes #N`) first, then the one whose
    author wrote the commits, then one whose commits all have a copy with their very patch
    (over one whose copies it only names, an earlier version of the same commits amended
    since), then the first opened (as `Indexer._land_on_commits` credits a commit)."""

    def key(item: _Looked) -> tuple[bool, bool, bool, str, int]:
        exact = all(
            any(identity.same_patch(own, c) for c in found)
            for own, found in zip(item.mine.commits, item.options, strict=True)
        )
        named = f"#{item.pull.number}"
        return (
            not any(named in c.closes for found in item.options for c in found),
            not _wrote_copies(item.pull, item.options),
            not exact,
            item.pull.created_at or "",
            item.pull.number,
        )

    return key


def _run_start(ordered: tuple[TargetCommit, ...]) -> str | None:
    """Where the landed change starts: the parent of the first copy of the unbroken run of
    copies that ends at the landing. Copies with other commits between them (landed in
    several goes) would make a range that holds those commits too, which are not this PR's
    work; the landing's own run is what is replayed."""
    first = len(ordered) - 1
    while first > 0 and ordered[first].parent == ordered[first - 1].sha:
        first -= 1
    return ordered[first].parent


def _own_work(pull: UnlandedPull) -> UnlandedPull:
    """The PR with only the commits its author wrote: a branch that carries other people's
    commits (copies of theirs already landed, a stack on their PR) did not make them, and
    their copies on the target are their own PRs' landings. Where the index knows no author,
    or the author wrote none of them (a backport that a bot or a maintainer opened with
    cherry-picks, which keep the original author), all of them."""
    mine = identities(pull.author, pull.author_email)
    if not mine:
        return pull
    own = tuple(c for c in pull.commits if mine & identities(c.author, c.author_email))
    return replace(pull, commits=own) if own else pull


def _copies(
    pull: UnlandedPull,
    options: list[list[TargetCommit]],
    identity: _Identity,
    taken: set[str],
) -> list[TargetCommit] | None:
    """One target copy per own commit, with its patch, none credited before; else None."""
    chosen: list[TargetCommit] = []
    used: set[str] = set()
    for own, found in zip(pull.commits, options, strict=True):
        match = next(
            (
                c
                for c in identity.best_first(own, sorted(found, key=_target_order))
                if c.sha not in taken and c.sha not in used
            ),
            None,
        )
        if match is None:
            return None
        chosen.append(match)
        used.add(match.sha)
    targets = {c.target for c in chosen}
    return chosen if len(targets) == 1 else None  # one PR lands on one branch


def _target_order(commit: TargetCommit) -> tuple[float, int]:
    """A target's commits in the order they were made there: by commit date, then by row
    (rows are written oldest first; commits made in one second keep that order)."""
    return instant_or_zero(commit.committed_at), commit.change_id or 0


def _wrote_copies(pull: UnlandedPull, options: list[list[TargetCommit]]) -> bool:
    """Whether the PR's author wrote the commits landed (by name or e-mail): rebasing keeps
    the author, so a resubmission by someone else carrying them is not their PR."""
    mine = identities(pull.author, pull.author_email)
    return any(mine & identities(c.author, c.author_email) for found in options for c in found)


class LineMerges:
    """Which PR the merge that brought a commit's line into a target names, if any: walking up
    a commit's first-parent children (its branch) to the merge that has that branch as a
    second parent. Each line is walked once."""

    def __init__(self) -> None:
        self._line_child: dict[str, str] = {}  # a commit -> its child on the same branch
        self._merged_by: dict[str, str] = {}  # a branch tip -> the merge that took it
        self._subjects: dict[str, str] = {}
        self._memo: dict[str, int | None] = {}

    def add(self, commit: HistoryCommit) -> None:
        if commit.parents:
            self._line_child.setdefault(commit.parents[0], commit.sha)
        for parent in commit.parents[1:]:
            self._merged_by.setdefault(parent, commit.sha)
            self._subjects[commit.sha] = commit.subject

    def landing_of(self, sha: str) -> int | None:
        walked = []
        at: str | None = sha
        found: int | None = None
        while at is not None:
            if at in self._memo:
                found = self._memo[at]
                break
            walked.append(at)
            merge = self._merged_by.get(at)
            if merge is not None:
                found, _ = landing_pr(self._subjects.get(merge, ""))
                break
            at = self._line_child.get(at)
        for seen in walked:
            self._memo[seen] = found
        return found
