"""A diff as `check` reads it: filtered files, bounded size, and the symbols of each hunk."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

import git

from detector.model import Change, FileChange, NotADiff, parse_files
from index.config import Settings
from index.git import gitsource
from index.git.doc_sections import DocumentHunk, is_document, section_titles
from index.git.gitsource import BlobReader
from index.git.hunk_symbols import header_kind, header_symbol
from index.git.stored_diff import CUT, StoredChange, stored_from_change
from index.storage.change_rows import SymbolRow
from index.storage.store import IndexStore

if TYPE_CHECKING:
    from index.git.symbols import Definition, SymbolExtractor

LANGUAGE_FREE = ""


def whole_patch_id(repo: git.Repo, settings: Settings, base: str, head: str) -> str | None:
    """The patch identity of `base..head` read whole from git, for a PR the index read only
    up to its line limit; None when git lacks its objects or it changes no line."""
    try:
        change, _ = parse_filtered(gitsource.diff_between(repo, base, head), settings)
    except (git.GitCommandError, NotADiff):
        return None
    return None if change.is_empty else change.patch_id


def parse_filtered(diff_text: str, settings: Settings) -> tuple[Change, bool]:
    """Parse a diff, drop ignored files, and cut a huge change down to `max_changed_lines`.

    Returns the change and whether it was truncated. A PR of tens of thousands of lines is still
    indexed (its files and first lines); it just does not get to flood the line index.
    """
    kept: list[FileChange] = []
    skipped: list[tuple[str, str]] = []
    budget = settings.max_changed_lines
    truncated = False
    cut: list[str] = []
    # A file is modelled only when kept: of a cut one, only its hunks' identities are read;
    # a diff of more lines than the budget is parsed a file at a time, its lines when kept.
    lazily = diff_text.count("\n") > budget
    for file in parse_files(diff_text, lazily):
        path = file.path
        pattern = settings.is_ignored(path)
        if pattern:
            skipped.append((path, f"ignored by {pattern}"))
            continue
        size = file.changed
        if size > budget:
            truncated = True
            kept.append(file.change(with_lines=False))
            skipped.append((path, CUT))
            cut += [f"{path}\0{content_hash}" for content_hash in file.hunk_ids()]
            continue
        budget -= size
        kept.append(file.change())
    change = Change(files=tuple(kept), skipped_files=tuple(skipped), cut_hunks=tuple(cut))
    return change, truncated


def from_model(diff: str, settings: Settings) -> StoredChange:
    """The stored form through the diff model (unidiff), for diffs the fast path does not read."""
    change, truncated = parse_filtered(diff, settings)
    return stored_from_change(change, truncated)


@dataclass(frozen=True, slots=True)
class FileRequest:
    """What finding one file's changed definitions with tree-sitter needs (for `check`)."""

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
    from index.git.symbols import language_for_path

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


def header_symbols(
    change: Change, settings: Settings
) -> tuple[set[SymbolRow], dict[tuple[int, int], str]]:
    """The symbols git's hunk headers name, as the index stores them: one per hunk, on the
    sides it changes."""
    rows: set[SymbolRow] = set()
    names: dict[tuple[int, int], str] = {}
    if not settings.symbols:
        return rows, names
    for file_index, file in enumerate(change.files):
        for hunk_index, hunk in enumerate(file.hunks):
            name = header_symbol(file.path, hunk.section)
            if name is None:
                continue
            names[(file_index, hunk_index)] = name
            kind = header_kind(file.path, hunk.section)
            rows.update(SymbolRow(file.path, name, kind, line.side) for line in hunk.lines)
    return rows, names


def assemble(
    change: Change, answers: dict[int, FileAnswer], settings: Settings
) -> tuple[tuple[SymbolRow, ...], dict[tuple[int, int], str]]:
    """Symbol rows from the hunk headers, as the index has them, so they match; each hunk's
    name for the reasons shown is tree-sitter's qualified one where a parser read the file."""
    rows, hunk_symbols = header_symbols(change, settings)
    for file_index, file in enumerate(change.files):
        by_line: dict[tuple[str, int], Definition] = {}
        for side, found in zip(("-", "+"), answers.get(file_index, (None, None)), strict=True):
            for number, enclosing in (found or {}).items():
                by_line[(side, number)] = enclosing
        if not by_line:
            continue
        for hunk_index, hunk in enumerate(file.hunks):
            names: Counter[str] = Counter()
            for line in hunk.lines:
                definition = by_line.get((line.side, line.number))
                if definition is not None:
                    names[definition.qualified] += 1
            if names:
                hunk_symbols[(file_index, hunk_index)] = names.most_common(1)[0][0]
    return tuple(sorted(rows, key=lambda r: (r.path, r.qualified, r.side))), hunk_symbols


def extract_symbols(
    change: Change,
    blobs: BlobReader | None,
    settings: Settings,
    extractor: SymbolExtractor | None = None,
) -> tuple[tuple[SymbolRow, ...], dict[tuple[int, int], str]]:
    """A query's symbols: the hunk headers' names (what the index matches on) and, for the
    reasons shown, each hunk's qualified name from tree-sitter where it reads the file (old
    side for removals, new side for additions)."""
    answers: dict[int, FileAnswer] = {}
    if blobs is not None:
        if extractor is None:
            from index.git.symbols import SymbolExtractor

            extractor = SymbolExtractor()
        answers = {
            file_index: answer(request, extractor, blobs, settings.max_file_bytes)
            for file_index, request in symbol_requests(change, settings).items()
        }
    return assemble(change, answers, settings)


def document_sections(
    change: Change, blobs: BlobReader | None, settings: Settings
) -> dict[tuple[str, str], str]:
    """(path, header symbol) -> the title of the section each document hunk sits in, read
    from the file's version on the side the hunk changes (one read per file)."""
    if not settings.symbols:
        return {}
    hunks: list[DocumentHunk] = []
    for file in change.files:
        if not is_document(file.path):
            continue
        for hunk in file.hunks:
            symbol = header_symbol(file.path, hunk.section)
            if symbol is None:
                continue
            on_new = file.new_blob is not None or file.old_blob is None
            blob = file.new_blob if on_new else file.old_blob
            line = hunk.new_start if on_new else hunk.old_start
            hunks.append(DocumentHunk(file.path, symbol, blob or "", max(line, 1)))

    def read(blob: str) -> bytes | None:
        if not blob or blobs is None:
            return None
        return blobs.read(blob, settings.max_file_bytes)

    return section_titles(hunks, read)


def indexed_document_sections(
    store: IndexStore,
    blobs: BlobReader,
    change_id: int,
    head: str,
    shared: frozenset[tuple[str, str]],
    settings: Settings,
) -> dict[tuple[str, str], str]:
    """`document_sections` for an indexed change, for the (path, symbol) pairs in `shared`
    only: its document files are read at `head` when some candidate shares a header there."""
    from index.questions.lookup import document_hunks

    hunks = document_hunks(store, change_id, head, shared)
    return section_titles(hunks, lambda spec: blobs.read(spec, settings.max_file_bytes))
