"""The sweep's cache in the index: each swept PR's findings, and every change as last seen.

The findings are stored as the sweep encodes them (JSON text); what a row means, and when it
still holds, is `prdup.sweep`'s business.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from index.questions import lookup
from index.storage.store import IndexStore


@dataclass(frozen=True, slots=True)
class CachedRow:
    """One swept PR's cached findings and what they were computed against."""

    number: int
    head_sha: str
    fingerprint: str
    change_count: int
    findings: str  # the sweep's own encoding


def load(store: IndexStore) -> list[CachedRow]:
    return [
        CachedRow(number, head, fingerprint, count, findings)
        for number, head, fingerprint, count, findings in store.rows(
            "SELECT number, head_sha, fingerprint, change_count, findings FROM sweep_results"
        )
    ]


def seen(store: IndexStore) -> dict[int, tuple[str | None, str, str, str]]:
    """Change id -> (sha, state, status, details) as the last sweep saw it."""
    return {
        change_id: (sha, state, status, details or "")
        for change_id, sha, state, status, details in store.rows(
            "SELECT change_id, sha, state, status, details FROM sweep_seen"
        )
    }


def save(
    store: IndexStore,
    rows: Iterable[CachedRow],
    invalid: Iterable[int],
    seen: Iterable[tuple[int, tuple[str | None, str, str, str]]],
    gone: Iterable[int],
) -> None:
    """Write the new rows, drop the invalid ones, and remember the changes that moved as they
    are now (`seen`; `gone`: no longer in the index), in one transaction; nothing is written
    where nothing changed."""
    rows, invalid, seen, gone = list(rows), list(invalid), list(seen), list(gone)
    if not (rows or invalid or seen or gone):
        return
    conn = store.conn
    with store.batch():
        conn.executemany(
            "DELETE FROM sweep_results WHERE number = ?", [(n,) for n in sorted(invalid)]
        )
        conn.executemany(
            "INSERT OR REPLACE INTO sweep_results(number, head_sha, fingerprint, change_count, "
            "findings) VALUES (?, ?, ?, ?, ?)",
            [(r.number, r.head_sha, r.fingerprint, r.change_count, r.findings) for r in rows],
        )
        conn.executemany("DELETE FROM sweep_seen WHERE change_id = ?", [(c,) for c in gone])
        conn.executemany(
            "INSERT OR REPLACE INTO sweep_seen(change_id, sha, state, status, details) "
            "VALUES (?, ?, ?, ?, ?)",
            [(change_id, *what) for change_id, what in seen],
        )


def sharing_rare_lines(
    store: IndexStore,
    change_ids: Sequence[int],
    whole: Mapping[int, Collection[int]] | None = None,
) -> dict[int, set[int]]:
    """Changes that share a line with the given ones that `lookup.candidate_ids` would use,
    each with those of the given ones it shares such a line with. `whole` adds, for a change
    stored cut, the lines past its cut (change id -> the hashes of every line it adds and
    removes)."""
    if not change_ids:
        return {}
    limit = lookup.rare_line_limit(int(store.get_meta("change_count") or 1))
    holders: dict[int, set[int]] = {}
    for change_id, *_, line_hash in store.lines.rows_of(change_ids):
        holders.setdefault(line_hash, set()).add(change_id)
    df = lookup.line_weights(store, holders).document_frequency
    hashes = {h for h in holders if h in df and df[h] <= limit}
    sharing: dict[int, set[int]] = {}
    for change_id, _, line_hash in store.lines.changes_with(sorted(hashes)):
        sharing.setdefault(change_id, set()).update(holders[line_hash])
    for change_id, lines in (whole or {}).items():
        for line_hash in hashes.intersection(lines):
            sharing.setdefault(change_id, set()).update(holders[line_hash])
    return sharing


def cut_unmerged(store: IndexStore) -> list[dict[str, Any]]:
    """The PRs stored cut that did not land (`check` and the sweep read them whole), each
    with what names its span."""
    names = ("id", "number", "state", "sha", "base_sha", "head_sha")
    return [
        dict(zip(names, row, strict=True))
        for row in store.rows(
            f"SELECT {', '.join(names)} FROM changes "
            "WHERE truncated AND state != 'merged' AND number IS NOT NULL"
        )
    ]


def issues_named(store: IndexStore) -> dict[int, frozenset[str]]:
    """PR number -> the issues its title and body name (`#12`), for every PR that names one."""
    named: dict[int, set[str]] = {}
    for number, issue in store.rows(
        "SELECT c.number, i.issue FROM issue_refs i JOIN changes c ON c.id = i.change_id "
        "WHERE c.number IS NOT NULL"
    ):
        named.setdefault(number, set()).add(issue)
    return {number: frozenset(issues) for number, issues in named.items()}
