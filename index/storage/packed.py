"""Word counts packed into one text per row: `word count word count ...` (words hold no space).

A change's code words, or its title's terms, are read and written whole, never looked up one
by one: a row per change costs a fraction of a row per word to write and to store. A change's
code words (up to 300 identifiers) are also stored compressed (`squeeze`): half the size, at
a few microseconds a change.
"""

from __future__ import annotations

import sys
import zlib
from array import array
from collections.abc import Iterable

_BIG_ENDIAN = sys.byteorder == "big"


def pack_counts(counts: Iterable[tuple[str, int]]) -> str:
    """In the order given."""
    return " ".join(f"{word} {count}" for word, count in counts)


def unpack_counts(packed: str) -> dict[str, int]:
    """The counts, in the order they were packed."""
    parts = packed.split(" ") if packed else []
    return dict(zip(parts[::2], map(int, parts[1::2]), strict=True))


def packed_words(packed: str) -> list[str]:
    """Only the words."""
    return packed.split(" ")[::2] if packed else []


def squeeze(packed: str) -> bytes:
    """`packed` compressed for storing (zlib's fastest level: the words are written once per
    change, and text of identifiers compresses about 2:1 at any level)."""
    return zlib.compress(packed.encode("utf-8"), 1)


def unsqueeze(stored: bytes | str) -> str:
    """What `squeeze` stored (a text as it is: a row written before words were compressed)."""
    return stored if isinstance(stored, str) else zlib.decompress(stored).decode("utf-8")


def pack_ints(typecode: str, values: Iterable[int]) -> bytes:
    """Integers as a blob, little-endian whatever the machine (`typecode` as `array`'s)."""
    packed = array(typecode, values)
    if _BIG_ENDIAN:
        packed.byteswap()
    return packed.tobytes()


def unpack_ints(typecode: str, blob: bytes) -> array:
    """What `pack_ints` packed, in its order."""
    values = array(typecode)
    values.frombytes(blob)
    if _BIG_ENDIAN:
        values.byteswap()
    return values
