"""A sweep answers ancestry from the refs' commit graph: it must be git's answer, every time.

The story: `main` moves on while PR 1 is merged (a merge commit), PR 2 is squashed, PR 3 is
still open from an older base, and PR 4 branches from PR 3. Every pair of those commits is
asked of the graph and of `git merge-base --is-ancestor`.
"""

from __future__ import annotations

from itertools import product

from index.git import gitsource
from index.git.commit_graph import CommitGraph
from index.questions import replaying
from index.questions.replaying import GitAnswers
from tests.repo_builder import RepoBuilder


def _history(builder: RepoBuilder) -> list[str]:
    builder.commit("start", {"a.py": "a = 1\n"})
    old_base = builder.commit("second", {"b.py": "b = 1\n"})
    builder.pr_branch(1, [("one", {"c.py": "c = 1\n"}), ("one more", {"c.py": "c = 2\n"})])
    builder.commit("main moves", {"a.py": "a = 2\n"})
    builder.merge_pr(1, how="merge")
    builder.pr_branch(2, [("two", {"d.py": "d = 1\n"})])
    builder.merge_pr(2, how="squash")
    builder.pr_branch(3, [("three", {"e.py": "e = 1\n"})], start=old_base)
    builder.pr_branch(4, [("four", {"f.py": "f = 1\n"})], start="refs/pull/3/head")
    return builder.git("rev-list", "--all").split()


def test_every_pair_is_gits_answer(builder: RepoBuilder) -> None:
    commits = _history(builder)
    graph = CommitGraph.read(builder.repo)
    assert graph is not None and len(graph) == len(commits)
    for ancestor, descendant in product(commits, repeat=2):
        expected = gitsource.is_ancestor(builder.repo, ancestor, descendant)
        assert graph.is_ancestor(ancestor, descendant) is expected, (ancestor, descendant)


def test_a_commit_no_ref_reaches_is_left_to_git(builder: RepoBuilder) -> None:
    commits = _history(builder)
    graph = CommitGraph.read(builder.repo)
    assert graph is not None
    # A commit made on a branch that is deleted again: git still has it, no ref reaches it.
    builder.checkout("gone", "main")
    orphan = builder.commit("dropped", {"g.py": "g = 1\n"})
    builder.checkout("main")
    builder.git("branch", "-D", "gone")
    assert graph.is_ancestor(commits[-1], orphan) is None
    assert graph.is_ancestor("not-a-sha", commits[0]) is None
    # `GitAnswers` asks git about it, after the graph is read, and gets git's answer.
    answers = GitAnswers(builder.repo)
    pairs = list(product(commits, repeat=2))[: replaying.GRAPH_AFTER + 4]
    for ancestor, descendant in pairs:
        expected = gitsource.is_ancestor(builder.repo, ancestor, descendant)
        assert answers.is_ancestor(ancestor, descendant) is expected
    main_commits = builder.git("rev-list", "main").split()
    assert all(answers.is_ancestor(sha, orphan) for sha in main_commits)
    assert not answers.is_ancestor(orphan, builder.head("main"))
