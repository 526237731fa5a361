"""git's output read a block at a time: records and lines come out whole wherever a block ends,
and no file's content or commit message can pass for a record or field boundary."""

from __future__ import annotations

import io
import sqlite3
from pathlib import Path

from index.git import gitsource
from index.git.gitsource import (
    Framing,
    LoggedCommit,
    UnreadCommit,
    _parse_log_stream,
    _reads,
    _records,
    _whole_lines,
)
from index.indexer import index_repository
from tests.repo_builder import RepoBuilder, run_cli

SEPARATOR = b"\x00\x1e"
SHA_ALONE = b"0123456789abcdef0123456789abcdef01234567"


def test_records_are_whole_wherever_blocks_end():
    records = [b"first", b"x" * 50, b"", b"a\x00b\x1ec", b"last one"]
    stream = SEPARATOR + SEPARATOR.join(records)
    for size in range(1, len(stream) + 2):
        found = list(_records(io.BytesIO(stream), SEPARATOR, block_size=size))
        assert found == [r for r in records if r], size


def test_line_blocks_are_whole_lines_wherever_blocks_end():
    text = b"0123456789abcdef0123456789abcdef01234567\n+ added\n\n- removed\nno newline"
    for size in range(1, len(text) + 2):
        blocks = list(_whole_lines(_reads(io.BytesIO(text), size)))
        assert b"".join(blocks) == text, size
        assert all(block.endswith(b"\n") for block in blocks[:-1])


def test_each_git_process_gets_its_own_markers():
    first, second = Framing.drawn(), Framing.drawn()
    assert first.record != second.record and first.field != second.field
    assert first.record.startswith(b"\x00") and first.field.startswith(b"\x00")
    assert "%x00%x1e" in first.format(["%H", "%B"])


def test_a_record_that_does_not_read_as_a_commit_is_handed_on_not_raised():
    framing = Framing(b"\x00\x1eTOKEN", b"\x00\x1fTOKEN")
    sha = "a" * 40

    def record(*fields: bytes) -> bytes:
        return framing.record + framing.field.join(fields)

    good = record(sha.encode(), b"", b"Ann", b"2024-01-01", b"2024-01-01", b"msg", b"\ndiff")
    stream = good + record(b"b" * 40, b"only two fields") + record(b"garbage") + good
    found = list(_parse_log_stream(io.BytesIO(stream), framing))
    assert [type(item) for item in found] == [
        LoggedCommit,
        UnreadCommit,
        UnreadCommit,
        LoggedCommit,
    ]
    assert found[1] == UnreadCommit("b" * 40) and found[2] == UnreadCommit(None)


def art_file() -> bytes:
    """An Illustrator-like file that git diffs as text: NUL appears only after the 8,000 bytes
    git looks at, followed by the bytes old framings used as separators and a line that reads
    like `diff-tree --stdin`'s line for a pair's head."""
    text = b"".join(b"%%AI8 text line %d\n" % n for n in range(600))
    assert len(text) > 8000
    return text + b"raw \x00\x1e record\n\x00\x1f field \x00\n" + SHA_ALONE + b"\nend\n"


def test_a_text_diff_holding_nul_and_separators_indexes_every_commit(
    builder: RepoBuilder, db_path: Path
):
    before = builder.commit("Before the art", {"README.md": "hello\n"})
    art = builder.commit("Add the artwork \x1f with \x1e odd bytes", {"logo.ai": art_file()})
    edited = builder.commit("Edit the artwork", {"logo.ai": art_file().replace(b"end", b"\x00fin")})
    after = builder.commit("After the art", {"README.md": "hello world\n"})
    recoloured = art_file().replace(b"end", b"\x00fin") + b"\x00\x1e more\n"
    head = builder.pr_branch(5, [("Recolour the artwork", {"logo.ai": recoloured})])
    repo = gitsource.open_repository(builder.path)
    assert "\x00\x1e record" in gitsource.diff_between(repo, before, art)  # git printed it

    summary = index_repository(builder.path, db_path=db_path)

    assert not summary.skipped and summary.commits == 4 and summary.unmerged == 1
    with sqlite3.connect(db_path) as conn:
        commits = conn.execute(
            "SELECT sha, status, title FROM changes WHERE kind = 'commit' ORDER BY id"
        ).fetchall()
        art_lines = conn.execute(
            "SELECT c.sha, c.number, f.status, c.added, c.removed FROM files f "
            "JOIN changes c ON c.id = f.change_id WHERE f.path = 'logo.ai' ORDER BY c.id"
        ).fetchall()
    assert [(sha, status) for sha, status, _ in commits] == [
        (before, "indexed"),
        (art, "indexed"),
        (edited, "indexed"),
        (after, "indexed"),
    ]
    assert commits[1][2] == "Add the artwork \x1f with \x1e odd bytes"  # the whole subject
    assert art_lines == [
        (art, None, "added", 604, 0),
        (edited, None, "modified", 1, 1),
        (head, 5, "modified", 1, 0),
    ]
    code, out, _ = run_cli(builder.path, "show", "5", "--db", str(db_path))
    assert code == 0 and "file: logo.ai [modified]" in out and "+1 -0" in out


def test_diffs_read_together_are_each_pr_own_diff(builder: RepoBuilder):
    """The sweep reads its PRs' diffs through one git process: each is exactly the diff `check`
    reads alone; a span whose commit git does not have, and a head given with two bases, are
    left out for the caller to read alone."""
    base = builder.commit("Add modules", {"a.py": "a = 1\n", "b.py": "b = 1\n"})
    first = builder.commit("Change a", {"a.py": "a = 2\n"})
    same = builder.commit("Change nothing", {})
    second = builder.commit("Change b, add c", {"b.py": "b = 2\n", "c.py": "c = 1\n"})
    repo = gitsource.open_repository(builder.path)
    spans = [(base, first), (first, same), (first, second), (base, second)]
    found = gitsource.diffs_between(repo, spans)
    assert set(found) == {(base, first), (first, same)}  # `second` given with two bases
    for span in found:
        assert found[span] == gitsource.diff_between(repo, *span), span
    assert found[(first, same)] == "" and "a = 2" in found[(base, first)]
    broken = gitsource.diffs_between(repo, [(base, first), ("f" * 40, second)])
    assert ("f" * 40, second) not in broken
    assert all(broken[span] == gitsource.diff_between(repo, *span) for span in broken)
