"""The index's rolling Actions cache entry, pruned by runs that overlap.

Runs for different PRs overlap on a busy repository: each saves its entry, lists the entries,
then deletes what its own supersedes, and the other run's listing may be older or newer than
its deletes. The stories run two prunes interleaved step by step against the fake GitHub API
(list, list, delete, delete) and end with exactly one entry per scope and no error.
"""

from __future__ import annotations

import pytest

from prdup.ci_cache import prune_superseded, superseded_by
from prdup.github import GitHubClient
from tests.fake_github import FakeGitHub, quick_client
from tests.test_bot import REPO, TOKEN

PREFIX = f"prdup-index-{REPO}-"


@pytest.fixture
def server(fake_github: FakeGitHub) -> FakeGitHub:
    return fake_github


@pytest.fixture
def client(server: FakeGitHub) -> GitHubClient:
    return quick_client(server, REPO, TOKEN)


def interleaved(client: GitHubClient, first: str, second: str) -> tuple[list[int], list[int]]:
    """Two runs prune at once: both list, then the first deletes, then the second; the ids
    each deleted (an entry the other deleted first is skipped, not an error)."""
    listed_first = client.cache_entries(PREFIX)
    listed_second = client.cache_entries(PREFIX)
    done = []
    for listed, keep in ((listed_first, first), (listed_second, second)):
        done.append([e.id for e in superseded_by(listed, keep) if client.delete_cache_entry(e.id)])
    return done[0], done[1]


@pytest.mark.parametrize("previous", [True, False], ids=["with-an-older-entry", "first-saves"])
def test_two_overlapping_prunes_leave_the_newest_entry(
    server: FakeGitHub, client: GitHubClient, previous: bool
):
    """With an older entry there, both runs delete it (the second finds it gone: no red job)
    and the second deletes the first's; without one, neither deletes the other's newer entry
    it listed, and the first's goes: one entry is left either way, the newest."""
    if previous:
        server.add_cache(PREFIX + "old")
    server.add_cache(PREFIX + "run-1")
    server.add_cache(PREFIX + "run-2")

    interleaved(client, PREFIX + "run-1", PREFIX + "run-2")

    assert [c["key"] for c in server.caches] == [PREFIX + "run-2"]


def test_a_run_prunes_only_the_entries_of_its_own_scope(server: FakeGitHub, client: GitHubClient):
    """A backport PR's run (pull_request_target: it saves under the PR's base, `1.x`) keeps
    its entry and deletes the older `1.x` one; the default branch's entries are not its to
    delete, and stay for the default branch's runs."""
    server.add_cache(PREFIX + "main-old", ref="refs/heads/main")
    server.add_cache(PREFIX + "main-new", ref="refs/heads/main")
    server.add_cache(PREFIX + "1x-old", ref="refs/heads/1.x")
    server.add_cache(PREFIX + "1x-new", ref="refs/heads/1.x")

    deleted = prune_superseded(client, PREFIX, PREFIX + "1x-new")

    assert [entry.key for entry in deleted] == [PREFIX + "1x-old"]
    assert [c["key"] for c in server.caches] == [
        PREFIX + "main-old",
        PREFIX + "main-new",
        PREFIX + "1x-new",
    ]
    prune_superseded(client, PREFIX, PREFIX + "main-new")
    assert [c["key"] for c in server.caches] == [PREFIX + "main-new", PREFIX + "1x-new"]
