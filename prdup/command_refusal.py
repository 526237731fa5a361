"""The one answer a pull request gets when someone who may not command prdup tries to.

A stranger's `/prdup not-duplicate` is not applied (anyone can comment on a public PR, and a
stranger must not be able to hide a finding), but its author should not be left waiting: the
bot says once per PR who may command it and what to do instead.
"""

from __future__ import annotations

from collections.abc import Iterable

from prdup.bot_event import NOT_DUPLICATE_LABEL
from prdup.comment import BotLoginUnknown
from prdup.github import Comment, GitHubClient

REFUSED_MARKER = "<!-- prdup:command-refused -->"


def refusal_body() -> str:
    """The answer: one paragraph on one line (GitHub shows every newline of a comment as a
    line break), no line starting with `/prdup`, so the answer is no command itself."""
    return (
        f"{REFUSED_MARKER}\n"
        "prdup takes `/prdup` commands only from this repository's owners, members and "
        "collaborators, so a command from anyone else is not applied. If prdup got this pull "
        "request wrong, say why in a comment and ask a maintainer: they can reply "
        f"`/prdup not-duplicate #N` or add the label `{NOT_DUPLICATE_LABEL}`.\n\n"
        "<sub>prdup answers this once per pull request.</sub>"
    )


def already_answered(comments: Iterable[Comment], bot_login: str) -> bool:
    """An earlier answer is the bot's own comment starting with the marker; the marker in
    anybody else's comment does not count, so a stranger cannot silence it for the rest."""
    return any(
        c.body.lstrip().startswith(REFUSED_MARKER) and (c.author or "").lower() == bot_login.lower()
        for c in comments
    )


def answer_refused_command(client: GitHubClient, number: int, bot_login: str | None) -> bool:
    """Post the answer on PR `number` unless the bot gave it already; True when posted."""
    login = bot_login or client.viewer_login()
    if login is None:
        raise BotLoginUnknown(
            "cannot tell whether prdup answered already: the token's login is unknown; "
            "set PRDUP_BOT_LOGIN"
        )
    if already_answered(client.list_comments(number), login):
        return False
    client.create_comment(number, refusal_body())
    return True
