"""A target rewound (a force-push that drops commits and adds others, a reset): the next run
removes what left its history, and the index ends up as a fresh index of the same repository
state, row for row (compared on content: row ids differ)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from index.indexer import index_repository
from index.metadata import PullMetadata
from index.storage.store import IndexStore
from tests.repo_builder import RepoBuilder
from tests.test_derived import DERIVED
from tests.test_index import PIPELINE, rows

# Every column of a change but its row id, which a rerun does not keep.
CHANGE_COLUMNS = (
    "kind, number, sha, head_sha, base_sha, merge_commit, target, base_ref, state, source, "
    "title, body, author, author_email, created_at, merged_at, closed_at, patch_id, "
    "file_count, added, removed, status, skip_reason, truncated, removed_weight, "
    "added_weight, words_counted"
)
KEY = "c.kind, c.number, c.sha"  # what tells a change in both indexes
BY_CHANGE = (
    f"SELECT {KEY}, f.path, f.old_path, f.status, f.skip_reason FROM files f "
    "JOIN changes c ON c.id = f.change_id",
    f"SELECT {KEY}, f.path, h.old_start, h.old_length, h.new_start, h.new_length, h.symbol, "
    "h.content_hash FROM hunks h JOIN changes c ON c.id = h.change_id "
    "JOIN files f ON f.id = h.file_id",
    f"SELECT {KEY}, s.path, s.qualified, s.kind, s.side FROM symbols s "
    "JOIN changes c ON c.id = s.change_id",
    f"SELECT {KEY}, i.issue FROM issue_refs i JOIN changes c ON c.id = i.change_id",
    f"SELECT {KEY}, w.words FROM change_words w JOIN changes c ON c.id = w.change_id",
    f"SELECT {KEY}, r.removed_rows, r.added_rows, r.removed_log, r.added_log "
    "FROM rarity_sums r JOIN changes c ON c.id = r.change_id",
    f"SELECT {KEY}, t.term, t.tf FROM term_tf t JOIN changes c ON c.id = t.change_id",
    f"SELECT {KEY}, n.norm FROM text_norms n JOIN changes c ON c.id = n.change_id",
    f"SELECT {KEY}, d.digest, d.counts, d.terms FROM text_docs d "
    "JOIN changes c ON c.id = d.change_id",
)
# Derived tables keyed by hash, term or word, and the counts in `meta` (`tests/test_derived.py`).
BY_VALUE = tuple(sql for sql in DERIVED if "change_id" not in sql and "FROM changes" not in sql)


def _key(row: Any) -> tuple:
    """A row in a sortable form (SQLite's NULLs sort first)."""
    return tuple((value is not None, value) for value in row)


def _contents(db: Path) -> dict[str, list]:
    """Everything the index holds about its changes, on content."""
    found: dict[str, list] = {
        "changes": sorted(rows(db, f"SELECT {CHANGE_COLUMNS} FROM changes"), key=_key)
    }
    for sql in (*BY_CHANGE, *BY_VALUE):
        found[sql] = sorted(rows(db, sql), key=_key)
    with IndexStore(db) as store:
        keys = {
            change_id: (kind, number, sha)
            for change_id, kind, number, sha in store.rows(
                "SELECT id, kind, number, sha FROM changes"
            )
        }
        paths = dict(store.rows("SELECT id, path FROM files"))
        ids = sorted(keys)
        found["lines"] = sorted(
            ((*keys[cid], paths[fid], side, h) for cid, fid, side, h in store.lines.rows_of(ids)),
            key=_key,
        )
        found["line texts"] = sorted(
            ((*keys[cid], texts) for cid, texts in store.lines.texts_of(ids).items()), key=_key
        )
        hashes = [h for (h,) in store.rows("SELECT hash FROM line_df")]
        found["lines by hash"] = sorted(
            ((*keys[cid], side, h) for cid, side, h in store.lines.changes_with(hashes)),
            key=_key,
        )
    return found


def _history(builder: RepoBuilder) -> RepoBuilder:
    """main with merged, squashed and fast-forwarded PRs and direct commits, and two open PRs:
    PR 4 from an older commit, PR 8 from the tip."""
    builder.commit("Initial pipeline", {"pipeline.py": PIPELINE, "README.md": "hello\n"})
    builder.pr_branch(1, [("Double faster", {"pipeline.py": PIPELINE.replace("x * 2", "x + x")})])
    builder.merge_pr(1, how="merge")
    builder.pr_branch(2, [("Docs: say hi", {"README.md": "hello world\n"})])
    builder.merge_pr(2, how="squash")
    builder.commit("Direct tweak", {"NOTES.txt": "a note\n"})
    builder.pr_branch(4, [("Open: config notes", {"NOTES.txt": "a note\nconfig: on\n"})])
    # The five first-parent commits the force-push drops.
    builder.pr_branch(5, [("Ready flag", {"ready.py": "READY = True\n"})])
    builder.merge_pr(5, how="merge")
    builder.commit("Tune the run", {"tune.py": "def tune():\n    return 3\n"})
    builder.pr_branch(6, [("Fast helper", {"helper.py": "def helper():\n    return 6\n"})])
    builder.merge_pr(6, how="rebase")  # a fast-forward: PR 6 takes over its commit's row
    builder.pr_branch(7, [("Offload setting", {"offload.py": "OFFLOAD = 'cpu'\n"})])
    builder.merge_pr(7, how="squash")
    builder.commit("Another note", {"NOTES.txt": "a note\nanother\n"})
    builder.pr_branch(8, [("Open: tune more", {"tune.py": "def tune():\n    return 4\n"})])
    return builder


def _force_push(builder: RepoBuilder) -> None:
    """main loses its last five commits and gets two others: PR 7 squashed again, and a
    direct commit."""
    builder.git("reset", "-q", "--hard", "main~5")
    builder.commit("Offload setting, again (#7)", {"offload.py": "OFFLOAD = 'gpu'\n"})
    builder.commit("Direct instead", {"other.py": "OTHER = 1\n"})


def test_a_rewound_target_leaves_the_index_a_fresh_index_would_be(
    builder: RepoBuilder, tmp_path: Path
):
    repo = _history(builder)
    db, fresh = tmp_path / "index.db", tmp_path / "fresh.db"
    first = index_repository(repo.path, db_path=db)
    assert (first.merged, first.commits, first.unmerged) == (5, 4, 2)

    _force_push(repo)
    summary = index_repository(repo.path, db_path=db)
    index_repository(repo.path, db_path=fresh)

    expected = _contents(fresh)
    for table, found in _contents(db).items():
        assert found == expected[table], table
    # PRs 5 and 6 are unmerged again, as their refs say; 7 landed on the new commit; 8 was
    # read again from where it now leaves main.
    states = "SELECT number, state, merge_commit FROM changes WHERE number IS NOT NULL"
    assert dict((n, (s, m)) for n, s, m in rows(db, states)) == {
        1: ("merged", repo.head("main~4")),
        2: ("merged", repo.head("main~3")),
        4: ("unmerged", None),
        5: ("unmerged", None),
        6: ("unmerged", None),
        7: ("merged", repo.head("main~1")),
        8: ("unmerged", None),
    }
    assert summary.rewound == {"main": 5}
    line = summary.line()
    assert line.endswith("\n  main was rewound: 5 changes no longer on it removed from the index")


def test_a_reset_with_nothing_new_removes_what_left(builder: RepoBuilder, tmp_path: Path):
    """A plain `git reset --hard` back two commits: the history is an ancestor of what was
    indexed, so nothing new is read, and the two commits' changes go."""
    repo = _history(builder)
    db = tmp_path / "index.db"
    index_repository(repo.path, db_path=db)
    dropped = [repo.head("main"), repo.head("main~1")]  # "Another note", PR 7's squash

    repo.git("reset", "-q", "--hard", "main~2")
    summary = index_repository(repo.path, db_path=db)

    assert summary.rewound == {"main": 2}
    assert "main was rewound: 2 changes" in summary.line()
    marks = ",".join("?" * len(dropped))
    assert rows(db, f"SELECT sha FROM changes WHERE sha IN ({marks})", tuple(dropped)) == []
    assert rows(db, "SELECT state, sha FROM changes WHERE number = 7") == [
        ("unmerged", repo.head("refs/pull/7/head"))
    ]
    again = index_repository(repo.path, db_path=db)
    assert not again.rewound and "rewound" not in again.line()


def test_a_removed_pr_keeps_what_was_imported_from_github(builder: RepoBuilder, tmp_path: Path):
    """PR 5's landing left main; its ref is read again, with the title and base branch an
    earlier run imported (git cannot tell them again), as a fresh index given them has it."""
    repo = _history(builder)
    db, fresh = tmp_path / "index.db", tmp_path / "fresh.db"
    opened = "2023-11-01T09:00:00Z"
    imported = {
        5: PullMetadata(5, "Imported title", "Why.", None, opened, None, None, None, "main", "gh")
    }
    index_repository(repo.path, db_path=db, metadata=imported)

    _force_push(repo)
    index_repository(repo.path, db_path=db)
    index_repository(repo.path, db_path=fresh, metadata=imported)

    pr5 = f"SELECT {CHANGE_COLUMNS} FROM changes WHERE number = 5"
    assert rows(db, pr5) == rows(fresh, pr5)
    assert rows(db, "SELECT state, title, created_at, base_ref FROM changes WHERE number = 5") == [
        ("unmerged", "Imported title", opened, "main")  # the import named no state
    ]
