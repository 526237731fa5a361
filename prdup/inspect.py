"""`prdup show`: what the index holds for one PR, as plain data."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from index.errors import PrdupError, UnknownPullRequest
from index.git import gitsource
from index.git.rebase_landings import decode_own_commits
from index.storage import IndexStore, default_db_path


def describe_pr(repo_path: str | Path, db_path: str | Path | None, number: int) -> dict[str, Any]:
    """State, files, symbols, hunk count and patch id of PR `number` in the index."""
    if db_path is None:
        try:
            db_path = default_db_path(gitsource.open_repository(repo_path))
        except PrdupError:
            raise
    with IndexStore(db_path, create=False) as store:
        row = store.changes.row(number)
        if row is None:
            raise UnknownPullRequest(f"PR #{number} is not in the index {db_path}")
        contents = store.changes.contents(row["id"])
        part = store.landings.in_part(row["id"])
    description = {k: v for k, v in row.items() if k != "id"}
    # The PR's own commits (those no branch held when it was read), as shas.
    description["own_commits"] = [c.sha for c in decode_own_commits(row.get("own_commits"))]
    # Where some of its commits landed as copies and it did not land whole: each commit, with
    # the target commit that holds its patch, or none while it is still to do.
    description["landed_in_part"] = [
        {
            "commit": c.sha,
            "subject": c.subject,
            "files": list(c.files),
            "landed_as": c.copy,
            "target": c.target,
        }
        for c in part
    ]
    description.update(contents)
    return description
