"""Where a finding's shared lines sit in the checked change: file and line ranges of its new side.

Workflow annotations and SARIF results point at lines of the files as the change leaves them
(GitHub shows both on a pull request's new side). An added line has its own number there; a
removed line has none, so it is placed where it was removed (the new side's line at that spot).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from detector.evidence import Finding
from detector.model import Change, Hunk

MAX_REGIONS = 20  # places named per finding: enough to find them, few enough to read


@dataclass(frozen=True, slots=True)
class Region:
    """Lines `start`..`end` (1-based, inclusive) of `path`, on the change's new side."""

    path: str
    start: int
    end: int
    removed: int = 0  # shared lines removed at this place
    added: int = 0  # shared lines added here


def _new_side_lines(hunk: Hunk) -> Iterator[tuple[str, int, str]]:
    """(side, new-side line, normalised text) of each changed line of a hunk.

    A removed line sits where the new side continues: the hunk's lines before it on the old
    side are context or removed, on the new side context or added, so its place is
    new_start + (old lines before it) - (removed before it) + (added before it).
    """
    removed_before = added_before = 0
    for line in hunk.lines:
        if line.side == "+":
            yield "+", line.number, line.normalised
            added_before += 1
            continue
        place = hunk.new_start + (line.number - hunk.old_start) - removed_before + added_before
        yield "-", max(place, 1), line.normalised
        removed_before += 1


def shared_regions(
    change: Change | None, finding: Finding, limit: int = MAX_REGIONS
) -> list[Region]:
    """The places of `finding`'s shared lines in `change`, in file order, adjacent lines joined.

    Without shared lines, the first changed line of each shared file stands in (of the first
    changed file, if no file is shared), so a result still points at something the change
    touched. Without the change (it could not be read) there is no place at all.
    """
    if change is None:
        return []
    removed, added = set(finding.shared_removed), set(finding.shared_added)
    regions: list[Region] = []
    for file in change.files:
        for hunk in file.hunks:
            for side, number, text in _new_side_lines(hunk):
                if text not in (added if side == "+" else removed):
                    continue
                last = regions[-1] if regions else None
                if last is not None and last.path == file.path and last.end + 1 >= number:
                    regions[-1] = Region(
                        file.path,
                        last.start,
                        max(last.end, number),
                        last.removed + (side == "-"),
                        last.added + (side == "+"),
                    )
                else:
                    regions.append(
                        Region(file.path, number, number, int(side == "-"), int(side == "+"))
                    )
    if not regions:
        regions = _first_lines(change, set(finding.shared_files))
    return regions[:limit]


def _first_lines(change: Change, paths: set[str]) -> list[Region]:
    """The first changed line of each file in `paths`; of the first changed file if none is."""
    files = [f for f in change.files if f.hunks and (f.path in paths or f.old_path in paths)]
    if not files:
        files = [f for f in change.files if f.hunks][:1]
    regions = []
    for file in files:
        place = next(_new_side_lines(file.hunks[0]), ("+", 1, ""))[1]
        regions.append(Region(file.path, place, place))
    return regions
