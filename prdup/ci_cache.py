"""One rolling index entry in the repository's Actions cache: delete what a new save supersedes.

The action saves the index under a key of its own run whenever the index changed, and restores
the newest entry by prefix. Each entry is the index's size (about 94 MB for a repository of
20,000 PRs), and the cache holds 10 GB for all of a repository's workflows: without pruning, a
busy default branch fills it in a day or two and GitHub evicts other workflows' entries.
"""

from __future__ import annotations

from collections.abc import Sequence

from prdup.github import CacheEntry, GitHubClient


def prune_superseded(client: GitHubClient, prefix: str, keep: str) -> list[CacheEntry]:
    """Delete the entries under `prefix` that `keep` supersedes; returns those deleted.

    Nothing is deleted unless `keep` is listed: a save that failed, or has not reached the
    listing yet, must not leave the next run with no index at all. Runs for different PRs
    overlap, each listing before the other deletes: so a run deletes only what
    `superseded_by` names (older entries of its own scope), and an entry another run deleted
    first is no error.
    """
    deleted = []
    for entry in superseded_by(client.cache_entries(prefix), keep):
        if client.delete_cache_entry(entry.id):
            deleted.append(entry)
    return deleted


def superseded_by(entries: Sequence[CacheEntry], keep: str) -> list[CacheEntry]:
    """The entries `keep` supersedes: those saved under the same ref (a run under
    pull_request_target saves under the PR's base branch, so a backport's run keeps its
    release line's entry and leaves the default branch's alone) and older than it (a newer
    one is another run's, saved since this one listed: deleting it could leave no entry)."""
    kept = next((entry for entry in entries if entry.key == keep), None)
    if kept is None:
        return []
    return [
        entry
        for entry in entries
        if entry.key != keep and entry.ref == kept.ref and _age(entry) < _age(kept)
    ]


def _age(entry: CacheEntry) -> tuple[str, int]:
    """When it was saved (GitHub's ISO time, which sorts as text), then its id (ids grow)."""
    return (entry.created_at or "", entry.id)
