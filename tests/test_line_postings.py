"""The lines' lookup by hash (`line_changes`) holds exactly an entry per stored line, whatever
order the writes come in, and is read in the order an index on (hash, change) gave: a first
run finished by another run, a change saved twice in one batch, a change saved again later,
and an upgrade killed half-way."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from detector.model import line_hash
from index.config import Settings
from index.git.stored_diff import parse_stored
from index.indexer import index_repository
from index.questions.probe import _landings_from_index
from index.storage.change_rows import ChangeRecord
from index.storage.store import IndexStore
from tests.repo_builder import RepoBuilder
from tests.test_index import _busy_history, postings, postings_of_lines, rows
from tests.test_upgrade import LAYOUT_OF_A_ROW_PER_LINE, _as_line_rows

ROOT = Path(__file__).resolve().parents[1]


def _added_file(name: str, body: list[str]) -> str:
    added = "".join(f"+{line}\n" for line in body)
    return (
        f"diff --git a/{name} b/{name}\nnew file mode 100644\n--- /dev/null\n+++ b/{name}\n"
        f"@@ -0,0 +1,{len(body)} @@\n{added}"
    )


def _commit(sha: str, state: str = "merged") -> ChangeRecord:
    return ChangeRecord(kind="commit", state=state, source="direct", sha=sha * 40)


def _save(store: IndexStore, sha: str, name: str, body: list[str], state: str = "merged") -> int:
    return store.changes.save(
        _commit(sha, state), parse_stored(_added_file(name, body), Settings())
    )


def test_a_first_run_finished_by_another_run_is_followed_to_its_end(tmp_path: Path):
    """Two `prdup index` at once: the second finds the first's rows and counts everything,
    lookup by hash included; the first's later writes are followed from then on."""
    db = tmp_path / "index.db"
    first = IndexStore(db)
    first.lines.prepare_lookup_indexes()  # an empty index: its lookup by hash waits for the end
    _save(first, "1", "a.py", ["alpha = compute_alpha()", "shared_line = 42"])
    second = IndexStore(db)
    second.lines.prepare_lookup_indexes()
    second.derived.follow_counts()
    second.derived.refresh()  # a full count: the lookup is built
    second.close()
    _save(first, "2", "b.py", ["beta = compute_beta()", "shared_line = 42"])
    first.close()

    assert postings(db) == postings_of_lines(db)
    assert len(postings(db)) == 3


def test_a_change_saved_twice_in_one_batch_or_deleted_leaves_no_entry_behind(tmp_path: Path):
    db = tmp_path / "index.db"
    with IndexStore(db) as store:
        _save(store, "1", "a.py", ["alpha = compute_alpha()", "shared_line = 42"])
        body = {
            "a.py": ["gamma = compute_gamma()", "shared_line = 42"],
            "b.py": ["shared_line = 42"],
            "c.py": ["delta = compute_delta()", "shared_line = 42"],
        }
        store.changes.save_many(
            [
                (_commit(sha), parse_stored(_added_file(name, body[name]), Settings()), None)
                for sha, name in (("1", "a.py"), ("2", "b.py"), ("1", "c.py"))
            ]
        )
        assert postings(db) == postings_of_lines(db)
        store.changes.delete(rows(db, "SELECT id FROM changes WHERE sha = ?", ("2" * 40,))[0][0])
    assert postings(db) == postings_of_lines(db)
    assert [len(entries) for _, entries in postings(db)] == [1, 1]  # delta, and the shared line


def test_changes_are_found_in_change_order_however_they_were_written(tmp_path: Path):
    """A change saved again has its entries appended; it is still found in its place, so
    ties between changes are broken as on an index built at once."""
    db = tmp_path / "index.db"
    with IndexStore(db) as store:
        first = _save(store, "1", "a.py", ["shared_line = 42"], state="open")
        second = _save(store, "2", "b.py", ["shared_line = 42"], state="open")
        _save(store, "1", "c.py", ["shared_line = 42"], state="open")  # its head moved
        (line,) = {h for h, _ in postings(db)}
        assert [cid for cid, _, _ in store.lines.changes_with([line])] == [first, second]


def test_landings_that_tie_are_taken_removed_lines_first(tmp_path: Path):
    """Of two merged changes that account for as many of a branch's lines, the one that
    removed a line the branch no longer has comes first, as it always did, even where the
    line the other added sorts before it."""
    texts = sorted(["alpha = compute_alpha()", "beta = compute_beta()"], key=line_hash)
    added, removed = texts  # the added line's hash is the smaller
    db = tmp_path / "index.db"
    with IndexStore(db) as store:
        _save(store, "b", "b.py", [added])
        removal = "diff --git a/a.py b/a.py\ndeleted file mode 100644\n--- a/a.py\n+++ /dev/null\n"
        removal += f"@@ -1 +0,0 @@\n-{removed}\n"
        store.changes.save(_commit("a"), parse_stored(removal, Settings()))
        landings, _ = _landings_from_index(
            store, {line_hash(removed)}, {line_hash(added)}, {"a" * 40, "b" * 40}
        )
    assert [landing.commit[:1] for landing in landings] == ["a", "b"]


def test_an_upgrade_killed_half_way_is_applied_again_when_next_opened(
    builder: RepoBuilder, tmp_path: Path
):
    """Packing an index's lines is one transaction: killed while it runs, the index is left
    as it was, and the next opening packs it as an upgrade never interrupted does."""
    repo = _busy_history(builder).path
    killed, whole = tmp_path / "killed.db", tmp_path / "whole.db"
    index_repository(repo, db_path=killed)
    with sqlite3.connect(killed) as conn:
        _as_line_rows(conn, clustered=True)
        (pr,) = conn.execute("SELECT id FROM changes WHERE number = 21").fetchone()
        conn.executemany(  # enough lines that packing them takes a while
            "INSERT INTO lines VALUES (?, ?, '+', ?)",
            ((pr, -(n % 50) - 1, (n * 0x9E3779B97F4A7C15) % (1 << 63)) for n in range(400_000)),
        )
        conn.execute(
            f"UPDATE meta SET value = '{LAYOUT_OF_A_ROW_PER_LINE}' WHERE key = 'schema_version'"
        )
    conn.close()
    with sqlite3.connect(killed) as source, sqlite3.connect(whole) as target:
        source.backup(target)
    source.close()
    target.close()

    opener = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"from index.storage.store import IndexStore; IndexStore({str(killed)!r})",
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    # The upgrade holds the write lock from its start to its commit: stop it once the lock
    # has been held for a while (opening takes it for an instant before, too).
    watcher = sqlite3.connect(killed, timeout=0, isolation_level=None)
    held_since = None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and opener.poll() is None:
        try:
            watcher.execute("BEGIN IMMEDIATE")
            watcher.execute("ROLLBACK")
            held_since = None
        except sqlite3.OperationalError:
            held_since = held_since or time.monotonic()
            if time.monotonic() - held_since > 0.2:
                break
        time.sleep(0.005)
    assert opener.poll() is None, "the upgrade ended before it could be stopped"
    opener.send_signal(signal.SIGKILL)
    opener.wait()
    watcher.close()
    assert rows(killed, "SELECT value FROM meta WHERE key = 'schema_version'") == [
        (str(LAYOUT_OF_A_ROW_PER_LINE),)
    ]

    IndexStore(killed).close()
    IndexStore(whole).close()

    for sql in (
        "SELECT value FROM meta WHERE key = 'schema_version'",
        "SELECT change_id, file_id, side, hashes FROM line_sets ORDER BY 1, 2, 3",
        "SELECT hash, changes FROM line_changes ORDER BY hash",
        "SELECT change_id, words FROM change_words ORDER BY change_id",
    ):
        assert rows(killed, sql) == rows(whole, sql), sql
    assert postings(killed) == postings_of_lines(killed)
