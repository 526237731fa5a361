"""Turn git's diff text into the stored form: filtered files, bounded size, symbols per hunk."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from detector.model import Change, FileChange, NotADiff, parse_patch
from index.config import Settings
from index.gitsource import BlobReader
from index.store import SymbolRow

if TYPE_CHECKING:
    from index.symbols import Definition, SymbolExtractor

LANGUAGE_FREE = ""


def parse_filtered(diff_text: str, settings: Settings) -> tuple[Change, bool]:
    """Parse a diff, drop ignored files, and cut a huge change down to `max_changed_lines`.

    Returns the change and whether it was truncated. A PR of tens of thousands of lines is still
    indexed (its files and first lines); it just does not get to flood the line index.
    """
    try:
        parsed = parse_patch(diff_text)
    except NotADiff:
        raise
    kept: list[FileChange] = []
    skipped: list[tuple[str, str]] = []
    budget = settings.max_changed_lines
    truncated = False
    for file in parsed.files:
        pattern = settings.is_ignored(file.path)
        if pattern:
            skipped.append((file.path, f"ignored by {pattern}"))
            continue
        size = sum(len(h.lines) for h in file.hunks)
        if size > budget:
            truncated = True
            kept.append(replace(file, hunks=()))
            skipped.append((file.path, "too many changed lines"))
            continue
        budget -= size
        kept.append(file)
    return Change(files=tuple(kept), skipped_files=tuple(skipped)), truncated


def _section_symbol(section: str) -> str | None:
    """git's hunk-header function context, trimmed to something name-like."""
    text = section.strip()
    return text[:120] or None


@dataclass(frozen=True, slots=True)
class FileRequest:
    """What finding one file's changed definitions needs: plain values, so it can be sent to a
    worker process (`index.symbol_workers`)."""

    path: str
    old_path: str
    old_blob: str | None
    new_blob: str | None
    hunks: tuple[tuple[int, int, int, int], ...]
    removed: tuple[int, ...]
    added: tuple[int, ...]
    added_text: tuple[str, ...]


# (old side, new side): changed line number -> enclosing definition; None where no parser read
# that side (see SymbolExtractor.file_symbols).
FileAnswer = tuple["dict[int, Definition] | None", "dict[int, Definition] | None"]


def symbol_requests(change: Change, settings: Settings) -> dict[int, FileRequest]:
    """One request per file (by index in `change.files`) that a grammar can read."""
    from index.symbols import language_for_path

    if not settings.symbols:
        return {}
    requests: dict[int, FileRequest] = {}
    for file_index, file in enumerate(change.files):
        if not file.hunks or not language_for_path(file.path):
            continue
        added = [line for line in file.changed_lines if line.side == "+"]
        requests[file_index] = FileRequest(
            path=file.path,
            old_path=file.old_path,
            old_blob=file.old_blob,
            new_blob=file.new_blob,
            hunks=tuple((h.old_start, h.old_length, h.new_start, h.new_length) for h in file.hunks),
            removed=tuple(line.number for line in file.changed_lines if line.side == "-"),
            added=tuple(line.number for line in added),
            added_text=tuple(line.text for line in added),
        )
    return requests


def answer(
    request: FileRequest, extractor: SymbolExtractor, blobs: BlobReader, limit: int
) -> FileAnswer:
    """Find one file's enclosing definitions; `extractor` keeps trees between calls."""

    def read(blob: str) -> bytes | None:
        return blobs.read(blob, limit)

    return extractor.file_symbols(
        request.path,
        request.old_blob,
        request.new_blob,
        read,
        request.hunks,
        request.removed,
        request.added,
        old_path=request.old_path,
        added_text=request.added_text,
    )


def assemble(
    change: Change, answers: dict[int, FileAnswer]
) -> tuple[tuple[SymbolRow, ...], dict[tuple[int, int], str]]:
    """Symbol rows and each hunk's main symbol from the answers for `change`'s files; git's
    hunk header stands in where no parser read the file."""
    rows: set[SymbolRow] = set()
    hunk_symbols: dict[tuple[int, int], str] = {}
    for file_index, file in enumerate(change.files):
        if not file.hunks:
            continue
        by_line: dict[tuple[str, int], Definition] = {}
        parsed = False
        for side, found in zip(("-", "+"), answers.get(file_index, (None, None)), strict=True):
            if found is None:
                continue
            parsed = True
            for number, enclosing in found.items():
                by_line[(side, number)] = enclosing
        for hunk_index, hunk in enumerate(file.hunks):
            names: Counter[str] = Counter()
            for line in hunk.lines:
                definition = by_line.get((line.side, line.number))
                if definition is None:
                    continue
                rows.add(SymbolRow(file.path, definition.qualified, definition.kind, line.side))
                names[definition.qualified] += 1
            if names:
                hunk_symbols[(file_index, hunk_index)] = names.most_common(1)[0][0]
            elif not parsed:  # git's hunk header only where no parser read the file
                fallback = _section_symbol(hunk.section)
                if fallback:
                    hunk_symbols[(file_index, hunk_index)] = fallback
                    for side in {line.side for line in hunk.lines}:
                        rows.add(SymbolRow(file.path, fallback, "section", side))
    return tuple(sorted(rows, key=lambda r: (r.path, r.qualified, r.side))), hunk_symbols


def extract_symbols(
    change: Change,
    blobs: BlobReader | None,
    settings: Settings,
    extractor: SymbolExtractor | None = None,
) -> tuple[tuple[SymbolRow, ...], dict[tuple[int, int], str]]:
    """The definitions each hunk changes: old side for removals, new side for additions.

    Pass one `extractor` for a whole indexing run: it keeps parsed file versions, so walking
    history oldest first parses each file version once, and mostly incrementally.
    """
    answers: dict[int, FileAnswer] = {}
    if blobs is not None:
        if extractor is None:
            from index.symbols import SymbolExtractor

            extractor = SymbolExtractor()
        answers = {
            file_index: answer(request, extractor, blobs, settings.max_file_bytes)
            for file_index, request in symbol_requests(change, settings).items()
        }
    return assemble(change, answers)
