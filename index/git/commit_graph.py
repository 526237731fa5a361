"""Every commit the repository's refs reach, with its parents: ancestry asked in this process.

A sweep asks git thousands of times whether one commit is an ancestor of another (a landing
on a branch's tip, a query's head in a candidate's range), and each `git merge-base
--is-ancestor` is a process started: on a 2-core machine those starts were a sixth of a first
sweep. One `git rev-list --all --parents --topo-order` (0.1 s for tokio's 23,000 commits and
5,000 PR refs) holds the same answers: a commit is an ancestor of another exactly when a walk
down the parents reaches it. Each commit's generation (one more than its highest parent's)
stops the walk early: a commit cannot reach one of the same or a higher generation.
"""

from __future__ import annotations

import git


class CommitGraph:
    """The parents and generation of every commit reachable from a ref, by full sha. A commit
    listed here has all its ancestors listed too (the refs' whole history is read), so a walk
    between two listed commits is git's answer; about any other name this says nothing."""

    def __init__(self, parents: dict[str, tuple[str, ...]]) -> None:
        self._parents = parents
        self._generation: dict[str, int] = {}

    @classmethod
    def read(cls, repo: git.Repo) -> CommitGraph | None:
        """The graph of `repo`'s refs, or None where git cannot list it."""
        try:
            listed = repo.git.rev_list("--all", "--parents", "--topo-order")
        except git.GitCommandError:
            return None
        parents: dict[str, tuple[str, ...]] = {}
        for line in listed.splitlines():
            sha, *its_parents = line.split()
            parents[sha] = tuple(its_parents)
        graph = cls(parents)
        # --topo-order lists every commit before its parents: from the end, parents come first.
        generation = graph._generation
        for sha in reversed(parents):
            generation[sha] = 1 + max((generation.get(p, 0) for p in parents[sha]), default=0)
        return graph

    def __len__(self) -> int:
        return len(self._parents)

    def is_ancestor(self, ancestor: str, descendant: str) -> bool | None:
        """Whether `ancestor` is in `descendant`'s history (a commit is in its own, as for
        `git merge-base --is-ancestor`); None when either is not a commit listed here."""
        generation = self._generation
        lowest, highest = generation.get(ancestor), generation.get(descendant)
        if lowest is None or highest is None:
            return None
        if ancestor == descendant:
            return True
        if lowest >= highest:
            return False
        parents = self._parents
        seen = {descendant}
        walk = [descendant]
        while walk:
            for parent in parents[walk.pop()]:
                if parent == ancestor:
                    return True
                # A parent of the same or a lower generation cannot have `ancestor` behind it.
                if parent not in seen and generation.get(parent, 0) > lowest:
                    seen.add(parent)
                    walk.append(parent)
        return False
