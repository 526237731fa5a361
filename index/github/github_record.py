"""What an index keeps of a GitHub repository between imports, written a page at a time.

An import of a large repository takes hundreds of requests and may meet the rate limit half
way, so nothing waits for its end: each page of pull requests is written with the listing's
place in one transaction (`github_pulls` and a `...:pull_listing` cursor in `meta`), and so is
each page of comments with how far the comments were read. The next import resumes there.

The imported metadata stays in `github_pulls` until the index shows it (the indexer applies it)
and a `prdup: not a duplicate` label on the PR has been recorded as dismissals; then it is
dropped, so the table holds what is still to do, not a second copy of every PR.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from index.github import dismissals
from index.github.dismissals import Dismissal
from index.metadata import PullMetadata
from index.storage.store import IndexStore

_PULL_COLUMNS = (
    "number",
    "title",
    "body",
    "state",
    "created_at",
    "closed_at",
    "merged_at",
    "head_sha",
    "base_ref",
    "author",
)
# A staged PR the index does not show yet: missing, or another title, body or state (git's
# "merged" beats GitHub's state: a rebase-merged PR is "closed" there).
_NOT_REFLECTED = """
    NOT EXISTS (
        SELECT 1 FROM changes c WHERE c.number = g.number
        AND (g.title IS NULL OR c.title IS g.title)
        AND (g.body IS NULL OR c.body IS g.body)
        AND (g.state IS NULL OR c.state IS g.state OR c.state = 'merged')
    )
"""


@dataclass(frozen=True, slots=True)
class ImportedPull:
    """One PR as GitHub listed it."""

    meta: PullMetadata
    updated_at: str | None
    not_duplicate: bool  # carries the `prdup: not a duplicate` label


@dataclass(frozen=True, slots=True)
class PullListing:
    """A listing of PRs, most recently updated first, under way.

    `next_page` is the 0-based page to ask for next; `newest` the latest update it has seen
    (the watermark once it ends); it ends at the first PR updated before `stop_before`.
    """

    next_page: int
    newest: str | None
    stop_before: str | None

    def to_json(self) -> str:
        return json.dumps([self.next_page, self.newest, self.stop_before])

    @classmethod
    def from_json(cls, text: str) -> PullListing:
        next_page, newest, stop_before = json.loads(text)
        return cls(int(next_page), newest, stop_before)


def imported_repositories(store: IndexStore) -> list[str]:
    """The GitHub repositories whose metadata was imported into this index."""
    rows = store.rows("SELECT key FROM meta WHERE key LIKE 'github:%:updated_since' ORDER BY key")
    return [key.removeprefix("github:").removesuffix(":updated_since") for (key,) in rows]


def _later(a: str | None, b: str | None) -> str | None:
    """The later of two ISO 8601 UTC times ("Z" suffix, GitHub's format: they sort as text)."""
    return max(a, b) if a and b else a or b


class GitHubRecord:
    """The import state of one GitHub repository (`owner/name`) in an open index."""

    def __init__(self, store: IndexStore, repo: str) -> None:
        self.store = store
        self.repo = repo

    def _key(self, name: str) -> str:
        return f"github:{self.repo}:{name}"

    def _set(self, name: str, value: str | None) -> None:
        """Inside a transaction: set or remove one of this repository's `meta` keys."""
        if value is None:
            self.store.conn.execute("DELETE FROM meta WHERE key = ?", (self._key(name),))
        else:
            self.store.conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (self._key(name), value)
            )

    # --- pull requests ---------------------------------------------------------------------

    @property
    def watermark(self) -> str | None:
        """The newest update a finished listing saw: the next one stops before it."""
        return self.store.get_meta(self._key("updated_since"))

    def listing(self) -> PullListing | None:
        """The listing an earlier import left unfinished, if any."""
        text = self.store.get_meta(self._key("pull_listing"))
        return PullListing.from_json(text) if text else None

    def new_listing(self) -> PullListing:
        """A listing of what was updated since the watermark (everything on a first import).

        An index from before imports were kept page by page may name PRs an interrupted index
        run never recorded (`...:pending`): the listing reaches back to the oldest of them.
        """
        stop_before = self.watermark
        legacy = json.loads(self.store.get_meta(self._key("pending")) or "[]")
        stamps = [entry[1] for entry in legacy if len(entry) > 1 and entry[1]]
        if stamps and stop_before:
            stop_before = min([*stamps, stop_before])
        return PullListing(0, None, stop_before)

    def save_pull_page(
        self, pulls: Sequence[ImportedPull], after: PullListing, ended: bool
    ) -> None:
        """One page, and where the listing goes on (`after`), at once; when it has `ended`,
        its newest update becomes the watermark.

        A PR listed without the label takes back what its label dismissed.
        """
        with self.store.batch():
            self.store.conn.executemany(
                f"INSERT OR REPLACE INTO github_pulls(repo, {', '.join(_PULL_COLUMNS)}, "
                "updated_at, not_duplicate, label_recorded) "
                f"VALUES ({', '.join('?' * (len(_PULL_COLUMNS) + 4))})",
                [
                    (
                        self.repo,
                        *(getattr(pull.meta, column) for column in _PULL_COLUMNS),
                        pull.updated_at,
                        int(pull.not_duplicate),
                        int(not pull.not_duplicate),
                    )
                    for pull in pulls
                ],
            )
            for pull in pulls:
                if not pull.not_duplicate:
                    dismissals.undo_label(self.store, pull.meta.number)
            if ended:
                newest = _later(self.watermark, after.newest)
                if newest:
                    self._set("updated_since", newest)
                self._set("pull_listing", None)
                self._set("pending", None)
            else:
                self._set("pull_listing", after.to_json())

    def pending(self) -> dict[int, PullMetadata]:
        """Imported metadata the index does not show yet (or whose label is still to record)."""
        columns = ", ".join(f"g.{column}" for column in _PULL_COLUMNS)
        rows = self.store.rows(
            f"SELECT {columns} FROM github_pulls g WHERE g.repo = ? "
            f"AND (g.label_recorded = 0 OR {_NOT_REFLECTED}) ORDER BY g.number",
            (self.repo,),
        )
        return {row[0]: PullMetadata(*row) for row in rows}

    def prune(self) -> None:
        """Drop what the index shows and whose label, if any, is recorded."""
        with self.store.batch():
            self.store.conn.execute(
                f"DELETE FROM github_pulls AS g WHERE g.repo = ? AND g.label_recorded = 1 "
                f"AND NOT {_NOT_REFLECTED}",
                (self.repo,),
            )

    def labelled(self) -> list[tuple[int, str | None]]:
        """(number, updated_at) of imported PRs whose label is still to record."""
        return [
            (number, updated_at)
            for number, updated_at in self.store.rows(
                "SELECT number, updated_at FROM github_pulls "
                "WHERE repo = ? AND label_recorded = 0 ORDER BY number",
                (self.repo,),
            )
        ]

    def label_recorded(self, number: int) -> None:
        with self.store.batch():
            self.store.conn.execute(
                "UPDATE github_pulls SET label_recorded = 1 WHERE repo = ? AND number = ?",
                (self.repo, number),
            )

    # --- comments --------------------------------------------------------------------------

    @property
    def comments_since(self) -> str | None:
        """The latest update of a comment read so far (comments are read oldest first)."""
        return self.store.get_meta(self._key("comments_since"))

    def save_comment_page(
        self, commands: Sequence[tuple[int, Sequence[Dismissal]]], read_until: str | None
    ) -> None:
        """What each comment of a page says now (most: nothing), and how far they were read."""
        with self.store.batch():
            for comment_id, said in commands:
                dismissals.replace_comment(self.store, comment_id, said)
            if read_until:
                self._set("comments_since", read_until)
