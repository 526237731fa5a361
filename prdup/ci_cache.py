"""One rolling index entry in the repository's Actions cache: delete what a new save supersedes.

The action saves the index under a key of its own run whenever the index changed, and restores
the newest entry by prefix. Each entry is the index's size (about 94 MB for a repository of
20,000 PRs), and the cache holds 10 GB for all of a repository's workflows: without pruning, a
busy default branch fills it in a day or two and GitHub evicts other workflows' entries.
"""

from __future__ import annotations

from prdup.github import CacheEntry, GitHubClient


def prune_superseded(client: GitHubClient, prefix: str, keep: str) -> list[CacheEntry]:
    """Delete the entries under `prefix` other than `keep`; returns those deleted.

    Nothing is deleted unless `keep` is listed: a save that failed, or has not reached the
    listing yet, must not leave the next run with no index at all.
    """
    entries = client.cache_entries(prefix)
    if not any(entry.key == keep for entry in entries):
        return []
    superseded = [entry for entry in entries if entry.key != keep]
    for entry in superseded:
        client.delete_cache_entry(entry.id)
    return superseded
