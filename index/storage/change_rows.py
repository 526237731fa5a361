"""A change's rows: `changes` itself and what its diff holds (`files`, `hunks`, `symbols`,
`issue_refs`). Saving or deleting a change reaches the other parts for their rows of it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from index.git.hunk_symbols import header_kind
from index.git.stored_diff import CUT, StoredChange
from index.storage import line_sets
from index.storage.line_sets import LineSet
from index.storage.packed import pack_counts

if TYPE_CHECKING:
    import sqlite3

    from index.storage.derived import DerivedRows
    from index.storage.index_file import IndexFile
    from index.storage.landing_rows import LandingRows
    from index.storage.line_rows import LineRows

# The kind of a symbol named by git's hunk header in rows written before a definition was
# told from other headers (`index.git.hunk_symbols.DEFINITION`, `CONTEXT`).
HEADER_SYMBOL = "hunk-header"


@dataclass(frozen=True, slots=True)
class SymbolRow:
    path: str
    qualified: str
    kind: str
    side: str


@dataclass(slots=True)
class ChangeRecord:
    """What the index stores about a change besides its diff."""

    kind: str  # "pr" | "commit"
    state: str  # "merged" | "open" | "closed" | "unmerged" (not merged, open or closed unknown)
    source: str  # "merge-commit" | "squash" | "rebase" | "ref" | "direct" | "metadata"
    number: int | None = None
    sha: str | None = None
    head_sha: str | None = None
    base_sha: str | None = None
    merge_commit: str | None = None
    target: str | None = None
    base_ref: str | None = None
    fork_line: str | None = None  # an unmerged PR's release line, from git (`base_ref`: GitHub's)
    title: str | None = None
    body: str | None = None
    author: str | None = None
    created_at: str | None = None
    merged_at: str | None = None
    closed_at: str | None = None
    status: str = "indexed"  # "indexed" | "skipped" | "metadata-only"
    skip_reason: str | None = None
    truncated: bool = False
    # A PR's own commits (on no branch when read), as `index.git.rebase_landings` encodes them.
    own_commits: str | None = None
    landing_base: str | None = None  # where a landing of several commits starts
    issues: tuple[str, ...] = ()
    state_source: str | None = None  # "metadata" where GitHub's metadata gave the state
    title_source: str | None = None  # "commit" where the title is the head commit's subject
    symbols: tuple[SymbolRow, ...] = field(default=())


# The rows of a change's diff this part writes; the other parts own the rest of its rows.
_OWN_CHILDREN = ("files", "hunks", "symbols", "issue_refs")


class ChangeRows:
    """`store.changes`: writes and reads the rows of `changes`, `files`, `hunks`, `symbols` and
    `issue_refs`, on the index file's connection and in its transactions."""

    def __init__(
        self, file: IndexFile, lines: LineRows, derived: DerivedRows, landings: LandingRows
    ) -> None:
        self.file = file
        self.conn = file.conn
        # The other parts: a change's rows in their tables are saved and deleted with it.
        self.lines = lines
        self.derived = derived
        self.landings = landings

    def save(
        self,
        record: ChangeRecord,
        change: StoredChange | None,
        code_words: Sequence[tuple[str, int]] | None = None,
    ) -> int:
        """Replace whatever the index held for this PR or commit, in one transaction.

        `code_words` (the change's most used identifiers, counted by the caller) marks it
        counted; without them `index.storage.code_model` counts it later from its stored lines.
        """
        return self.save_many([(record, change, code_words)])[0]

    def save_many(
        self,
        items: Sequence[tuple[ChangeRecord, StoredChange | None, Sequence[tuple[str, int]] | None]],
    ) -> list[int]:
        """`save` for many changes in one transaction, each table written at once."""

        def action() -> list[int]:
            rows = _Rows(self._next_file_id())
            ids = [self._save(record, change, words, rows) for record, change, words in items]
            rows.write(self.conn, self.lines, self.derived)
            return ids

        return list(self.file.write(action))

    def _next_file_id(self) -> int:
        return int(self.conn.execute("SELECT coalesce(max(id), 0) + 1 FROM files").fetchone()[0])

    def _existing_id(self, record: ChangeRecord) -> int | None:
        if record.number is not None:
            row = self.conn.execute(
                "SELECT id FROM changes WHERE number = ?", (record.number,)
            ).fetchone()
        else:
            row = self.conn.execute(
                "SELECT id FROM changes WHERE kind = 'commit' AND sha = ?", (record.sha,)
            ).fetchone()
        return row[0] if row else None

    def _delete_children(self, change_id: int) -> None:
        self.derived.forget(change_id)  # first: it uncounts the lines it reads
        self.lines.forget(change_id)
        self.landings.forget(change_id)
        for table in _OWN_CHILDREN:
            self.conn.execute(f"DELETE FROM {table} WHERE change_id = ?", (change_id,))

    def _save(
        self,
        record: ChangeRecord,
        change: StoredChange | None,
        code_words: Sequence[tuple[str, int]] | None,
        rows: _Rows,
    ) -> int:
        existing = self._existing_id(record)
        columns = {
            "kind": record.kind,
            "number": record.number,
            "sha": record.sha,
            "head_sha": record.head_sha,
            "base_sha": record.base_sha,
            "merge_commit": record.merge_commit,
            "target": record.target,
            "base_ref": record.base_ref,
            "fork_line": record.fork_line,
            "state": record.state,
            "state_source": record.state_source,
            "source": record.source,
            "title": record.title,
            "title_source": record.title_source,
            "body": record.body,
            "author": record.author,
            # Whoever wrote the change's head now: a PR whose head moved to another author's
            # commit must not keep the e-mail of the old one (`fill_author_emails` reads it).
            "author_email": None,
            "created_at": record.created_at,
            "merged_at": record.merged_at,
            "closed_at": record.closed_at,
            "status": record.status,
            "skip_reason": record.skip_reason,
            "truncated": int(record.truncated),
            "own_commits": record.own_commits,
            "landing_base": record.landing_base,
            "patch_id": change.patch_id if change and not change.is_empty else None,
            "file_count": len(change.files) if change else 0,
            "added": change.added_count if change else 0,
            "removed": change.removed_count if change else 0,
            "words_counted": int(code_words is not None),
        }
        if existing is None:
            cursor = self.conn.execute(
                f"INSERT INTO changes ({', '.join(columns)}) VALUES "
                f"({', '.join('?' for _ in columns)})",
                tuple(columns.values()),
            )
            change_id = int(cursor.lastrowid or 0)
        else:
            change_id = existing
            self._delete_children(change_id)
            rows.forget(change_id)
            assignments = ", ".join(f"{name} = ?" for name in columns)
            self.conn.execute(
                f"UPDATE changes SET {assignments} WHERE id = ?",
                (*columns.values(), change_id),
            )
        rows.symbols.extend(
            (change_id, s.path, s.qualified, s.kind, s.side) for s in set(record.symbols)
        )
        if change is not None:
            rows.add_diff(change_id, change)
        rows.issues.extend((change_id, issue) for issue in sorted(set(record.issues)))
        if code_words:
            rows.code_words.append((change_id, pack_counts(code_words)))
        return change_id

    def update_metadata(self, number: int, fields: dict[str, Any], issues: Sequence[str]) -> bool:
        """Refresh titles, states and the like of an indexed PR; False when it is not indexed."""

        def action() -> bool:
            row = self.conn.execute("SELECT id FROM changes WHERE number = ?", (number,)).fetchone()
            if row is None:
                return False
            if fields:
                self.file.db["changes"].update(row[0], fields)
            if issues:
                self.conn.execute("DELETE FROM issue_refs WHERE change_id = ?", (row[0],))
                self.conn.executemany(
                    "INSERT INTO issue_refs(change_id, issue) VALUES (?, ?)",
                    [(row[0], issue) for issue in sorted(set(issues))],
                )
            return True

        return bool(self.file.write(action))

    def set_heads(self, heads: Sequence[tuple[int, str]]) -> None:
        """Record the head commits of indexed PRs, by (number, head sha), in one transaction."""
        if heads:
            self.file.write(
                lambda: self.conn.executemany(
                    "UPDATE changes SET head_sha = ? WHERE number = ?",
                    [(head, number) for number, head in heads],
                )
            )

    def set_states(self, states: Sequence[tuple[int, str]]) -> None:
        """Set the states of PRs, by (number, state), in one transaction."""
        if states:
            self.file.write(
                lambda: self.conn.executemany(
                    "UPDATE changes SET state = ? WHERE number = ?",
                    [(state, number) for number, state in states],
                )
            )

    def set_estimated_states(self, states: Sequence[tuple[int, str, str | None]]) -> None:
        """Set the states git gave PRs and its estimates, by (number, state, estimate)."""
        if states:
            self.file.write(
                lambda: self.conn.executemany(
                    "UPDATE changes SET state = ?, state_estimate = ? WHERE number = ?",
                    [(state, estimate, number) for number, state, estimate in states],
                )
            )

    def estimated_states(self) -> dict[int, str]:
        """PR number -> 'open' or 'closed', for the PRs whose state is git's estimate (no
        metadata gave it; `index.git.state_estimate`)."""
        return {
            row[0]: row[1]
            for row in self.file.rows(
                "SELECT number, state_estimate FROM changes WHERE kind = 'pr' "
                "AND number IS NOT NULL AND state_source IS NULL AND state IN ('open', 'unmerged') "
                "AND state_estimate IS NOT NULL"
            )
        }

    def mark_commit_titles(self, numbers: Sequence[int]) -> None:
        """Record that these PRs' titles are their head commits' subjects."""
        if numbers:
            self.file.write(
                lambda: self.conn.executemany(
                    "UPDATE changes SET title_source = 'commit' WHERE number = ?",
                    [(number,) for number in numbers],
                )
            )

    def count_unknown_states(self) -> int:
        """How many PRs the index holds whose state is unknown: not merged, and nothing tells
        whether they are open or closed."""
        query = "SELECT count(*) FROM changes WHERE kind = 'pr' AND state = 'unmerged'"
        return int(next(self.file.rows(query))[0])

    def pull_texts(self) -> list[sqlite3.Row]:
        """What the index knows of each PR that git cannot tell again: its title, body,
        author, dates, base branch, and its state where GitHub's metadata gave it."""
        return self.file.query(
            "SELECT number, title, body, author, created_at, closed_at, base_ref, state, "
            "state_source, title_source FROM changes WHERE number IS NOT NULL"
        )

    def commits_without_author_email(self) -> list[tuple[int, str]]:
        """(change id, the commit whose author wrote it) for changes whose e-mail is unknown."""
        return [
            (row[0], row[1])
            for row in self.file.rows(
                "SELECT id, COALESCE(head_sha, sha) FROM changes "
                "WHERE author_email IS NULL AND COALESCE(head_sha, sha) IS NOT NULL"
            )
        ]

    def set_author_emails(self, emails: Iterable[tuple[int, str]]) -> None:
        """Record (change id, e-mail) pairs; '' marks a commit git could not tell about."""

        def action() -> None:
            self.conn.executemany(
                "UPDATE changes SET author_email = ? WHERE id = ?",
                [(email.lower(), change_id) for change_id, email in emails],
            )

        self.file.write(action)

    def clear(self) -> None:
        """Delete every change and what was derived from it; dismissals stay."""

        self.derived.stop_following()  # nothing left to follow: count anew

        def action() -> None:
            for table in _OWN_CHILDREN:
                self.conn.execute(f"DELETE FROM {table}")
            self.lines.clear()
            self.derived.clear()
            self.landings.clear()
            self.conn.execute("DELETE FROM changes")
            self.conn.execute("DELETE FROM meta WHERE key LIKE 'target:%'")

        self.file.write(action)

    def delete(self, change_id: int) -> None:
        def action() -> None:
            self._delete_children(change_id)
            self.conn.execute("DELETE FROM changes WHERE id = ?", (change_id,))

        self.file.write(action)

    def row(self, number: int) -> dict[str, Any] | None:
        found = self.file.query("SELECT * FROM changes WHERE number = ?", (number,))
        return dict(found[0]) if found else None

    def contents(self, change_id: int) -> dict[str, Any]:
        """What a change's diff holds, as `prdup show` prints it: its files (path, old path,
        status, why skipped), the symbols it touches, its hunk count and linked issues."""
        files = self.file.query(
            "SELECT path, CASE old_path WHEN '' THEN path ELSE old_path END AS old_path, status, "
            "skip_reason FROM files WHERE change_id = ? ORDER BY id",
            (change_id,),
        )
        symbols = sorted(
            {
                f"{path}::{name}"
                for path, name in self.file.rows(
                    "SELECT path, qualified FROM symbols WHERE change_id = ?", (change_id,)
                )
            }
        )
        hunks = next(
            self.file.rows("SELECT count(*) FROM hunks WHERE change_id = ?", (change_id,))
        )[0]
        issues = [
            issue
            for (issue,) in self.file.rows(
                "SELECT issue FROM issue_refs WHERE change_id = ? ORDER BY issue", (change_id,)
            )
        ]
        return {"files": files, "symbols": symbols, "hunks": hunks, "issues": issues}

    def counts(self) -> dict[str, int]:
        return {
            f"{kind}:{state}": count
            for kind, state, count in self.file.rows(
                "SELECT kind, state, count(*) FROM changes GROUP BY kind, state"
            )
        }

    def heads_by_number(self) -> dict[int, tuple[str | None, str]]:
        """PR number -> (indexed head sha, state), to skip PRs whose head has not moved."""
        return {
            number: (head, state)
            for number, head, state in self.file.rows(
                "SELECT number, head_sha, state FROM changes WHERE number IS NOT NULL"
            )
        }

    def indexed_commits(self) -> set[str]:
        return {sha for (sha,) in self.file.rows("SELECT sha FROM changes WHERE sha IS NOT NULL")}

    def target_commits(self) -> set[str]:
        """The commits read from a target's first-parent line (a PR ref's head is not one)."""
        return {
            sha
            for (sha,) in self.file.rows(
                "SELECT sha FROM changes WHERE target IS NOT NULL AND sha IS NOT NULL"
            )
        }

    def prs_read_in_part(self) -> list[tuple[int, str, str, set[str]]]:
        """(id, fork point, head, files, ignored ones aside) of the unlanded PRs stored cut
        without a patch identity (read only up to their line limit)."""
        found = {
            change_id: (base, head)
            for change_id, base, head in self.file.rows(
                "SELECT id, base_sha, head_sha FROM changes WHERE kind = 'pr' AND truncated = 1 "
                "AND patch_id IS NULL AND merge_commit IS NULL AND status = 'indexed' "
                "AND base_sha IS NOT NULL AND head_sha IS NOT NULL"
            )
        }
        paths = self.changed_paths(list(found))
        return [(cid, base, head, paths.get(cid, set())) for cid, (base, head) in found.items()]

    def relabel_commit_as_pr(self, change_id: int, number: int, head: str, source: str) -> None:
        """Turn a direct commit's row into PR `number`'s (it landed without a merge commit)."""

        def action() -> None:
            for (other,) in self.conn.execute(
                "SELECT id FROM changes WHERE number = ? AND id != ?", (number, change_id)
            ).fetchall():
                self.delete(other)
            self.conn.execute(
                "UPDATE changes SET kind = 'pr', number = ?, head_sha = ?, source = ?, "
                "title_source = 'commit' WHERE id = ?",  # the title: its landed commit's subject
                (number, head, source, change_id),
            )

        self.file.write(action)

    def ids_where(self, change_ids: Iterable[int], where: str, params: Sequence[Any]) -> set[int]:
        """Those of `change_ids` whose `changes` row, named `c`, meets `where`."""
        ids = list(change_ids)
        found: set[int] = set()
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            found.update(
                cid
                for (cid,) in self.file.rows(
                    f"SELECT c.id FROM changes c WHERE c.id IN ({marks}) AND {where}",
                    [*chunk, *params],
                )
            )
        return found

    def commits_by_file_count(self) -> dict[int, list[int]]:
        """Target commits' ids by how many files each changes, ignored ones aside."""
        found: dict[int, list[int]] = {}
        for change_id, count in self.file.rows(
            "SELECT id, file_count FROM changes WHERE kind = 'commit' ORDER BY id"
        ):
            found.setdefault(count, []).append(change_id)
        return found

    def any_changes_exactly(self, change_ids: list[int], paths: set[str]) -> bool:
        """Whether one of these changes changes exactly these files, ignored ones aside
        (`change_ids` are those with as many files: those with one of them are checked)."""
        first = min(paths)
        for start in range(0, len(change_ids), 500):
            chunk = change_ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            having = [
                change_id
                for (change_id,) in self.file.rows(
                    f"SELECT change_id FROM files WHERE change_id IN ({marks}) AND path = ?",
                    [*chunk, first],
                )
            ]
            if paths in self.changed_paths(having).values():
                return True
        return False

    def file_paths(self, change_ids: list[int]) -> dict[int, str]:
        """The path of each file row of these changes, by the row's id (line rows name it)."""
        marks = ",".join("?" * len(change_ids))
        return dict(
            self.file.rows(f"SELECT id, path FROM files WHERE change_id IN ({marks})", change_ids)
        )

    def changed_paths(self, change_ids: list[int]) -> dict[int, set[str]]:
        """Each change's files, ignored ones aside."""
        found: dict[int, set[str]] = {}
        for start in range(0, len(change_ids), 500):
            chunk = change_ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for change_id, path in self.file.rows(
                f"SELECT change_id, path FROM files WHERE change_id IN ({marks}) "
                "AND status != 'ignored'",
                chunk,
            ):
                found.setdefault(change_id, set()).add(path)
        return found


class _Rows:
    """The child rows of a batch of changes, written a table at a time. File ids are given
    here, so a change's hunks and lines can name their file before it is written."""

    def __init__(self, next_file_id: int) -> None:
        self.next_file_id = next_file_id
        self.files: list[tuple[int, int, str, str, str, str | None]] = []
        self.hunks: list[tuple] = []
        self.line_sets: list[LineSet] = []
        self.texts: dict[int, str] = {}
        self.symbols: list[tuple[int, str, str, str, str]] = []
        self.issues: list[tuple[int, str]] = []
        self.code_words: list[tuple[int, str]] = []  # (change, its packed words)

    def add_diff(self, change_id: int, change: StoredChange) -> None:
        """Files, hunks and distinct changed lines, and the symbols the hunk headers name."""
        symbols: set[tuple[int, str, str, str, str]] = set()
        # A file cut from a huge change is among its files and its skipped files: one row, with
        # the reason. An unrenamed file's old path is stored empty (read back as its path).
        for file in change.files:
            file_id = self.next_file_id
            self.next_file_id += 1
            old_path = "" if file.old_path == file.path else file.old_path
            why = CUT if file.cut else None
            self.files.append((file_id, change_id, file.path, old_path, file.status, why))
            for hunk in file.hunks:
                self.hunks.append(
                    (
                        change_id,
                        file_id,
                        hunk.old_start,
                        hunk.old_length,
                        hunk.new_start,
                        hunk.new_length,
                        None,  # the header's text: its symbol is what anything reads
                        hunk.symbol,
                        hunk.content_hash,
                    )
                )
                if hunk.symbol:
                    kind = header_kind(file.path, hunk.section)
                    symbols.update(
                        (change_id, file.path, hunk.symbol, kind, side) for side in hunk.sides
                    )
            if file.removed:
                self.line_sets.append((change_id, file_id, "-", line_sets.pack(file.removed)))
            if file.added:
                self.line_sets.append((change_id, file_id, "+", line_sets.pack(file.added)))
        for path, why in change.skipped_files:
            if why == CUT:
                continue  # its row is written above
            file_id = self.next_file_id
            self.next_file_id += 1
            self.files.append((file_id, change_id, path, "", "ignored", why))
        self.symbols.extend(symbols)
        self.texts.update(change.texts)

    def forget(self, change_id: int) -> None:
        """Drop the rows gathered for a change saved again in the same batch."""
        for name in ("files", "hunks", "line_sets", "symbols", "issues", "code_words"):
            column = 1 if name == "files" else 0  # where the row names its change
            rows = getattr(self, name)
            if any(row[column] == change_id for row in rows):
                setattr(self, name, [row for row in rows if row[column] != change_id])

    def write(self, conn: sqlite3.Connection, lines: LineRows, derived: DerivedRows) -> None:
        conn.executemany(
            "INSERT INTO files(id, change_id, path, old_path, status, skip_reason) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            self.files,
        )
        conn.executemany(
            "INSERT INTO hunks(change_id, file_id, old_start, old_length, new_start, "
            "new_length, section, symbol, content_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            self.hunks,
        )
        lines.add(self.line_sets, self.texts)
        derived.count_lines(self.line_sets)
        conn.executemany(
            "INSERT INTO symbols(change_id, path, qualified, kind, side) VALUES (?, ?, ?, ?, ?)",
            self.symbols,
        )
        conn.executemany("INSERT INTO issue_refs(change_id, issue) VALUES (?, ?)", self.issues)
        derived.add_code_words(self.code_words)
