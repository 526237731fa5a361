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
    from index.symbols import SymbolExtractor

LANGUAGE_FREE = ""


@dataclass(frozen=True, slots=True)
class PreparedChange:
    change: Change
    symbols: tuple[SymbolRow, ...]
    hunk_symbols: dict[tuple[int, int], str]
    truncated: bool


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
    from index import symbols as symbol_finder

    if extractor is None:
        extractor = symbol_finder.SymbolExtractor()
    limit = settings.max_file_bytes

    def read(blob: str) -> bytes | None:
        return blobs.read(blob, limit) if blobs is not None else None

    rows: set[SymbolRow] = set()
    hunk_symbols: dict[tuple[int, int], str] = {}
    for file_index, file in enumerate(change.files):
        if not file.hunks:
            continue
        by_line: dict[tuple[str, int], symbol_finder.Definition] = {}
        language = symbol_finder.language_for_path(file.path)
        parsed = False
        if language and blobs is not None and settings.symbols:
            removed = [line.number for line in file.changed_lines if line.side == "-"]
            added_lines = [line for line in file.changed_lines if line.side == "+"]
            old_side, new_side = extractor.file_symbols(
                file.path,
                file.old_blob,
                file.new_blob,
                read,
                [(h.old_start, h.old_length, h.new_start, h.new_length) for h in file.hunks],
                removed,
                [line.number for line in added_lines],
                old_path=file.old_path,
                added_text=[line.text for line in added_lines],
            )
            for side, found in (("-", old_side), ("+", new_side)):
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


def prepare(
    diff_text: str,
    blobs: BlobReader | None,
    settings: Settings,
    extractor: SymbolExtractor | None = None,
) -> PreparedChange:
    """Parse, filter and attach symbols; `extractor` keeps syntax trees between changes."""
    change, truncated = parse_filtered(diff_text, settings)
    symbols, hunk_symbols = extract_symbols(change, blobs, settings, extractor)
    return PreparedChange(change, symbols, hunk_symbols, truncated)
