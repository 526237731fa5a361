"""An index written by the previous schema (tree-sitter symbols, the old line table) upgrades
itself: `check` warns until `prdup index` has rebuilt it from git, keeping what git cannot
tell, and the rebuilt index gives the findings of a fresh one."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from index.indexer import index_repository
from index.metadata import PullMetadata
from index.storage.packed import unsqueeze
from index.storage.schema import SCHEMA_VERSION
from index.storage.store import IndexStore
from tests.repo_builder import RepoBuilder, run_cli
from tests.test_index import (
    ROWS_TO_COMPARE,
    _busy_history,
    as_line_rows,
    postings,
    postings_of_lines,
    rows,
)

PREVIOUS_SCHEMA = 6


def _as_previous_schema(db: Path) -> None:
    """Rewrite an index as the previous prdup left it: lines in a rowid table with two
    indexes, tree-sitter's qualified names as symbols, no pending texts."""
    with sqlite3.connect(db) as conn:
        _as_line_rows(conn)
        conn.executescript(
            f"""
            CREATE INDEX lines_change ON lines(change_id);
            CREATE INDEX lines_hash ON lines(hash, change_id);
            DROP TABLE line_texts_pending;
            UPDATE symbols SET qualified = 'Pipeline.' || qualified, kind = 'function';
            DELETE FROM meta WHERE key = 'reread_all';
            UPDATE meta SET value = '{PREVIOUS_SCHEMA}' WHERE key = 'schema_version';
            """
        )
        _code_words_a_row_per_word(conn)


def _titled(number: int, title: str) -> PullMetadata:
    return PullMetadata(number, title, None, None, None, None, None, None, None, None)


def _findings(repo: Path, db: Path, number: int) -> tuple[list[dict], list[str]]:
    code, out, _ = run_cli(
        repo, "check", "--pr", str(number), "--db", str(db), "--format", "json", "--min-score", "0"
    )
    assert code in (0, 1)
    result = json.loads(out)
    return result["findings"], result["warnings"]


def test_an_index_of_the_previous_schema_upgrades_and_gives_the_same_findings(
    builder: RepoBuilder, tmp_path: Path
):
    repo = _busy_history(builder).path
    fresh, old = tmp_path / "fresh.db", tmp_path / "old.db"
    imported = {20: _titled(20, "Imported from GitHub")}
    index_repository(repo, db_path=fresh, metadata=imported)
    index_repository(repo, db_path=old, metadata=imported)
    _as_previous_schema(old)

    _, warnings = _findings(repo, old, 21)  # opening it migrates the tables
    assert any("out of date" in warning for warning in warnings)
    assert rows(old, "SELECT value FROM meta WHERE key = 'schema_version'") == [
        (str(SCHEMA_VERSION),)
    ]

    index_repository(repo, db_path=old)  # without the metadata this time

    for sql in ROWS_TO_COMPARE:
        assert rows(old, sql) == rows(fresh, sql)
    # What only the old index knew (a title imported from GitHub) is kept.
    assert rows(old, "SELECT title FROM changes WHERE number = 20") == [("Imported from GitHub",)]
    for number in (20, 21):
        findings, warnings = _findings(repo, old, number)
        assert (findings, warnings) == _findings(repo, fresh, number)
        assert not warnings
    again = index_repository(repo, db_path=old)
    assert (again.merged, again.unmerged) == (0, 0)  # rebuilt once, then incremental as ever
    # A candidate's hunks shared with a query are read from an index alone, in either file.
    read = (
        "SELECT change_id, content_hash FROM hunks WHERE change_id IN (1, 2) AND content_hash = ?"
    )
    for db in (old, fresh):
        with sqlite3.connect(db) as conn:
            plan = " ".join(map(str, conn.execute(f"EXPLAIN QUERY PLAN {read}", (9,))))
        assert "COVERING INDEX hunks_change_content" in plan


LAYOUT_BEFORE_INCREMENTAL_DERIVED = 9


def _as_line_rows(conn: sqlite3.Connection, clustered: bool = False) -> None:
    """Lines as a row per line (a rowid table, or one keyed by change first), no packed sets
    and no lookup table by hash."""
    if clustered:
        conn.execute(
            "CREATE TABLE lines (change_id INTEGER NOT NULL, file_id INTEGER NOT NULL, "
            "side TEXT NOT NULL, hash INTEGER NOT NULL, "
            "PRIMARY KEY (change_id, file_id, side, hash)) WITHOUT ROWID"
        )
        as_line_rows(conn, "temp.decoded")
        conn.execute("INSERT INTO lines SELECT * FROM temp.decoded")
    else:
        as_line_rows(conn, "lines")
    conn.execute("DROP TABLE line_sets")
    conn.execute("DROP TABLE line_changes")


def _as_layout_before_incremental_derived(db: Path) -> None:
    """Rewrite an index as prdup left it before rarity and the text model followed the writes:
    text vectors stored as weights, no per-side counts, code words a row per word."""
    with sqlite3.connect(db) as conn:
        _as_line_rows(conn, clustered=True)
        conn.execute("CREATE INDEX lines_hash ON lines(hash, change_id)")
        conn.executescript(
            f"""
            CREATE TABLE terms (change_id INTEGER NOT NULL, term TEXT NOT NULL,
                                weight REAL NOT NULL);
            INSERT INTO terms SELECT t.change_id, t.term, t.tf * i.idf / n.norm FROM term_tf t
                JOIN term_idf i ON i.term = t.term JOIN text_norms n USING (change_id);
            CREATE INDEX terms_term ON terms(term);
            CREATE INDEX terms_change ON terms(change_id);
            DROP TABLE term_tf; DROP TABLE text_norms; DROP TABLE text_docs;
            DROP TABLE rarity_sums;
            ALTER TABLE term_idf DROP COLUMN df;
            ALTER TABLE line_df DROP COLUMN removed;
            ALTER TABLE line_df DROP COLUMN added;
            UPDATE meta SET value = '{LAYOUT_BEFORE_INCREMENTAL_DERIVED}'
                WHERE key = 'schema_version';
            """
        )
        _code_words_a_row_per_word(conn)


def _code_words_a_row_per_word(conn: sqlite3.Connection) -> None:
    conn.execute(
        "CREATE TABLE code_words (change_id INTEGER NOT NULL, word TEXT NOT NULL, "
        "count INTEGER NOT NULL, PRIMARY KEY (change_id, word)) WITHOUT ROWID"
    )
    for change_id, packed in conn.execute("SELECT change_id, words FROM change_words"):
        parts = unsqueeze(packed).split(" ")
        conn.executemany(
            "INSERT INTO code_words VALUES (?, ?, ?)",
            [(change_id, w, int(n)) for w, n in zip(parts[::2], parts[1::2], strict=True)],
        )
    conn.execute("DROP TABLE change_words")


def _verdicts(findings: list[dict]) -> list[tuple]:
    return [(f["pr"], f["verdict"], round(f["score"], 6)) for f in findings]


def test_an_index_from_before_incremental_rarity_upgrades_and_gives_the_same_findings(
    builder: RepoBuilder, tmp_path: Path
):
    from tests.test_derived import DERIVED

    repo = _busy_history(builder).path
    fresh, old = tmp_path / "fresh.db", tmp_path / "old.db"
    index_repository(repo, db_path=fresh)
    index_repository(repo, db_path=old)
    _as_layout_before_incremental_derived(old)

    # Opening it upgrades it in place: the old text vectors and code words are carried over.
    for number in (20, 21):
        findings, warnings = _findings(repo, old, number)
        assert _verdicts(findings) == _verdicts(_findings(repo, fresh, number)[0])
        assert any("out of date" in warning for warning in warnings)
    assert rows(old, "SELECT value FROM meta WHERE key = 'schema_version'") == [
        (str(SCHEMA_VERSION),)
    ]

    summary = index_repository(repo, db_path=old)  # recounts the derived data once

    assert (summary.merged, summary.unmerged) == (0, 0)
    for sql in (*ROWS_TO_COMPARE, *DERIVED):
        assert rows(old, sql) == rows(fresh, sql), sql
    for number in (20, 21):
        assert _findings(repo, old, number) == _findings(repo, fresh, number)


LAYOUT_OF_A_ROW_PER_LINE = 12


def test_an_index_of_a_row_per_line_is_packed_on_opening(builder: RepoBuilder, tmp_path: Path):
    """Line rows are packed, their lookup by hash built and code words compressed when the
    index is opened: `check` finds what it found on a fresh index at once, with no run of
    `prdup index` between."""
    repo = _busy_history(builder).path
    fresh, old = tmp_path / "fresh.db", tmp_path / "old.db"
    index_repository(repo, db_path=fresh)
    index_repository(repo, db_path=old)
    with sqlite3.connect(old) as conn:
        _as_line_rows(conn, clustered=True)
        for change_id, words in conn.execute("SELECT * FROM change_words").fetchall():
            conn.execute(
                "UPDATE change_words SET words = ? WHERE change_id = ?",
                (unsqueeze(words), change_id),
            )
        conn.executescript(
            f"""
            CREATE INDEX lines_hash ON lines(hash, change_id);
            UPDATE meta SET value = '{LAYOUT_OF_A_ROW_PER_LINE}' WHERE key = 'schema_version';
            """
        )

    for number in (20, 21):
        findings, warnings = _findings(repo, old, number)
        assert findings and (findings, warnings) == _findings(repo, fresh, number)
        assert not warnings
    assert postings(old) == postings(fresh) == postings_of_lines(old) != []
    words = "SELECT change_id, typeof(words), words FROM change_words ORDER BY change_id"
    assert rows(old, words) == rows(fresh, words) != []
    assert {kind for _, kind, _ in rows(old, words)} == {"blob"}
    assert "lines_hash" not in {
        name for (name,) in rows(old, "SELECT name FROM sqlite_master WHERE type = 'index'")
    }


def test_packing_a_large_row_per_line_table_gives_its_space_back(
    builder: RepoBuilder, tmp_path: Path
):
    """The file shrinks to the packed layout's size, rather than keep the dropped table's
    pages empty."""
    repo = _busy_history(builder).path
    db = tmp_path / "index.db"
    index_repository(repo, db_path=db)
    with sqlite3.connect(db) as conn:
        _as_line_rows(conn, clustered=True)
        (pr,) = conn.execute("SELECT id FROM changes WHERE number = 21").fetchone()
        # 10,000 lines in each of four files, hashed as line hashes are (64-bit, spread out).
        conn.executemany(
            "INSERT INTO lines VALUES (?, ?, '+', ?)",
            (
                (pr, -file_id, (n * 0x9E3779B97F4A7C15) % (1 << 63))
                for file_id in range(1, 5)
                for n in range(10_000)
            ),
        )
        conn.execute(
            f"UPDATE meta SET value = '{LAYOUT_OF_A_ROW_PER_LINE}' WHERE key = 'schema_version'"
        )
    conn.close()  # the last connection: the write-ahead log is written back into the file
    before = db.stat().st_size

    IndexStore(db).close()

    ((free,),), ((pages,),) = rows(db, "PRAGMA freelist_count"), rows(db, "PRAGMA page_count")
    assert free * 10 <= pages
    assert db.stat().st_size < before * 0.8
    assert rows(db, "SELECT count(*) FROM lines WHERE change_id = ?", (pr,))[0][0] > 40_000
