"""Maintainers' "not a duplicate" decisions in the index, each tied to the GitHub fact behind it.

GitHub is the record: a `prdup: not a duplicate` label on a PR, or a maintainer's
`/prdup not-duplicate N` comment. The index keeps one row per pair and fact, both ways (if B
is no duplicate of A, A is none of B), so that removing the label, or deleting, editing or
hiding the comment, takes back exactly what that fact said and nothing another fact says.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from index.storage.store import IndexStore

LABEL = "label"
COMMAND = "command"


@dataclass(frozen=True, slots=True)
class Dismissal:
    """Someone said PR `number` is not a duplicate of PR `other`."""

    number: int
    other: int
    by: str | None
    at: str | None
    comment_id: int | None = None  # the command comment that said so; None for the label


def _rows(dismissal: Dismissal, source: str) -> list[tuple[object, ...]]:
    """The pair both ways, each naming the PR that carries the fact and the comment, if any."""
    comment = (dismissal.comment_id or 0) if source == COMMAND else 0
    pr = dismissal.number
    return [
        (dismissal.number, dismissal.other, dismissal.by, dismissal.at, source, pr, comment),
        (dismissal.other, dismissal.number, dismissal.by, dismissal.at, source, pr, comment),
    ]


def _known(store: IndexStore, dismissal: Dismissal, source: str) -> bool:
    key = _rows(dismissal, source)[0]
    found = store.conn.execute(
        "SELECT 1 FROM dismissals WHERE number = ? AND other = ? AND source = ? AND pr = ? "
        "AND comment_id = ?",
        (key[0], key[1], key[4], key[5], key[6]),
    ).fetchone()
    return found is not None


def _insert(store: IndexStore, dismissals: Iterable[Dismissal], source: str) -> list[Dismissal]:
    """Inside a transaction: add what is not there yet; returns those."""
    new = []
    for dismissal in dismissals:
        if dismissal.number == dismissal.other or _known(store, dismissal, source):
            continue
        store.conn.executemany(
            "INSERT OR IGNORE INTO dismissals(number, other, by, at, source, pr, comment_id) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            _rows(dismissal, source),
        )
        new.append(dismissal)
    return new


def record(store: IndexStore, dismissals: Iterable[Dismissal], source: str) -> list[Dismissal]:
    """Add these dismissals (a label's or commands'), both ways; returns the ones not known."""
    with store.batch():
        return _insert(store, dismissals, source)


def undo_label(store: IndexStore, number: int) -> int:
    """PR `number` no longer carries the label: forget what it dismissed. Returns the pairs.

    A row from before sources were kept, by "label", is the label's of either PR it names.
    """
    with store.batch():
        cursor = store.conn.execute(
            "DELETE FROM dismissals WHERE source = ? AND (pr = ? OR (pr = 0 AND ? IN "
            "(number, other)))",
            (LABEL, number, number),
        )
        return cursor.rowcount // 2


def replace_commands(
    store: IndexStore, number: int, dismissals: Sequence[Dismissal]
) -> tuple[list[Dismissal], int]:
    """The commands on PR `number` are exactly these now (a comment deleted, edited or hidden
    says nothing any more); returns the ones not known before and how many pairs are gone."""
    dismissals = list(dict.fromkeys(dismissals))
    with store.batch():
        known = [_known(store, d, COMMAND) for d in dismissals]
        deleted = store.conn.execute(
            "DELETE FROM dismissals WHERE source = ? AND pr = ? AND comment_id != 0",
            (COMMAND, number),
        ).rowcount
        _insert(store, dismissals, COMMAND)
    new = [d for d, was_known in zip(dismissals, known, strict=True) if not was_known]
    return new, deleted // 2 - (len(dismissals) - len(new))


def replace_comment(store: IndexStore, comment_id: int, dismissals: Sequence[Dismissal]) -> None:
    """Inside a transaction: comment `comment_id` says exactly this now (often nothing)."""
    store.conn.execute(
        "DELETE FROM dismissals WHERE source = ? AND comment_id = ?", (COMMAND, comment_id)
    )
    _insert(store, dismissals, COMMAND)


def acknowledged(store: IndexStore, comment_ids: Iterable[int]) -> set[int]:
    """Which of these command comments the bot has already reacted to."""
    ids = list(dict.fromkeys(comment_ids))
    if not ids:
        return set()
    marks = ",".join("?" * len(ids))
    return {
        comment_id
        for (comment_id,) in store.rows(
            f"SELECT comment_id FROM acknowledged_commands WHERE comment_id IN ({marks})", ids
        )
    }


def acknowledge(store: IndexStore, comment_ids: Iterable[int]) -> None:
    with store.batch():
        store.conn.executemany(
            "INSERT OR IGNORE INTO acknowledged_commands(comment_id) VALUES (?)",
            [(comment_id,) for comment_id in comment_ids],
        )


def pairs(store: IndexStore) -> set[tuple[int, int]]:
    """Every dismissed (number, other) pair, whatever said so."""
    return {(number, other) for number, other in store.rows("SELECT number, other FROM dismissals")}


def by_number(store: IndexStore) -> dict[int, list[int]]:
    """PR number -> the PRs it was said to be no duplicate of, in number order."""
    found: dict[int, list[int]] = {}
    rows = store.rows("SELECT DISTINCT number, other FROM dismissals ORDER BY other")
    for number, other in rows:
        found.setdefault(number, []).append(other)
    return found


def add_local(store: IndexStore, number: int, other: int, by: str | None, at: str | None) -> None:
    """One way, and backed by no GitHub fact (a script's): no label or comment takes it back,
    and a fresh index does not have it. The bot's go through `record`."""
    store.write(
        lambda: store.conn.execute(
            "INSERT OR REPLACE INTO dismissals(number, other, by, at, source) "
            "VALUES (?, ?, ?, ?, 'local')",
            (number, other, by, at),
        )
    )
