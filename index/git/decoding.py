"""Text from git's bytes: UTF-8 where a line is UTF-8, Latin-1 where it is not.

Sources in Latin-1 (or stray bytes in one line of a UTF-8 file) read as what they most
likely are, "café" rather than "caf\ufffd", and every reader decodes alike (diffs, commit
texts, file contents), so the same line gives the same text, and hash, wherever it was read.
"""

from __future__ import annotations

_BLOCK = 1 << 16  # bytes decoded in one call once a text is known to hold non-UTF-8 lines


def decode_text(raw: bytes) -> str:
    """Decode a line at a time: one non-UTF-8 line leaves the UTF-8 lines around it as they are.

    Blocks of whole lines are tried in one call first, and only a block that is not UTF-8 is
    decoded line by line: UTF-8 never puts a line break inside a character, so that gives what
    decoding every line alone would, without a call per line of a large commit that holds one
    Latin-1 file."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    parts: list[str] = []
    start, size = 0, len(raw)
    while start < size:
        end = raw.find(b"\n", start + _BLOCK) + 1 or size  # after a "\n": a line boundary
        block = raw[start:end]
        try:
            parts.append(block.decode("utf-8"))
        except UnicodeDecodeError:
            parts.extend(map(_decode_line, block.splitlines(keepends=True)))
        start = end
    return "".join(parts)


def _decode_line(line: bytes) -> str:
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError:
        return line.decode("latin-1")  # never fails: every byte is a Latin-1 character


def as_utf8(raw: bytes) -> bytes:
    """The same text as UTF-8 bytes, for readers that decode file contents as UTF-8 (a blob's
    lines then compare equal to the same lines read from a diff)."""
    try:
        raw.decode("utf-8")
        return raw
    except UnicodeDecodeError:
        return decode_text(raw).encode("utf-8")
