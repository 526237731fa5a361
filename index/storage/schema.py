"""The index's SQLite schema, in one place, with numbered migrations.

A database records its `schema_version` in `meta`; opening it applies the migrations it lacks,
in order, each in its own transaction, so an old index upgrades itself and a new one is built
by running them all.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import sqlite3
from collections.abc import Callable

from index.storage import line_sets
from index.storage.packed import pack_counts, squeeze

Migration = Callable[[sqlite3.Connection], None]

# Indexes keyed by values that arrive in random order (names, paths, words). Inserting rows
# one batch at a time into them costs more than the rows themselves, so a run that starts from
# an empty index drops them and sorts them in once at its end (the lines' lookup by hash is
# built the same way: `index.storage.line_postings`).
LOOKUP_INDEXES = {
    "files_path": "files(path)",
    "symbols_name": "symbols(qualified, path)",
    "code_terms_word": "code_terms(word)",
}


def create_lookup_indexes(conn: sqlite3.Connection) -> None:
    """Create the missing ones, on whichever of their tables exist (a migration adds tables)."""
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    for name, columns in LOOKUP_INDEXES.items():
        if columns.split("(")[0] in tables:
            conn.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {columns}")


def drop_lookup_indexes(conn: sqlite3.Connection) -> None:
    for name in LOOKUP_INDEXES:
        conn.execute(f"DROP INDEX IF EXISTS {name}")


def _initial(conn: sqlite3.Connection) -> None:
    conn.executescript(
        """
        CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);

        -- One row per PR (kind 'pr', keyed by number) or per direct commit on a target branch
        -- (kind 'commit', keyed by sha). `sha` is the commit whose diff is stored: the merge or
        -- squash commit for a landed PR, the PR head otherwise.
        CREATE TABLE IF NOT EXISTS changes (
            id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL,
            number INTEGER UNIQUE,
            sha TEXT,
            head_sha TEXT,
            base_sha TEXT,
            merge_commit TEXT,
            target TEXT,
            base_ref TEXT,
            state TEXT NOT NULL,
            source TEXT NOT NULL,
            title TEXT,
            body TEXT,
            author TEXT,
            created_at TEXT,
            merged_at TEXT,
            closed_at TEXT,
            patch_id TEXT,
            file_count INTEGER DEFAULT 0,
            added INTEGER DEFAULT 0,
            removed INTEGER DEFAULT 0,
            status TEXT NOT NULL,
            skip_reason TEXT,
            truncated INTEGER DEFAULT 0
        );
        CREATE UNIQUE INDEX IF NOT EXISTS changes_commit ON changes(sha) WHERE kind = 'commit';
        CREATE INDEX IF NOT EXISTS changes_sha ON changes(sha);
        CREATE INDEX IF NOT EXISTS changes_head ON changes(head_sha);
        CREATE INDEX IF NOT EXISTS changes_patch ON changes(patch_id);

        CREATE TABLE IF NOT EXISTS files (
            id INTEGER PRIMARY KEY,
            change_id INTEGER NOT NULL REFERENCES changes(id) ON DELETE CASCADE,
            path TEXT NOT NULL,
            old_path TEXT NOT NULL,  -- empty when the file was not renamed
            status TEXT NOT NULL,
            skip_reason TEXT  -- why an ignored file, or a file cut from a huge change, has no lines
        );
        CREATE INDEX IF NOT EXISTS files_change ON files(change_id);

        CREATE TABLE IF NOT EXISTS hunks (
            id INTEGER PRIMARY KEY,
            change_id INTEGER NOT NULL REFERENCES changes(id) ON DELETE CASCADE,
            file_id INTEGER NOT NULL,
            old_start INTEGER, old_length INTEGER, new_start INTEGER, new_length INTEGER,
            section TEXT,  -- left empty: `symbol`, parsed from the hunk header, is what is read
            symbol TEXT,
            content_hash INTEGER NOT NULL
        );
        CREATE INDEX IF NOT EXISTS hunks_change ON hunks(change_id);

        -- Non-trivial normalised changed lines. No context, no line numbers in the hash.
        CREATE TABLE IF NOT EXISTS lines (
            change_id INTEGER NOT NULL,
            file_id INTEGER NOT NULL,
            side TEXT NOT NULL,
            hash INTEGER NOT NULL
        );
        CREATE INDEX IF NOT EXISTS lines_change ON lines(change_id);

        CREATE TABLE IF NOT EXISTS line_texts (hash INTEGER PRIMARY KEY, text TEXT NOT NULL);
        -- How many changes remove, or add, each line hash (the larger): rarity weights for the
        -- matcher. Rebuilt after
        -- every run that wrote something.
        CREATE TABLE IF NOT EXISTS line_df (hash INTEGER PRIMARY KEY, df INTEGER NOT NULL);

        CREATE TABLE IF NOT EXISTS symbols (
            change_id INTEGER NOT NULL,
            path TEXT NOT NULL,
            qualified TEXT NOT NULL,
            kind TEXT,
            side TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS symbols_change ON symbols(change_id);

        CREATE TABLE IF NOT EXISTS issue_refs (
            change_id INTEGER NOT NULL,
            issue TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS issue_refs_issue ON issue_refs(issue);
        CREATE INDEX IF NOT EXISTS issue_refs_change ON issue_refs(change_id);

        -- Text model, fitted at index time so `check` never imports scikit-learn.
        CREATE TABLE IF NOT EXISTS terms (
            change_id INTEGER NOT NULL,
            term TEXT NOT NULL,
            weight REAL NOT NULL
        );
        CREATE INDEX IF NOT EXISTS terms_term ON terms(term);
        CREATE INDEX IF NOT EXISTS terms_change ON terms(change_id);
        CREATE TABLE IF NOT EXISTS term_idf (term TEXT PRIMARY KEY, idf REAL NOT NULL);

        -- Maintainers' "not a duplicate" decisions: never report this pair again.
        CREATE TABLE IF NOT EXISTS dismissals (
            number INTEGER NOT NULL,
            other INTEGER NOT NULL,
            by TEXT,
            at TEXT,
            PRIMARY KEY (number, other)
        );
        """
    )
    create_lookup_indexes(conn)


def _sweep_cache(conn: sqlite3.Connection) -> None:
    """`prdup sweep`'s cache: each open PR's deciding findings, reused while their inputs hold."""
    conn.executescript(
        """
        -- One row per swept open PR: its deciding findings (JSON), valid while its head, the
        -- matcher (fingerprint) and every change it was matched against stay as they were.
        CREATE TABLE IF NOT EXISTS sweep_results (
            number INTEGER PRIMARY KEY,
            head_sha TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            change_count INTEGER NOT NULL,
            findings TEXT NOT NULL
        );
        -- Every change as the last sweep saw it, to tell which ones an `index` run changed.
        CREATE TABLE IF NOT EXISTS sweep_seen (
            change_id INTEGER PRIMARY KEY,
            sha TEXT,
            state TEXT NOT NULL,
            status TEXT NOT NULL
        );
        """
    )


def _line_weight_totals(conn: sqlite3.Connection) -> None:
    """Each change's total rarity weight per side, so `check` need not read a candidate's lines
    beyond those it shares with the query (filled by the rarity rebuild)."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(changes)")}
    for column in ("removed_weight", "added_weight"):
        if column not in columns:
            conn.execute(f"ALTER TABLE changes ADD COLUMN {column} REAL")
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('derived_stale', '1')")


def _author_emails(conn: sqlite3.Connection) -> None:
    """The e-mail of whoever wrote a change's head commit: the same person often appears under
    a GitHub login in metadata and a real name in git, and the e-mail ties the two together
    (filled by `prdup index`, for old rows too)."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(changes)")}
    if "author_email" not in columns:
        conn.execute("ALTER TABLE changes ADD COLUMN author_email TEXT")


def _sweep_seen_details(conn: sqlite3.Connection) -> None:
    """A digest of each change's title, body length and author as the last sweep saw them:
    an edited title or a newly known author changes scores and verdicts, not only a new head."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(sweep_seen)")}
    if "details" not in columns:
        conn.execute("ALTER TABLE sweep_seen ADD COLUMN details TEXT")


def _code_words(conn: sqlite3.Connection) -> None:
    """The identifiers each change's lines use, in how many changes each appears, and each
    change's vector of them, weighed at index time (`check` reads only the words a query shares
    with a candidate, as for title terms); `words_counted` marks the changes already read, some
    of which have none. They rank candidates that share no line (filled by `prdup index`, for
    old rows too)."""
    conn.executescript(
        """
        CREATE TABLE IF NOT EXISTS code_words (
            change_id INTEGER NOT NULL,
            word TEXT NOT NULL,
            count INTEGER NOT NULL
        );
        CREATE INDEX IF NOT EXISTS code_words_change ON code_words(change_id);
        CREATE TABLE IF NOT EXISTS code_word_df (word TEXT PRIMARY KEY, df INTEGER NOT NULL);
        CREATE TABLE IF NOT EXISTS code_terms (
            change_id INTEGER NOT NULL,
            word TEXT NOT NULL,
            weight REAL NOT NULL
        );
        CREATE INDEX IF NOT EXISTS code_terms_change ON code_terms(change_id, word);
        ALTER TABLE changes ADD COLUMN words_counted INTEGER NOT NULL DEFAULT 0;
        """
    )
    create_lookup_indexes(conn)


def _lines_by_change(conn: sqlite3.Connection) -> None:
    """Changed lines, code words and code vectors clustered by change (WITHOUT ROWID tables
    keyed by change first): a change's rows are read without a separate index, and a first
    run appends them in key order. The rows are the same (each file's distinct lines per
    side); the texts of lines written by a first run wait in `line_texts_pending` until its
    end."""
    conn.executescript(
        """
        CREATE TABLE lines_by_change (
            change_id INTEGER NOT NULL,
            file_id INTEGER NOT NULL,
            side TEXT NOT NULL,
            hash INTEGER NOT NULL,
            PRIMARY KEY (change_id, file_id, side, hash)
        ) WITHOUT ROWID;
        INSERT OR IGNORE INTO lines_by_change(change_id, file_id, side, hash)
            SELECT change_id, file_id, side, hash FROM lines
            ORDER BY change_id, file_id, side, hash;
        DROP TABLE lines;
        ALTER TABLE lines_by_change RENAME TO lines;
        -- Texts of lines a first run wrote, appended unsorted and merged into line_texts at
        -- its end (inserting them in hash order as they come costs most of a first run).
        CREATE TABLE IF NOT EXISTS line_texts_pending (hash INTEGER NOT NULL, text TEXT NOT NULL);

        -- A change's words and its vector, keyed by change and word: no separate index on
        -- the change (a quarter of a large index was such indexes).
        CREATE TABLE code_words_by_change (
            change_id INTEGER NOT NULL,
            word TEXT NOT NULL,
            count INTEGER NOT NULL,
            PRIMARY KEY (change_id, word)
        ) WITHOUT ROWID;
        INSERT OR IGNORE INTO code_words_by_change SELECT change_id, word, count FROM code_words;
        DROP TABLE code_words;
        ALTER TABLE code_words_by_change RENAME TO code_words;
        CREATE TABLE code_terms_by_change (
            change_id INTEGER NOT NULL,
            word TEXT NOT NULL,
            weight REAL NOT NULL,
            PRIMARY KEY (change_id, word)
        ) WITHOUT ROWID;
        INSERT OR IGNORE INTO code_terms_by_change SELECT change_id, word, weight FROM code_terms;
        DROP TABLE code_terms;
        ALTER TABLE code_terms_by_change RENAME TO code_terms;
        """
    )
    create_lookup_indexes(conn)
    if conn.execute("SELECT 1 FROM changes LIMIT 1").fetchone() is not None:
        # Symbols written before this version came from tree-sitter, and `check` now matches
        # on the names git's hunk headers give: the next `prdup index` rebuilds the changes
        # from git, keeping what git cannot tell (`reread_all`; see `index.indexer`), and until
        # then `check` warns that the index is out of date.
        conn.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES ('reread_all', '1'), "
            "('derived_stale', '1')"
        )


def _fork_points_by_landing(conn: sqlite3.Connection) -> None:
    """A merged PR that no merge names as a parent was delimited by walking back to a
    first-parent line, which takes along the upstream commits its branch was cut from when
    those are not on the line themselves (a branch cut from a side branch): its change is now
    what the target lacked before the commit that brought it in. Such rows are read again by
    the next `prdup index`; until then `check` warns that the index is out of date."""
    if conn.execute("SELECT 1 FROM changes LIMIT 1").fetchone() is not None:
        conn.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES ('reread_all', '1'), "
            "('derived_stale', '1')"
        )


def _dismissals_from_github(conn: sqlite3.Connection) -> None:
    """Dismissals remember which GitHub fact made them (the label on a PR, or a maintainer's
    command comment), so removing the label or the comment undoes exactly those; the metadata
    an import fetched waits in `github_pulls` until the indexer has applied it, so an import
    interrupted by a rate limit keeps every page. Rows from before know no source: a row by
    "label" is taken as the label's, any other as a command's."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(dismissals)")}
    if "source" not in columns:
        conn.executescript(
            """
            CREATE TABLE dismissals_by_source (
                number INTEGER NOT NULL,
                other INTEGER NOT NULL,
                by TEXT,
                at TEXT,
                -- 'label': PR `pr` carries the label; 'command': comment `comment_id` on PR
                -- `pr` says so. 0: recorded before prdup kept where a dismissal came from.
                source TEXT NOT NULL,
                pr INTEGER NOT NULL DEFAULT 0,
                comment_id INTEGER NOT NULL DEFAULT 0,
                PRIMARY KEY (number, other, source, pr, comment_id)
            );
            INSERT INTO dismissals_by_source(number, other, by, at, source)
                SELECT number, other, by, at,
                       CASE WHEN by = 'label' THEN 'label' ELSE 'command' END
                FROM dismissals;
            DROP TABLE dismissals;
            ALTER TABLE dismissals_by_source RENAME TO dismissals;
            """
        )
    conn.executescript(
        """
        CREATE INDEX IF NOT EXISTS dismissals_pr ON dismissals(pr, source);
        CREATE INDEX IF NOT EXISTS dismissals_comment ON dismissals(comment_id);
        -- Command comments the bot has reacted to (so it reacts once).
        CREATE TABLE IF NOT EXISTS acknowledged_commands (comment_id INTEGER PRIMARY KEY);
        -- PR metadata as GitHub listed it, kept page by page until the index reflects it and
        -- a `prdup: not a duplicate` label on it is recorded.
        CREATE TABLE IF NOT EXISTS github_pulls (
            repo TEXT NOT NULL,
            number INTEGER NOT NULL,
            title TEXT,
            body TEXT,
            state TEXT,
            created_at TEXT,
            closed_at TEXT,
            merged_at TEXT,
            head_sha TEXT,
            base_ref TEXT,
            author TEXT,
            updated_at TEXT,
            not_duplicate INTEGER NOT NULL DEFAULT 0,
            label_recorded INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (repo, number)
        );
        """
    )


def _incremental_derived(conn: sqlite3.Connection) -> None:
    """What lets a run that adds a few changes update rarity and the text model for those
    alone, with the values a full rebuild would give: per-side change counts of each line hash,
    each change's line count and summed log rarity per side (fixed point, so adding and taking
    away is exact), each term's document count, each change's title and body terms as counted
    (`text_docs`), and its text vector as sublinear term frequencies (`term_tf`) whose weight is
    `tf * idf / norm`, read with the current idf: a new document moves every idf, and storing
    the product would rewrite every vector. The old vectors are carried over (tf = weight / idf,
    norm 1: the same weights); the next `prdup index` recounts everything once."""
    for table, column in (("line_df", "removed"), ("line_df", "added"), ("term_idf", "df")):
        if column not in {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} INTEGER NOT NULL DEFAULT 0")
    conn.executescript(
        """
        -- Per change and side: how many line rows, and the sum of round(ln(df + 1) * 2^32)
        -- over them; its rarity weight is rows * (ln(N + 1) + 0.05) - sum / 2^32.
        CREATE TABLE IF NOT EXISTS rarity_sums (
            change_id INTEGER PRIMARY KEY,
            removed_rows INTEGER NOT NULL,
            added_rows INTEGER NOT NULL,
            removed_log INTEGER NOT NULL,
            added_log INTEGER NOT NULL
        );
        -- Each change's title and body terms with their counts, in first-seen order, and a
        -- digest of the text they were counted from.
        CREATE TABLE IF NOT EXISTS text_docs (
            change_id INTEGER PRIMARY KEY,
            digest INTEGER NOT NULL,
            counts TEXT NOT NULL,
            terms INTEGER NOT NULL
        );
        -- A change's (up to 40) heaviest terms: weight = tf * term_idf.idf / text_norms.norm.
        CREATE TABLE IF NOT EXISTS term_tf (
            change_id INTEGER NOT NULL,
            term TEXT NOT NULL,
            tf REAL NOT NULL,
            PRIMARY KEY (change_id, term)
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS term_tf_term ON term_tf(term, tf);
        CREATE TABLE IF NOT EXISTS text_norms (change_id INTEGER PRIMARY KEY, norm REAL NOT NULL);
        """
    )
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "terms" in tables:
        conn.executescript(
            """
            INSERT OR IGNORE INTO term_tf(change_id, term, tf)
                SELECT t.change_id, t.term, t.weight / i.idf FROM terms t
                JOIN term_idf i ON i.term = t.term WHERE i.idf > 0;
            INSERT OR IGNORE INTO text_norms(change_id, norm)
                SELECT DISTINCT change_id, 1.0 FROM term_tf;
            DROP TABLE terms;
            """
        )
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('derived_stale', '1')")


def _packed_code_words(conn: sqlite3.Connection) -> None:
    """A change's code words in one row (`word count word count ...`, most used first): they
    are read and written a change at a time (`check` reads the vectors, `code_terms`), and a
    row per word cost more to write than the words cost to count."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS change_words "
        "(change_id INTEGER PRIMARY KEY, words TEXT NOT NULL)"
    )
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "code_words" not in tables:
        return
    rows = conn.execute(
        "SELECT change_id, word, count FROM code_words ORDER BY change_id, count DESC, word"
    )
    conn.executemany(
        "INSERT OR REPLACE INTO change_words(change_id, words) VALUES (?, ?)",
        (
            (change_id, pack_counts((word, count) for _, word, count in group))
            for change_id, group in itertools.groupby(rows, key=lambda row: row[0])
        ),
    )
    conn.execute("DROP TABLE code_words")


def _no_hunk_content_index(conn: sqlite3.Connection) -> None:
    """No query looks hunks up by content alone (a change's hunks are read by change): the
    index only cost space (14 MB on ansible) and time at the end of a first run."""
    conn.execute("DROP INDEX IF EXISTS hunks_content")


def _packed_lines(conn: sqlite3.Connection) -> None:
    """A change's lines as one row per file and side with the hashes packed
    (`index.storage.line_sets`), and the changes of each line hash as one row per hash
    (`index.storage.line_postings`) instead of an SQL index: a row per line and its index entry took
    a third of a large index. A change's code words are stored compressed. An existing index
    is converted here, once."""
    from index.storage import line_postings, line_sets

    # Statements one by one, not a script: SQLite would commit a script's statements one by one.
    conn.execute(
        """
        CREATE TABLE IF NOT EXISTS line_sets (
            change_id INTEGER NOT NULL,
            file_id INTEGER NOT NULL,
            side TEXT NOT NULL,
            hashes BLOB NOT NULL,  -- the file's distinct line hashes on this side
            PRIMARY KEY (change_id, file_id, side)
        ) WITHOUT ROWID
        """
    )
    # Each line hash's changes: `index.storage.line_postings`.
    conn.execute(
        "CREATE TABLE IF NOT EXISTS line_changes (hash INTEGER PRIMARY KEY, changes BLOB NOT NULL)"
    )
    conn.executemany(
        "UPDATE change_words SET words = ? WHERE change_id = ?",
        [
            (squeeze(words), change_id)
            for change_id, words in conn.execute(
                "SELECT change_id, words FROM change_words WHERE typeof(words) = 'text'"
            ).fetchall()
        ],
    )
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "lines" not in tables:
        return
    rows = conn.execute("SELECT change_id, file_id, side, hash FROM lines ORDER BY 1, 2, 3")
    line_sets.write(
        conn,
        (
            (change_id, file_id, side, line_sets.pack(row[3] for row in group))
            for (change_id, file_id, side), group in itertools.groupby(
                rows, key=lambda row: (row[0], row[1], row[2])
            )
        ),
    )
    conn.execute("DROP TABLE lines")
    line_postings.rebuild(conn)


def _landings_by_rebase(conn: sqlite3.Connection) -> None:
    """A PR's own commits, each with its author, author date and commit date (`own_commits`), so a
    later run finds them copied onto a target by rebase or cherry-pick; and where a landing of
    several commits starts (`landing_base`: the first landed commit's parent). Rows of an older
    index get their own commits on the next `prdup index` (`Indexer.fill_own_commits`)."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(changes)")}
    for column in ("own_commits", "landing_base"):
        if column not in columns:
            conn.execute(f"ALTER TABLE changes ADD COLUMN {column} TEXT")


def _state_and_title_sources(conn: sqlite3.Connection) -> None:
    """Where a PR's state and title came from: `state_source` 'metadata' where GitHub's
    metadata (`--github`, `--prs-json`) gave the state, NULL where git did; `title_source`
    'commit' where the title is the PR head commit's subject, NULL where it is GitHub's (from
    the metadata, or the merge or squash commit GitHub wrote).

    Without metadata an unmerged PR used to be recorded "open"; it is now "unmerged" unless a
    test merge shows it open. A closed state and a base branch come only from metadata; for
    the other rows of an older index the next `prdup index` compares each title with its head
    commit's subject (`Indexer.recover_sources`, asked for by `sources_unknown`), then tells
    the states git gave again (`Indexer.derive_unknown_states`). Until then they read as
    before: "open" is checked and swept as an open PR.
    """
    columns = {row[1] for row in conn.execute("PRAGMA table_info(changes)")}
    added = [name for name in ("state_source", "title_source") if name not in columns]
    for column in added:
        conn.execute(f"ALTER TABLE changes ADD COLUMN {column} TEXT")
    if not added:
        return  # written by this prdup already
    conn.execute(
        "UPDATE changes SET state_source = 'metadata' WHERE kind = 'pr' AND state != 'merged' "
        "AND (base_ref IS NOT NULL OR state = 'closed' OR source = 'metadata')"
    )
    if conn.execute("SELECT 1 FROM changes WHERE kind = 'pr' LIMIT 1").fetchone():
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('sources_unknown', '1')")


def _landings_in_part(conn: sqlite3.Connection) -> None:
    """The commits of each PR that landed in part (`index.git.rebase_landings.PartLanding`): one
    row per commit, in the PR's order, with the target commit that holds its patch (`copy`),
    or none where it is still to do. Rewritten whole by every run that looks for landings."""
    conn.execute(
        """
        CREATE TABLE IF NOT EXISTS part_landings (
            change_id INTEGER NOT NULL,
            position INTEGER NOT NULL,
            sha TEXT NOT NULL,
            subject TEXT NOT NULL,
            files TEXT NOT NULL,
            copy TEXT,
            target TEXT,
            PRIMARY KEY (change_id, position)
        ) WITHOUT ROWID
        """
    )


def _fork_lines(conn: sqlite3.Connection) -> None:
    """The release line an unmerged PR is for, as git shows it (`fork_line`: its fork point
    is on that line's first-parent line), where no metadata names its base branch. Rows of an
    older index learn it when their head is read again."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(changes)")}
    if "fork_line" not in columns:
        conn.execute("ALTER TABLE changes ADD COLUMN fork_line TEXT")


def _replay_memory(conn: sqlite3.Connection) -> None:
    """Replays kept by their inputs (`index.questions.replay_memory`), each with the head of
    the query it was made for, the commit it was replayed at and the code that replayed it."""
    conn.executescript(
        """
        CREATE TABLE IF NOT EXISTS replays (
            key TEXT PRIMARY KEY, query TEXT NOT NULL, at TEXT NOT NULL, code TEXT NOT NULL,
            replay BLOB NOT NULL
        );
        CREATE INDEX IF NOT EXISTS replays_by_query ON replays(query);
        """
    )


def _hunks_by_change_and_content(conn: sqlite3.Connection) -> None:
    """A change's hunks are read by change, as far as their content is the query's (a
    candidate's hunks shared with a PR): an index holding both columns answers from itself,
    where the index by change alone read each hunk's row (its header and symbol too)."""
    conn.execute(
        "CREATE INDEX IF NOT EXISTS hunks_change_content ON hunks(change_id, content_hash)"
    )
    conn.execute("DROP INDEX IF EXISTS hunks_change")


def _whitespace_only_hunks(conn: sqlite3.Connection) -> None:
    """A hunk that changes whitespace alone is stored with its lines as written (see
    `detector.model.line_keys`): its lines' hashes and content hash differ from what an older
    index holds, where such a hunk removes and adds the same line of a file. An index holding
    such a line anywhere (a moved line is one too) is read from git again by the next
    `prdup index`; one that holds none has nothing to change."""
    if _removes_and_adds_a_line(conn):
        conn.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES ('reread_all', '1'), "
            "('derived_stale', '1')"
        )


def _removes_and_adds_a_line(conn: sqlite3.Connection) -> bool:
    """Whether one change removes and adds the same (normalised) line in one file: read in
    the table's own order (its key), a file's two sides are neighbours, "+" before "-"."""
    last: tuple[int, int] | None = None
    added: set[int] = set()
    rows = conn.execute(
        "SELECT change_id, file_id, side, hashes FROM line_sets ORDER BY change_id, file_id, side"
    )
    for change_id, file_id, side, blob in rows:
        if side == "+":
            last, added = (change_id, file_id), set(line_sets.unpack(blob))
        elif last == (change_id, file_id) and not added.isdisjoint(line_sets.unpack(blob)):
            return True
    return False


def _state_estimates(conn: sqlite3.Connection) -> None:
    """What git estimates of a PR's state where no metadata gives it (`state_estimate`: 'open'
    or 'closed', `index.git.state_estimate`); NULL where the metadata gave it, or nothing points
    either way. The state stays "unmerged" under a 'closed' estimate: only the sweep reads it.
    Rows of an older index get theirs on the next `prdup index` (`derive_unknown_states`)."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(changes)")}
    if "state_estimate" not in columns:
        conn.execute("ALTER TABLE changes ADD COLUMN state_estimate TEXT")


MIGRATIONS: tuple[Migration, ...] = (
    _initial,
    _sweep_cache,
    _line_weight_totals,
    _author_emails,
    _sweep_seen_details,
    _code_words,
    _lines_by_change,
    _fork_points_by_landing,
    _dismissals_from_github,
    _incremental_derived,
    _packed_code_words,
    _no_hunk_content_index,
    _packed_lines,
    _landings_by_rebase,
    _state_and_title_sources,
    _landings_in_part,
    _fork_lines,
    _replay_memory,
    _hunks_by_change_and_content,
    _whitespace_only_hunks,
    _state_estimates,
)
SCHEMA_VERSION = len(MIGRATIONS)


# Tables a migration creates and renames within itself: an interrupted first run may leave one.
_TRANSIENT_TABLES = frozenset(
    {
        "lines_by_change",
        "code_words_by_change",
        "code_terms_by_change",
        "dismissals_by_source",
        "terms",  # replaced by term_tf
        "code_words",  # replaced by change_words
        "lines",  # replaced by line_sets
    }
)


@functools.cache
def own_tables() -> frozenset[str]:
    """Every table an index has, or passes through while its migrations run: a database holding
    others (and no `schema_version`) is another program's, and prdup must not add its tables to
    it. Read from a fresh index built in memory, so a new migration's tables are counted."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        migrate(conn)
        return _TRANSIENT_TABLES | {
            row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
    finally:
        conn.close()


def recorded_version(conn: sqlite3.Connection) -> int | None:
    """The schema version a prdup index records, None when the database records none."""
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.OperationalError:  # no `meta` table, or another program's
        return None
    try:
        return int(row[0]) if row else None
    except (TypeError, ValueError):
        return None


def foreign_tables(conn: sqlite3.Connection) -> list[str]:
    """The tables that make this database another program's; none for a prdup index (also one
    whose first run stopped early) and for a new, empty database."""
    if recorded_version(conn) is not None:
        return []
    names = {
        row[0]
        for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') "
            "AND name NOT LIKE 'sqlite_%'"
        )
    }
    return sorted(names - own_tables())


def migrate(conn: sqlite3.Connection) -> None:
    """Bring the database up to `SCHEMA_VERSION`, one transaction per migration: a migration
    stopped half-way leaves the version before it, which the next opening applies again.
    (The oldest migrations run scripts, which SQLite commits statement by statement; they are
    written to be applied again.)"""
    conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
    applied = False
    while _version(conn) < SCHEMA_VERSION:
        conn.execute("BEGIN IMMEDIATE")
        try:
            current = _version(conn)  # another process may have upgraded it meanwhile
            if current < SCHEMA_VERSION:
                MIGRATIONS[current](conn)
                conn.execute(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)",
                    (str(current + 1),),
                )
                applied = True
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        if conn.in_transaction:
            conn.execute("COMMIT")
    if applied:
        _give_back_freed_pages(conn)


def _version(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    return int(row[0]) if row else 0


def _give_back_freed_pages(conn: sqlite3.Connection) -> None:
    """After an upgrade that rewrote a table: SQLite keeps the pages of what was dropped in
    the file, so an index whose new layout is smaller would stay as large as the old one
    (pallets/flask's: a quarter of its pages were left empty)."""
    (free,) = conn.execute("PRAGMA freelist_count").fetchone()
    (pages,) = conn.execute("PRAGMA page_count").fetchone()
    if free * 10 > pages:
        # Another connection reading it keeps it as large as it is.
        with contextlib.suppress(sqlite3.OperationalError):
            conn.execute("VACUUM")
