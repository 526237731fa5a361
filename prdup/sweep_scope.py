"""Which open PRs a sweep covers: what `--since` and the state estimate leave out.

Without GitHub's metadata a PR's state is git's estimate (`index.git.state_estimate`); a PR it
estimates closed is left out unless asked for, and counted, so a maintainer sees what was
not swept and how to include it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime

from index.errors import InvalidDate
from index.questions.candidates import ChangeRow


def parse_since(text: str) -> date:
    """`--since`'s date (YYYY-MM-DD); a one-line error for anything else."""
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise InvalidDate(f"--since {text!r} is not a date: give it as YYYY-MM-DD") from None


@dataclass(frozen=True, slots=True)
class Scope:
    """The open PRs swept, and how many of the open ones each rule left out."""

    numbers: list[int]  # newest first
    estimated_closed: int = 0  # left out: git estimates them closed
    before_since: int = 0  # left out: opened before --since


def opened_on(row: ChangeRow, head_dates: dict[str, int]) -> date | None:
    """The day a PR was opened: its `created_at` (GitHub's, else its head commit's author
    date), else its head commit's date."""
    if row.created_at:
        try:
            found = datetime.fromisoformat(row.created_at.replace("Z", "+00:00"))
        except ValueError:
            found = None
        if found is not None:
            return (found if found.tzinfo else found.replace(tzinfo=UTC)).astimezone(UTC).date()
    seconds = head_dates.get(row.head_sha or "")
    return datetime.fromtimestamp(seconds, UTC).date() if seconds is not None else None


def select(
    open_rows: list[ChangeRow],
    estimates: dict[int, str],
    *,
    include_estimated_closed: bool = False,
    since: date | None = None,
    head_dates: dict[str, int] | None = None,
) -> Scope:
    """The open PRs to sweep, newest first. A PR whose opening day is unknown is kept."""
    numbers: list[int] = []
    estimated_closed = before_since = 0
    for row in sorted(open_rows, key=lambda row: row.number or 0, reverse=True):
        if row.number is None:
            continue
        if not include_estimated_closed and estimates.get(row.number) == "closed":
            estimated_closed += 1
            continue
        day = opened_on(row, head_dates or {}) if since is not None else None
        if since is not None and day is not None and day < since:
            before_since += 1
            continue
        numbers.append(row.number)
    return Scope(numbers, estimated_closed, before_since)
