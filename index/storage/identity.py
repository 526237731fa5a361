"""Which repository an index belongs to, and whether the clone it was read from holds its
whole history.

An index records the root commits of its targets' history: every clone and fork of a project
shares them, and an unrelated repository shares none. A shallow clone's history is cut: the PRs
merged before the cut are unknown, and the index says so until a deeper clone is read.
"""

from __future__ import annotations

import git

from index.errors import ForeignIndex
from index.git import gitsource
from index.storage.store import IndexStore

ROOTS = "root_commits"  # meta: the roots of the indexed history, sorted, comma-separated
CUT = "shallow_cut"  # meta: where the history read was cut (a shallow clone's boundary), or ""


def claim(repo: git.Repo, store: IndexStore, tips: list[str]) -> None:
    """Refuse an index of another repository; record this one's roots in an index that has none
    yet (a new index, or one an older prdup made: its rows are kept)."""
    if store.get_meta(ROOTS):
        refuse_foreign(repo, store)
        return
    roots = gitsource.root_commits(repo, tips)
    if roots:  # a shallow clone may reach none: the next run that does records them
        store.set_meta(ROOTS, ",".join(roots))


def refuse_foreign(repo: git.Repo, store: IndexStore) -> None:
    """Raise `ForeignIndex` when the repository holds none of the index's root commits.

    One `git cat-file --batch-check`, cheap enough for every `check`: a repository that holds a
    root commit of the index's history is a clone or fork of it. A shallow clone may lack the
    roots of its own history, so it is not refused.
    """
    roots = [sha for sha in (store.get_meta(ROOTS) or "").split(",") if sha]
    if not roots:
        return
    kinds = gitsource.object_types(repo, roots)
    if any(kinds.get(sha) == "commit" for sha in roots) or gitsource.shallow_boundary(repo):
        return
    raise ForeignIndex(
        f"{store.path} is the index of another repository: {repo.git_dir} has none of its root "
        f"commits ({roots[0][:12]}{', ...' if len(roots) > 1 else ''}); give another --db, or "
        "delete that file to index this repository there"
    )


def follow_cut(repo: git.Repo, store: IndexStore) -> list[str]:
    """Record where the clone's history is cut, and warn of what that leaves unknown.

    When the cut moved since the last run (`git fetch --unshallow` or `--deepen`), the commits
    skipped at the old cut are forgotten and the targets' history is read from its start again
    (commits already indexed are not read twice), so the PRs merged before it are found.
    """
    cut = gitsource.shallow_boundary(repo)
    earlier = [sha for sha in (store.get_meta(CUT) or "").split(",") if sha]
    if earlier and earlier != cut:
        marks = ",".join("?" * len(earlier))
        rows = store.query(
            f"SELECT id FROM changes WHERE status = 'skipped' AND sha IN ({marks})", earlier
        )
        for row in rows:
            store.changes.delete(row["id"])
        for name in store.finished_targets():
            store.set_meta(f"target:{name}", "")  # read from the root: stop at nothing
    if cut or earlier:
        store.set_meta(CUT, ",".join(cut))
    return [shallow_warning(str(repo.git_dir), len(cut))] if cut else []


def shallow_warning(where: str, cut_at: int) -> str:
    return (
        f"{where} is a shallow clone (history cut at {cut_at} commit(s)): the PRs merged before "
        "the cut are unknown, so the merged count covers only those after it and a change they "
        "already made is not found; run 'git fetch --unshallow' and index again"
    )


def cut_warnings(store: IndexStore) -> tuple[str, ...]:
    """For `check`: the index was read from a shallow clone (no git call: the index says)."""
    cut = [sha for sha in (store.get_meta(CUT) or "").split(",") if sha]
    if not cut:
        return ()
    return (
        "the index was read from a shallow clone: PRs merged before its cut are unknown to it, "
        "so a change they already made is not found; run 'git fetch --unshallow' and "
        "'prdup index'",
    )
