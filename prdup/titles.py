"""How a PR's title is shown: one taken from its head commit says so.

Without GitHub's metadata (`prdup index --github` or `--prs-json`) a PR's title is its head
commit's subject, which can be anything ("wip", "Please enter the commit message for your
changes..."): the reader should not take it for the title on GitHub.
"""

from __future__ import annotations

COMMIT_TITLE_MARK = "(head commit's subject)"


def shown_title(title: str | None, from_commit: bool) -> str:
    """`title`, marked when it was taken from the PR's head commit."""
    if not title:
        return ""
    return f"{title} {COMMIT_TITLE_MARK}" if from_commit else title
