"""Text from git's bytes: UTF-8 where a line is UTF-8, Latin-1 where it is not.

Sources in Latin-1 (or stray bytes in one line of a UTF-8 file) read as what they most
likely are, "café" rather than "caf\ufffd", and every reader decodes alike (diffs, commit
texts, file contents), so the same line gives the same text, and hash, wherever it was read.
"""

from __future__ import annotations


def decode_text(raw: bytes) -> str:
    """Decode a line at a time: one non-UTF-8 line leaves the UTF-8 lines around it as they are."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return "".join(_decode_line(line) for line in raw.splitlines(keepends=True))


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
