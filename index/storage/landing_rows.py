"""How PRs landed: a PR's landing in part (`part_landings`, a row per commit of it), and the
landing columns of `changes` (its own commits, its patch identity, the target line it is on)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from index.metadata import instant_or_zero

if TYPE_CHECKING:
    from index.storage.index_file import IndexFile

_LEFT_COLUMNS = "id, number, head_sha"  # of a row that may have left a target's history


@dataclass(frozen=True, slots=True)
class PartLandingRow:
    """One commit of a PR that landed in part: `copy` is the target commit with its patch,
    None while it is still to do."""

    change_id: int
    position: int  # its place among the PR's commits, oldest first
    sha: str
    subject: str
    files: tuple[str, ...]
    copy: str | None
    target: str | None


class LandingRows:
    """`store.landings`: writes and reads `part_landings` and the landing columns of `changes`,
    on the index file's connection and in its transactions."""

    def __init__(self, file: IndexFile) -> None:
        self.file = file
        self.conn = file.conn

    def forget(self, change_id: int) -> None:
        """Inside a transaction: drop a change's landing in part (it is deleted or read again)."""
        self.conn.execute("DELETE FROM part_landings WHERE change_id = ?", (change_id,))

    def clear(self) -> None:
        """Inside a transaction: drop every landing in part."""
        self.conn.execute("DELETE FROM part_landings")

    def set_patch_ids(self, patch_ids: Iterable[tuple[int, str]]) -> None:
        """Record (change id, patch identity) pairs."""

        def action() -> None:
            self.conn.executemany(
                "UPDATE changes SET patch_id = ? WHERE id = ?",
                [(patch_id, change_id) for change_id, patch_id in patch_ids],
            )

        self.file.write(action)

    def set_own_commits(self, own: Iterable[tuple[int, str]]) -> None:
        """Record (change id, own commits as `index.git.rebase_landings` encodes them) pairs."""
        rows = [(text, change_id) for change_id, text in own]
        self.file.write(
            lambda: self.conn.executemany("UPDATE changes SET own_commits = ? WHERE id = ?", rows)
        )

    def set_in_part(self, rows: Iterable[PartLandingRow]) -> None:
        """Replace every PR's landing in part with these rows (a run finds them all at once)."""
        values = [
            (r.change_id, r.position, r.sha, r.subject, "\n".join(r.files), r.copy, r.target)
            for r in rows
        ]

        def action() -> None:
            self.conn.execute("DELETE FROM part_landings")
            self.conn.executemany("INSERT INTO part_landings VALUES (?, ?, ?, ?, ?, ?, ?)", values)

        self.file.write(action)

    def drop_landed_in_part(self) -> int:
        """Forget the landing in part of PRs that have landed since (a later step of the run
        found their landing); returns how many PRs are still landed in part."""

        def action() -> None:
            self.conn.execute(
                "DELETE FROM part_landings WHERE change_id IN (SELECT id FROM changes "
                "WHERE state = 'merged' OR merge_commit IS NOT NULL)"
            )

        self.file.write(action)
        return next(self.file.rows("SELECT count(DISTINCT change_id) FROM part_landings"))[0]

    def in_part(self, change_id: int) -> list[PartLandingRow]:
        """A PR's commits as its landing in part recorded them, in its order; [] for none."""
        return [
            PartLandingRow(
                change_id, position, sha, subject, tuple(files.splitlines()), copy, target
            )
            for position, sha, subject, files, copy, target in self.file.rows(
                "SELECT position, sha, subject, files, copy, target FROM part_landings "
                "WHERE change_id = ? ORDER BY position",
                (change_id,),
            )
        ]

    def landed_patches(self, patch_ids: set[str]) -> dict[str, str | None]:
        """Which of these patches a merged change in the index has (a rebased copy of it), each
        with when the first such change landed: a commit made before then is the original, and
        the landing its copy. None where one such change's landing time is unknown."""
        if not patch_ids:
            return {}
        marks = ",".join("?" * len(patch_ids))
        first: dict[str, str | None] = {}
        for patch, merged_at in self.file.rows(
            f"SELECT patch_id, merged_at FROM changes WHERE state = 'merged' "
            f"AND patch_id IN ({marks})",
            list(patch_ids),
        ):
            known = first.get(patch, merged_at)
            # Stored times carry their own offsets (GitHub's `Z`, git's `+02:00`): compared as
            # instants, not as text.
            first[patch] = (
                None
                if known is None or merged_at is None
                else min(known, merged_at, key=instant_or_zero)
            )
        return first

    def landed_on(self, target: str) -> list[dict[str, Any]]:
        """The rows a target's history put in the index, each with its `landing` commit: its
        direct commits, the PRs that landed on it (merged, squashed, fast-forwarded, rebased),
        and the PRs read from a ref that git called merged as a target reached their head. Not
        those with imported metadata (it names a base branch): GitHub may have called them
        merged, and that is not git's to take back."""
        rows = self.file.query(
            f"SELECT {_LEFT_COLUMNS}, coalesce(merge_commit, sha) AS landing FROM changes "
            "WHERE (target = ? AND (kind = 'commit' OR merge_commit IS NOT NULL)) "
            "OR (kind = 'pr' AND state = 'merged' AND merge_commit IS NULL "
            "AND sha IS NOT NULL AND base_ref IS NULL)",
            (target,),
        )
        return [dict(row) for row in rows]

    def unlanded_prs_based_on(self, commits: set[str]) -> list[dict[str, Any]]:
        """The PRs with no landing whose change was read from one of these fork points."""
        wanted = sorted(commits)
        found: list[dict[str, Any]] = []
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            found += map(
                dict,
                self.file.query(
                    f"SELECT {_LEFT_COLUMNS} FROM changes WHERE kind = 'pr' "
                    f"AND merge_commit IS NULL AND base_sha IN ({marks})",
                    chunk,
                ),
            )
        return found
