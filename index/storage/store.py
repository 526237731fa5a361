"""The index: its file (`index_file`) and the parts that write and read its tables."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from index.storage.change_rows import ChangeRows
from index.storage.derived import DerivedRows
from index.storage.index_file import IndexFile
from index.storage.landing_rows import LandingRows
from index.storage.line_rows import LineRows

DEFAULT_DB_NAME = "prdup.db"


def default_db_path(repo: Any) -> Path:
    """Inside the git directory: never committed, shared by every work tree of the clone."""
    return Path(repo.git_dir) / DEFAULT_DB_NAME


class IndexStore(IndexFile):
    """An open index: the file, and its parts, each writing and reading the tables it owns on
    the file's connection and in its transactions: `changes` (a change and its diff's rows),
    `lines` (changed lines, their lookup by hash and texts), `derived` (rarity, the text and
    code models) and `landings` (how PRs landed). GitHub's records (`index.github`) and the
    sweep's cache (`index.questions.sweep_cache`) keep theirs beside the rooms that use them.
    """

    def __init__(self, path: str | Path, *, create: bool = True, timeout: float = 5.0) -> None:
        super().__init__(path, create=create, timeout=timeout)
        self.lines = LineRows(self)
        self.derived = DerivedRows(self, self.lines)
        self.landings = LandingRows(self)
        self.changes = ChangeRows(self, self.lines, self.derived, self.landings)
