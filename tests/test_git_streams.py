"""git's output read a block at a time: records and lines come out whole wherever a block ends."""

from __future__ import annotations

import io

from index.gitsource import _reads, _records, _whole_lines

SEPARATOR = b"\x00\x1e"


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
