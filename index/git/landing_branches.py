"""The branches PRs land on: what `prdup index` reads as targets when nobody names them.

A PR lands on the branch it was opened against, and a maintained branch other than the default
one (a release line that takes backports, a `develop` branch merged into `master` at each
release, a `v0.x` line) has PRs of its own. GitHub's metadata names those branches
(`baseRefName` of merged PRs). Without it, git holds the same evidence: PR landings on a
branch's own first-parent line, the part the default branch does not hold (GitHub's
`Merge pull request #N`, a `(#N)` squash, a merge tool's subject). A branch needs
`MIN_LANDINGS` of them: a line maintainers land PRs on, not a feature branch that took a
stacked PR or two; one is enough for a branch named as a release line (`1.4.x`,
`tokio-1.47.x`), which its name says maintainers keep.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

import git

from detector.signals import is_release_line
from index.git import gitsource
from index.metadata import BRANCH_SYNC, PullMetadata, landing_pr

MIN_LANDINGS = 5


@dataclass(frozen=True, slots=True)
class LandingBranch:
    """A branch read as a target by default, and why."""

    name: str
    landings: int
    evidence: str  # "metadata": merged PRs name it as their base; "history": landings on it

    @property
    def why(self) -> str:
        if self.evidence == "metadata":
            return f"base of {self.landings} merged PRs"
        return f"{self.landings} PR landing{'' if self.landings == 1 else 's'} of its own"


def landing_branches(
    repo: git.Repo, default: str, metadata: Iterable[PullMetadata] = ()
) -> list[LandingBranch]:
    """The branches besides `default` that PRs land on, most landings first."""
    tips = _branch_tips(repo)
    tips.pop(default, None)
    if not tips:
        return []
    named = Counter(
        meta.base_ref
        for meta in metadata
        if meta.state == "merged" and meta.base_ref and meta.base_ref in tips
    )
    named.pop(default, None)
    if named:
        counts, evidence = named, "metadata"
    else:
        counts, evidence = _landings_of_own(repo, tips, default), "history"
    found = [LandingBranch(name, n, evidence) for name, n in counts.items() if n >= _needed(name)]
    return sorted(found, key=lambda branch: (-branch.landings, branch.name))


def _needed(name: str) -> int:
    """Landings that make a branch a line PRs land on: one for a branch named as a release
    line (`1.4.x`, `tokio-1.47.x`: its name says maintainers keep it), else `MIN_LANDINGS`."""
    return 1 if is_release_line(name) else MIN_LANDINGS


def _branch_tips(repo: git.Repo) -> dict[str, str]:
    """Branch name -> tip, a remote's copy (origin, then upstream) over a local branch, as
    `gitsource.target_branch` reads a target."""
    tips: dict[str, str] = {}
    prefixes = [f"refs/remotes/{remote}/" for remote in reversed(gitsource.REMOTES)]
    for prefix in ("refs/heads/", *prefixes):  # later ones win
        output = repo.git.for_each_ref("--format=%(refname) %(objectname)", prefix)
        for line in output.splitlines():
            ref, sha = line.split()
            name = ref.removeprefix(prefix)
            if name != "HEAD":
                tips[name] = sha
    return tips


def _landings_of_own(repo: git.Repo, tips: dict[str, str], default: str) -> Counter[str]:
    """How many PR landings each branch's first-parent line holds that neither the default
    branch nor a branch with more of them holds: one `git log` over every branch, without
    diffs. A branch cut from a release line (a bot's backport branch, a fix in progress)
    carries the line's landings below its fork; they count once, for the line."""
    branch = gitsource.target_branch(repo, default)
    default_tip = branch.tip if branch else default
    process = repo.git.log(
        "--format=%H %P%x1f%s", *dict.fromkeys(tips.values()), "--not", default_tip,
        as_process=True,
    )  # fmt: skip
    commits: dict[str, tuple[str | None, int | None]] = {}
    for raw in process.stdout:
        ids, _, subject = raw.decode("utf-8", "replace").rstrip("\n").partition("\x1f")
        sha, *parents = ids.split()
        commits[sha] = (parents[0] if parents else None, _landed_pr(subject, len(parents)))
    process.wait()
    pr_heads = _pr_heads(repo)
    held: dict[str, dict[str, int]] = {}  # branch -> its landing commits -> the PR each lands
    length: dict[str, int] = {}
    for name, tip in tips.items():
        line: dict[str, int] = {}
        at: str | None = tip
        steps = 0
        while at in commits:
            parent, number = commits[at]
            # A commit naming the PR whose head this branch is, is that PR's own work (a
            # branch pushed for an open PR, its commits titled after it), not a landing.
            if number is not None and number not in pr_heads.get(tip, ()):
                line[at] = number
            at = parent
            steps += 1
        if line:
            held[name], length[name] = line, steps
    counts: Counter[str] = Counter()
    claimed: set[str] = set()
    # Most landings first; of two lines with the same ones, the one without commits of its own
    # above them (a release line, not a branch cut from its tip). A PR landed in several
    # commits is one landing.
    for name in sorted(held, key=lambda name: (-len(held[name]), length[name], name)):
        own = {number for sha, number in held[name].items() if sha not in claimed}
        if own:
            counts[name] = len(own)
        claimed |= held[name].keys()
    return counts


def _pr_heads(repo: git.Repo) -> dict[str, set[int]]:
    """PR head commit -> the PRs whose head it is."""
    heads: dict[str, set[int]] = {}
    for number, pull in gitsource.pull_head_refs(repo).items():
        heads.setdefault(pull.head, set()).add(number)
    return heads


def _landed_pr(subject: str, parents: int) -> int | None:
    """The PR a commit lands, by its subject, if it is a landing."""
    number, how = landing_pr(subject)
    if number is None or BRANCH_SYNC.match(subject):
        return None
    return number if how != "merge-commit" or parents > 1 else None
