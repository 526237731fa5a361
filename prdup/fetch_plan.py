"""Which PR heads a CI runner must fetch before `prdup index`: only those that changed.

A runner starts from a fresh clone of the branches and the index restored from the Actions
cache. Fetching every `refs/pull/*/head` again costs minutes and hundreds of MB on a big
repository; the index already holds every PR whose head has not moved. GitHub lists pull
requests most recently updated first, so the PRs updated since the last metadata import (the
index's watermark) are the only ones whose head can have moved: of those, the PRs whose head
GitHub reports differs from the indexed one are fetched. Without an index or a watermark (a
first run) every PR head is fetched.

The replay at an open candidate's head needs that head's commits too; `check` fetches the few
it needs when they are missing (the `fetch_remote` setting), so they are not fetched here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from detector.evidence import OPEN_STATES
from index.git.gitsource import pull_head_refspec
from index.storage import IndexStore
from prdup.comment import index_path
from prdup.github import GitHubClient
from prdup.github_import import watermark_key

ALL_PULL_HEADS = "+refs/pull/*/head:refs/pull/*/head"


@dataclass(frozen=True, slots=True)
class FetchPlan:
    """The refspecs to fetch, and why: `first_run` when the index cannot say what changed."""

    refspecs: tuple[str, ...]
    first_run: bool = False
    changed: int = 0  # PRs GitHub reports updated with a head the index does not hold


def plan_fetch(
    github_repo: str,
    repo_path: str | Path = ".",
    db_path: str | Path | None = None,
    *,
    client: GitHubClient | None = None,
    always: Iterable[int] = (),
    open_prs: bool = False,
) -> FetchPlan:
    """The PR heads to fetch for this run.

    `always`: PRs to fetch whatever changed (the PR a bot run comments on: its head must be
    in the clone to check it). `open_prs`: every open PR the index knows too (a sweep checks
    each of them).
    """
    path = index_path(repo_path, db_path)
    since: str | None = None
    known: dict[int, tuple[str | None, str]] = {}
    if path.exists():
        with IndexStore(path, create=False) as store:
            if store.get_meta("change_count"):
                since = store.get_meta(watermark_key(github_repo))
                known = store.changes.heads_by_number()
    if since is None:
        return FetchPlan((ALL_PULL_HEADS,), first_run=True)
    client = client or GitHubClient(github_repo)
    changed = {
        pull.number
        for pull in client.list_pulls(updated_since=since)
        if pull.head_sha and known.get(pull.number, (None, ""))[0] != pull.head_sha
    }
    wanted = set(changed) | set(always)
    if open_prs:
        wanted |= {number for number, (_, state) in known.items() if state in OPEN_STATES}
    return FetchPlan(tuple(pull_head_refspec(n) for n in sorted(wanted)), changed=len(changed))
