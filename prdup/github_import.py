"""`prdup index --github OWNER/REPO`: pull-request metadata from GitHub's API, incrementally.

GitHub lists pull requests most recently updated first, so each import asks only for those
updated since the newest one the previous import saw (a watermark in the index's `meta` table);
the client stops paging at the first older one.

An import is only half of the job: the indexer writes the titles and states afterwards. If that
run fails or is interrupted, the PRs it should have updated must not be lost behind the
watermark, so each import remembers what it handed over (`...:pending`) and the next import
checks the index reflects it; if not, it lists again from the oldest PR still missing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from index import gitsource
from index.config import Settings, load_settings
from index.metadata import PullMetadata
from index.store import IndexStore
from prdup.comment import dismiss_labelled, has_not_duplicate_label, index_path
from prdup.github import GitHubClient, PullRequestMeta


def watermark_key(github_repo: str) -> str:
    return f"github:{github_repo}:updated_since"


def imported_repository(repo_path: str | Path, db_path: str | Path | None) -> str | None:
    """The GitHub repository whose metadata `prdup index --github` imported into this index."""
    path = index_path(repo_path, db_path)
    if not path.exists():
        return None
    with IndexStore(path, create=False) as store:
        rows = store.query(
            "SELECT key FROM meta WHERE key LIKE 'github:%:updated_since' ORDER BY key"
        )
    names = [row["key"].removeprefix("github:").removesuffix(":updated_since") for row in rows]
    return names[0] if len(names) == 1 else None  # several: the user must say which


def pending_key(github_repo: str) -> str:
    return f"github:{github_repo}:pending"


def pull_metadata(pull: PullRequestMeta) -> PullMetadata:
    """GitHub's view of a PR as the indexer takes it (linked issues come from the body there)."""
    return PullMetadata(
        number=pull.number,
        title=pull.title,
        body=pull.body or None,
        state=pull.state,  # GitHubClient already says "merged" for a closed PR with merged_at
        created_at=pull.created_at,
        closed_at=pull.closed_at,
        merged_at=pull.merged_at,
        head_sha=pull.head_sha,
        base_ref=pull.base_ref,
        author=pull.author,
    )


def _reflected(row: dict[str, Any] | None, title: str, state: str) -> bool:
    """The index shows this PR as the import described it (git's "merged" beats GitHub's state)."""
    if row is None:
        return False
    return row["title"] == title and (row["state"] == state or row["state"] == "merged")


def _resume_point(store: IndexStore, github_repo: str) -> str | None:
    """Where to list from: the watermark, or earlier if the last import never reached the index."""
    since = store.get_meta(watermark_key(github_repo))
    pending = json.loads(store.get_meta(pending_key(github_repo)) or "[]")
    missing = [
        updated_at
        for number, updated_at, title, state in pending
        if updated_at and not _reflected(store.change_row(number), title, state)
    ]
    return min(missing) if missing else since


def _remember(store: IndexStore, github_repo: str, pulls: Iterable[PullRequestMeta]) -> None:
    pulls = list(pulls)
    stamps = [p.updated_at for p in pulls if p.updated_at]
    previous = store.get_meta(watermark_key(github_repo))
    if stamps:
        # ISO 8601 in UTC with a "Z" (GitHub's format) sorts as text.
        newest = max([*stamps, previous] if previous else stamps)
        store.set_meta(watermark_key(github_repo), newest)
    pending = [[p.number, p.updated_at, p.title, p.state] for p in pulls]
    store.set_meta(pending_key(github_repo), json.dumps(pending))


def import_metadata(
    github_repo: str,
    repo_path: str | Path,
    db_path: str | Path | None,
    *,
    client: GitHubClient | None = None,
    settings: Settings | None = None,
) -> dict[int, PullMetadata]:
    """Pull requests updated since the last import, as metadata for `index_repository`.

    The token and API URL come from the environment (see :class:`GitHubClient`); pass `client`
    to configure it otherwise (tests turn its throttles off). A PR labelled
    ``prdup: not a duplicate`` has what prdup reports for it recorded as dismissed.
    """
    client = client or GitHubClient(github_repo)
    repo = gitsource.open_repository(repo_path)
    path = index_path(repo_path, db_path)
    with IndexStore(path) as store:
        since = _resume_point(store, github_repo)
        pulls = list(client.list_pulls(updated_since=since))
        _remember(store, github_repo, pulls)
    labelled = [p for p in pulls if has_not_duplicate_label(p.labels)]
    if labelled:
        if settings is None:
            work_tree = None if repo.bare else Path(repo.working_tree_dir or repo_path)
            settings = load_settings(work_tree)
        for pull in labelled:
            dismiss_labelled(repo_path, path, pull.number, settings, at=pull.updated_at)
    return {pull.number: pull_metadata(pull) for pull in pulls}
