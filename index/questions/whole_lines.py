"""A PR stored cut, read whole: what its lines are, kept in the index for the next sweep.

An unmerged PR past `max_unmerged_lines` is stored cut (its first files' lines only), so `check`
and the sweep read it whole from git and parse it: for a diff of many thousand lines that costs
more than the rest of its check. A re-sweep after one new PR reads again the cut PRs that share
a rare line with the new one, only for what their lines are. The sweep that read them keeps
that (`lookup.ChangeLines` and its document sections' titles) beside its replays
(`replay_memory`, dropped with them once the PR's head moves), under a key of everything it
is computed from: the PR's span (git names every file version by sha), the settings and the
code that reads it. A kept one is what reading the diff again gives.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from array import array
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from index.config import Settings
from index.questions import replay_memory
from index.questions.lookup import ChangeLines
from index.questions.replay_memory import ReplayMemory


@dataclass(frozen=True, slots=True)
class WholeLines:
    """What a PR's whole diff says of its lines, and the titles of its document sections
    (`changes.document_sections`), which are read from the files' versions."""

    lines: ChangeLines
    sections: dict[tuple[str, str], str]


@cache
def _code_digest() -> str:
    """The code that reads a diff into `ChangeLines`: the comparison's (`replay_memory`'s
    digest, `detector/` included) and the reading of the diff, its symbols and sections."""
    root = Path(__file__).resolve().parents[2]
    digest = hashlib.sha1(replay_memory.code_digest().encode())
    for source in (
        root / "prdup" / "checking.py",  # `whole_lines`, which reads them
        root / "index" / "config.py",  # the files a diff leaves out
        root / "index" / "questions" / "lookup.py",
        root / "index" / "questions" / "changes.py",
        root / "index" / "git" / "doc_sections.py",
        root / "index" / "git" / "hunk_symbols.py",
        Path(__file__).resolve(),
    ):
        digest.update(source.name.encode())
        digest.update(source.read_bytes())
    return digest.hexdigest()


def key(base: str, head: str, settings: Settings, what: str = "whole-lines") -> str:
    """The key of a PR's whole lines (or of `what` else is kept of them): its span, the
    settings that filter and read it, the code."""
    text = "\0".join([what, _code_digest(), base, head, repr(settings)])
    return hashlib.sha1(text.encode()).hexdigest()


def _hashes_key(base: str, head: str, settings: Settings) -> str:
    return key(base, head, settings, "whole-line-hashes")


def encode(whole: WholeLines) -> bytes:
    lines = whole.lines
    data = [
        sorted(lines.removed),
        sorted(lines.added),
        sorted(lines.kept),
        sorted(lines.hunks),
        [[line, text] for line, text in lines.line_text.items()],
        [[line, path, symbol] for line, (path, symbol) in lines.line_place.items()],
        sorted(lines.files),
        sorted(lines.symbols),
        sorted(lines.definitions),
        lines.patch_id,
        [[path, header, title] for (path, header), title in whole.sections.items()],
    ]
    return zlib.compress(json.dumps(data, separators=(",", ":")).encode())


def decode(data: bytes) -> WholeLines:
    (
        removed,
        added,
        kept,
        hunks,
        line_text,
        line_place,
        files,
        symbols,
        definitions,
        patch_id,
        sections,
    ) = json.loads(zlib.decompress(data))
    lines = ChangeLines(
        removed=frozenset(removed),
        added=frozenset(added),
        kept=frozenset(kept),
        hunks=frozenset(hunks),
        line_text={line: text for line, text in line_text},
        line_place={line: (path, symbol) for line, path, symbol in line_place},
        files=frozenset(files),
        symbols=frozenset((path, name) for path, name in symbols),
        definitions=frozenset((path, name) for path, name in definitions),
        patch_id=patch_id,
    )
    return WholeLines(lines, {(path, header): title for path, header, title in sections})


def read(
    memory: ReplayMemory | None, base: str, head: str, settings: Settings
) -> WholeLines | None:
    """The whole lines kept for this span, if a sweep kept them."""
    if memory is None:
        return None
    data = memory.get_data(key(base, head, settings))
    return decode(data) if data is not None else None


def keep(
    memory: ReplayMemory | None, base: str, head: str, settings: Settings, whole: WholeLines
) -> bytes:
    """Keep them with the replays this process made (written with them, kept while the PR's
    head is), and apart the hashes of the lines it adds and removes (`kept_hashes`, which a
    re-sweep reads for every cut PR); what is kept (`encode`d) is returned."""
    data = encode(whole)
    if memory is not None:
        memory.put_data(key(base, head, settings), head, head, data)
        hashes = array("q", sorted(whole.lines.removed | whole.lines.added))
        memory.put_data(_hashes_key(base, head, settings), head, head, hashes.tobytes())
    return data


def kept_hashes(
    memory: ReplayMemory, spans: Mapping[int, tuple[str, str]], settings: Settings
) -> dict[int, frozenset[int]]:
    """Of the given PRs stored cut (each change id with its span), the lines each adds and
    removes, past its cut included, where a sweep kept them: a re-sweep tells by them which
    cut PRs a new change shares a line with that their stored lines do not hold."""
    found = {}
    for change_id, (base, head) in spans.items():
        data = memory.get_data(_hashes_key(base, head, settings))
        if data is not None:
            hashes = array("q")
            hashes.frombytes(data)
            found[change_id] = frozenset(hashes)
    return found
