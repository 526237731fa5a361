"""Replays kept in the index, by everything they are computed from.

A change replayed at a candidate (`detector.replay.replay`) is a pure function of the change's
replayed files and hunks, its base, the two commits it is replayed between and which of its
files are read there, and of the code that replays: git names file versions by sha, so the same
inputs read the same texts. A replay at a branch's tip is kept the same way, with the tip's
commit among its inputs, and with what it says of the tip's files (those gone, the definitions
there), read from that commit too. Each replay is kept under a digest of exactly those inputs,
so a kept one is the one a new replay would give: a re-sweep after one new PR, or a `check`
run again on an unchanged PR, replays only what it has not replayed before. What depends on
the branch's tip's history or on the index (where the candidate sits, which commit made what)
is worked out anew each time, never kept here.

Rows name the query they were made for (its head commit) and the code that made them: a sweep
keeps those of the PRs still open with the same head, made by this code, and drops the others.
"""

from __future__ import annotations

import hashlib
import json
import operator
import sqlite3
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any, NamedTuple

from detector.model import Change
from detector.pins import CompetingPin
from detector.replay import HunkReplay, Replay
from index.errors import IndexDiskFull, IndexLocked
from index.git import symbols
from index.storage.store import IndexStore

Row = tuple[str, str, str, bytes]  # a kept replay: key, query, the commit replayed at, replay
Reverts = dict[str, list[tuple[str, str]]]  # `gitsource.reverts_in`'s answer
REVERTS_KEY = "target_reverts"  # the meta row keeping the last tip's reverts

# The fields of a kept hunk, in the order they are stored; a change of `HunkReplay`'s fields
# changes the code digest too (`detector/` is part of it), so older rows are never read.
_HUNK_FIELDS = tuple(f.name for f in fields(HunkReplay))
_HUNK_VALUES = operator.attrgetter(*_HUNK_FIELDS)
_PINS_AT = _HUNK_FIELDS.index("other_pins")  # the one field whose values JSON cannot write


@cache
def code_digest() -> str:
    """What a replay's code is: `detector/` (the comparison), the reading of file versions
    (`index.questions.replaying`, `index.git.gitsource`) and of the definitions a replay at the
    tip asks about (`index.git.symbols`, and the tree-sitter grammars' versions). A changed
    rule keeps nothing."""
    here = Path(__file__).resolve()
    root = here.parents[2]
    sources = [
        *sorted((root / "detector").glob("*.py")),
        here.parent / "replaying.py",
        root / "index" / "git" / "gitsource.py",
        root / "index" / "git" / "symbols.py",
        here,
    ]
    digest = hashlib.sha1()
    for source in sources:
        digest.update(source.name.encode())
        digest.update(source.read_bytes())
    # The parsers that name those definitions: another grammar may name them otherwise.
    digest.update("\n".join(map(_installed, symbols.PARSER_DISTRIBUTIONS)).encode())
    return digest.hexdigest()


def _installed(name: str) -> str:
    """A distribution and its version, as installed (read by name: listing every installed
    distribution's metadata costs a tenth of a second)."""
    try:
        return f"{name} {metadata.version(name)}"
    except metadata.PackageNotFoundError:
        return f"{name} absent"


def change_digest(change: Change, base: str | None) -> str:
    """The replayed change and the commit it starts from (its files' texts at the base are
    read by their old blob or at `base`)."""
    digest = hashlib.sha1(code_digest().encode())
    digest.update(repr(base).encode())
    digest.update(repr(change.files).encode())
    return digest.hexdigest()


def replay_key(change: str, before: str | None, after: str, paths: Sequence[str]) -> str:
    """A replay's key: the change's digest, the commits it is replayed between (`before` None:
    from the change's own base) and the files read there."""
    text = "\0".join([change, before or "", after, *paths])
    return hashlib.sha1(text.encode()).hexdigest()


class Kept(NamedTuple):
    """A kept replay, and at a branch's tip the files the tip no longer has and those it has
    under another name."""

    replay: Replay
    gone: frozenset[str]
    moved: dict[str, str]


def encode(
    replay: Replay, gone: Iterable[str] = (), moved: Mapping[str, str] | None = None
) -> bytes:
    """A replay (and, at a branch's tip, the files the tip no longer has and those it moved) as
    compressed JSON: a hunk a list of its fields' values (a sweep of a large backlog keeps
    thousands, most alike)."""
    moved = moved or {}
    hunks = [_hunk_values(hunk) for hunk in replay.hunks]
    data = [replay.commit, hunks, sorted(gone), sorted(moved.items())]
    return zlib.compress(json.dumps(data, separators=(",", ":")).encode())


def decode(data: bytes) -> Kept:
    commit, hunks, gone, moved = json.loads(zlib.decompress(data))
    replay = Replay(commit=commit, hunks=tuple(_hunk(values) for values in hunks))
    return Kept(replay, frozenset(gone), dict(moved))


def _hunk_values(hunk: HunkReplay) -> list[Any]:
    """A hunk's fields' values in `_HUNK_FIELDS` order, as JSON writes them: a tuple is
    written as a list anyway, so only the competing pins (objects) are spelled out. A sweep
    encodes thousands of replays."""
    values = list(_HUNK_VALUES(hunk))
    pins = values[_PINS_AT]
    if pins:
        values[_PINS_AT] = [[pin.package, pin.ours, pin.theirs] for pin in pins]
    return values


def _hunk(values: Sequence[Any]) -> HunkReplay:
    found = dict(zip(_HUNK_FIELDS, values, strict=True))
    found["other_pins"] = tuple(CompetingPin(*pin) for pin in found["other_pins"])
    found["superseded_by"] = tuple(found["superseded_by"])
    found["rewritten_as"] = tuple(found["rewritten_as"])
    found["agreeing_words"] = tuple(found["agreeing_words"])
    return HunkReplay(**found)


@dataclass
class ReplayMemory:
    """The kept replays a process reads (from the index, a key at a time, as it asks) and the
    ones it made, to be written once its work is done (`save`)."""

    store: IndexStore | None
    # key -> (query, the commit replayed at, replay)
    made: dict[str, tuple[str, str, bytes]] = field(default_factory=dict)
    reverts_read: dict[str, Reverts] = field(default_factory=dict)  # read from git, by tip

    def reverts(self, tip: str) -> Reverts | None:
        """The reverts kept for `tip`'s history (`kept_reverts`), if they are that tip's."""
        kept = kept_reverts(self.store) if self.store is not None else None
        return kept[1] if kept is not None and kept[0] == tip else None

    def get(self, key: str) -> Kept | None:
        """The replay kept under `key`, with the files gone and moved at a tip, if there is one."""
        data = self.get_data(key)
        return decode(data) if data is not None else None

    def get_data(self, key: str) -> bytes | None:
        """What is kept under `key` as stored: a replay, or another answer worked out for the
        query and kept the same way (a PR stored cut read whole: `index.questions.whole_lines`)."""
        if key in self.made:
            return self.made[key][2]
        if self.store is None:
            return None
        for (data,) in self.store.rows("SELECT replay FROM replays WHERE key = ?", (key,)):
            return bytes(data)
        return None

    def put_data(self, key: str, query: str, at: str, data: bytes) -> None:
        """Keep `data` under `key` for the query whose head is `query` (`get_data`)."""
        self.made[key] = (query, at, data)

    def put(
        self,
        key: str,
        query: str,
        replay: Replay,
        gone: Iterable[str] = (),
        moved: Mapping[str, str] | None = None,
    ) -> None:
        self.made[key] = (query, replay.commit, encode(replay, gone, moved))

    def take(self) -> list[Row]:
        """The replays made since the last `take`, as rows (key, query, at, replay)."""
        rows = [(key, *made) for key, made in self.made.items()]
        self.made = {}
        return rows


def save(store: IndexStore, rows: Iterable[Row], live: Iterable[str]) -> None:
    """Keep the new replays, and drop those made for a query no longer live (`live`: the heads
    of the PRs still open) or by other code than this (never read again), in one
    transaction."""
    rows = list(rows)
    live = set(live)
    conn = store.conn
    with store.batch():
        kept = {query for (query,) in conn.execute("SELECT DISTINCT query FROM replays")}
        gone = sorted(kept - live)
        conn.executemany("DELETE FROM replays WHERE query = ?", [(q,) for q in gone])
        conn.execute("DELETE FROM replays WHERE code != ?", (code_digest(),))
        _insert(conn, [row for row in rows if row[1] in live])


def _insert(conn: sqlite3.Connection, rows: list[Row]) -> None:
    conn.executemany(
        "INSERT OR REPLACE INTO replays(key, query, at, code, replay) VALUES (?, ?, ?, ?, ?)",
        [(key, query, at, code_digest(), data) for key, query, at, data in rows],
    )


def add(store: IndexStore, rows: Iterable[Row]) -> bool:
    """Keep these replays (a `check`'s), dropping none. Keeping them only saves a later check
    time: where the index is busy being written, or its disk full, they are not kept (False),
    and the check's answer stands."""
    rows = list(rows)
    if not rows:
        return True
    try:
        with store.batch():
            _insert(store.conn, rows)
    except (IndexLocked, IndexDiskFull):
        return False
    return True


def kept_reverts(store: IndexStore) -> tuple[str, Reverts] | None:
    """The tip and the reverts in its history (`gitsource.reverts_in`) last kept, if this code
    read them: a re-sweep after a new PR, or a check run again, asks about the same tip, and
    reading them walks the branch's whole history."""
    text = store.get_meta(REVERTS_KEY)
    if not text:
        return None
    try:
        data = json.loads(text)
        if data["code"] != code_digest():
            return None
        return str(data["tip"]), {
            str(key): [(str(sha), str(subject)) for sha, subject in listed]
            for key, listed in data["reverts"].items()
        }
    except (ValueError, KeyError, TypeError, AttributeError):
        return None  # not as this code writes it: read again


def keep_reverts(store: IndexStore, tip: str, reverts: Reverts) -> bool:
    """Keep one tip's reverts in place of the last kept. As with replays, where the index is
    busy being written or its disk full they are not kept (False)."""
    data = {"code": code_digest(), "tip": tip, "reverts": reverts}
    try:
        store.set_meta(REVERTS_KEY, json.dumps(data, separators=(",", ":")))
    except (IndexLocked, IndexDiskFull):
        return False
    return True
