"""Rarity, code-word frequencies and the text model after a run that adds a few changes: only
what moved is counted again, and the index ends up as a recount from scratch leaves it."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path

import pytest

from detector.text import weigh
from index.indexer import index_repository
from index.metadata import PullMetadata
from index.questions.lookup import TERM_WEIGHT, TERM_WEIGHT_JOINS
from index.storage.store import IndexStore
from tests.repo_builder import RepoBuilder
from tests.test_index import _busy_history, postings, postings_of_lines, rows

DERIVED = (
    "SELECT hash, df, removed, added FROM line_df ORDER BY hash",
    "SELECT change_id, removed_rows, added_rows, removed_log, added_log FROM rarity_sums "
    "ORDER BY change_id",
    "SELECT id, removed_weight, added_weight FROM changes ORDER BY id",
    "SELECT term, idf, df FROM term_idf ORDER BY term",
    "SELECT change_id, term, tf FROM term_tf ORDER BY change_id, term",
    "SELECT change_id, norm FROM text_norms ORDER BY change_id",
    "SELECT change_id, digest, counts, terms FROM text_docs ORDER BY change_id",
    "SELECT word, df FROM code_word_df ORDER BY word",
    "SELECT key, value FROM meta WHERE key IN "
    "('change_count', 'code_word_changes', 'text_model', 'derived_stale') ORDER BY key",
)
# More words than a text vector keeps: "shared" is among the heaviest 40 while few changes
# use it, and drops out once more do.
LONG_BODY = "shared " + " ".join(f"topic{n}" for n in range(41))


def _meta(number: int, title: str, body: str | None = None) -> PullMetadata:
    return PullMetadata(number, title, body, None, None, None, None, None, None, None)


def _recounted(db: Path, copy: Path) -> Path:
    """A copy of the index whose derived data was counted again from every row."""
    source, target = sqlite3.connect(db), sqlite3.connect(copy)
    source.backup(target)  # with what is still in the write-ahead log
    source.close()
    target.close()
    with IndexStore(copy) as store:
        # Not following a run: the refresh counts everything.
        assert store.derived.line_counts is None
        store.derived.refresh()
        store.derived.rebuild_code_word_df()
    return copy


def _history(builder: RepoBuilder) -> RepoBuilder:
    """`_busy_history`, a direct commit that removes a line PR 1 added, and an open PR that
    alone uses a name."""
    _busy_history(builder)
    pipeline = builder.repo.git.show("main:pkg/a.py")
    builder.commit("Drop step 1", {"pkg/a.py": pipeline.replace("        self.step1 = 1\n", "")})
    builder.pr_branch(25, [("Helper", {"pkg/h.py": "def obsolete_helper():\n    pass\n"})])
    return builder


# PR 3 has the long text; five PRs' titles say "shared" at first.
FIRST_METADATA = {
    number: _meta(number, f"Step {number} shared", LONG_BODY if number == 3 else None)
    for number in range(1, 6)
}


def _a_day_of_work(builder: RepoBuilder) -> None:
    """A new PR, an open PR whose head moved, one that lands, a rebased one, a direct commit,
    and a PR from an older base that removes the line a commit since removed (its rarity, and
    so that commit's weight, moves)."""
    older = builder.head("main~1")
    pipeline = builder.repo.git.show(f"{older}:pkg/a.py")
    builder.pr_branch(
        24,
        [("Drop step 1 too, shared", {"pkg/a.py": pipeline.replace("self.step1 = 1\n", "")})],
        start=older,
    )
    stage = builder.repo.git.show("main:pkg/stage.py")
    pipeline = builder.repo.git.show("main:pkg/a.py")
    builder.pr_branch(
        22, [("Tune the shared stage", {"pkg/stage.py": stage.replace("* 2", "* 3")})]
    )
    builder.pr_branch(20, [("Open a, again", {"pkg/a.py": pipeline.replace("x * 2", "x - 1")})])
    builder.pr_branch(25, [("Helper", {"pkg/h.py": "def helper():\n    pass\n"})])  # moved
    builder.merge_pr(21, how="squash")
    builder.pr_branch(23, [("Rebased", {"pkg/c.py": "def c():\n    return 'c'\n"})])
    builder.merge_pr(23, how="rebase")
    builder.commit(
        "Tidy shared", {"pkg/a.py": builder.repo.git.show("main:pkg/a.py") + "\nY = 2\n"}
    )


def test_a_run_that_adds_changes_updates_derived_data_as_a_recount_would(
    builder: RepoBuilder, tmp_path: Path
):
    repo = _history(builder)
    db = tmp_path / "index.db"
    index_repository(repo.path, db_path=db, metadata=FIRST_METADATA)
    with IndexStore(db) as store:  # what the next run sees: counts settled, so it follows them
        store.lines.prepare_lookup_indexes()
        store.derived.follow_counts()
        assert store.derived.line_counts is not None and store.derived.word_counts is not None
    long_text = "SELECT term FROM term_tf WHERE change_id = ? ORDER BY term"
    pr3 = rows(db, "SELECT id FROM changes WHERE number = 3")[0]
    kept = rows(db, long_text, pr3)
    assert ("shared",) in kept and len(kept) == 40

    _a_day_of_work(repo)
    # GitHub retitles a merged PR, and a long text's idf moves with every new change.
    index_repository(repo.path, db_path=db, metadata={6: _meta(6, "Step 6, shared now")})

    assert ("shared",) not in rows(db, long_text, pr3)  # its heaviest 40 were chosen again
    assert rows(db, "SELECT df FROM code_word_df WHERE word = 'obsolete_helper'") == []

    assert rows(db, "SELECT state FROM changes WHERE number IN (21, 22, 23) ORDER BY number") == [
        ("merged",),
        ("unmerged",),
        ("merged",),
    ]
    recounted = _recounted(db, tmp_path / "recounted.db")
    for sql in DERIVED:
        assert rows(db, sql) == rows(recounted, sql), sql
    # The lookup by hash followed every line row written and deleted (PR 20's and 25's heads
    # moved, 21 and 23 landed).
    assert postings(db) == postings_of_lines(db) != []


def test_an_interrupted_run_is_followed_by_a_recount(builder: RepoBuilder, tmp_path: Path):
    repo = _history(builder)
    db = tmp_path / "index.db"
    index_repository(repo.path, db_path=db)
    with IndexStore(db) as store:
        store.set_meta("derived_stale", "1")  # as a run stopped after its first write leaves it
        store.lines.prepare_lookup_indexes()
        store.derived.follow_counts()
        assert store.derived.line_counts is None and store.derived.word_counts is None


def test_text_weights_read_by_check_are_those_weigh_gives(builder: RepoBuilder, tmp_path: Path):
    repo = _history(builder)
    db = tmp_path / "index.db"
    index_repository(repo.path, db_path=db, metadata=FIRST_METADATA)
    _a_day_of_work(repo)
    index_repository(repo.path, db_path=db)

    texts = rows(db, "SELECT id, coalesce(title, '') || '\n' || coalesce(body, '') FROM changes")
    idf = dict(rows(db, "SELECT term, idf FROM term_idf"))
    sql = f"SELECT t.term, {TERM_WEIGHT} FROM term_tf t {TERM_WEIGHT_JOINS} WHERE t.change_id = ?"
    long_texts = 0
    for change_id, text in texts:
        assert dict(rows(db, sql, (change_id,))) == weigh(text, idf)
        long_texts += len(set(text.split())) > 40
    assert long_texts == 1
    documents = len(texts)
    assert all(
        value == math.log((documents + 1) / (df + 1)) + 1
        for value, df in rows(db, "SELECT idf, df FROM term_idf")
    )


def test_rarity_weights_are_each_changes_summed_line_weights(builder: RepoBuilder, tmp_path: Path):
    repo = _history(builder)
    db = tmp_path / "index.db"
    index_repository(repo.path, db_path=db)
    _a_day_of_work(repo)
    index_repository(repo.path, db_path=db)

    (total,) = rows(db, "SELECT value FROM meta WHERE key = 'change_count'")[0]
    expected = rows(
        db,
        "SELECT l.change_id, "
        "coalesce(sum(CASE WHEN l.side = '-' THEN ln((? + 1.0) / (d.df + 1)) + 0.05 END), 0), "
        "coalesce(sum(CASE WHEN l.side = '+' THEN ln((? + 1.0) / (d.df + 1)) + 0.05 END), 0) "
        "FROM lines l JOIN line_df d ON d.hash = l.hash GROUP BY l.change_id ORDER BY 1",
        (int(total), int(total)),
    )
    stored = rows(
        db,
        "SELECT id, removed_weight, added_weight FROM changes "
        "WHERE id IN (SELECT change_id FROM lines) ORDER BY id",
    )
    assert len(stored) == len(expected) > 10
    for (cid, removed, added), (other, want_removed, want_added) in zip(
        stored, expected, strict=True
    ):
        assert cid == other
        assert (removed, added) == pytest.approx((want_removed, want_added), rel=1e-9, abs=1e-9)
    sides = rows(
        db,
        "SELECT hash, count(DISTINCT CASE WHEN side = '-' THEN change_id END), "
        "count(DISTINCT CASE WHEN side = '+' THEN change_id END) FROM lines GROUP BY hash "
        "ORDER BY hash",
    )
    assert rows(db, "SELECT hash, removed, added FROM line_df ORDER BY hash") == sides
