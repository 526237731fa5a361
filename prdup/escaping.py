"""Making text from pull requests safe to show: in GitHub markdown, and on a terminal.

Titles, paths, symbols, reasons and changed lines come from pull requests, that is from anyone.
In markdown they must not ping people, cross-reference issues, inject HTML or links, or break a
table; on a terminal they must not carry escape sequences (an OSC sequence in a title can set
the window title, write to the clipboard or make a link on some terminals).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MAX_TITLE = 120  # characters of a PR title shown
MAX_REASON = 240
MAX_LINE = 160  # characters of one shared changed line

# Control characters, zero-width and bidirectional-override characters ("Trojan source").
_INVISIBLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")
_MARKDOWN = re.compile(r"[\\`*_\[\]|~]")
_MENTION = re.compile(r"@(?=[A-Za-z0-9])")
# "#12", "owner/repo#12", "GH-12": quoting them would add the bot's comment to those issues'
# timelines. Bare URLs would be autolinked (GFM's extension), which PR text should not get.
_REFERENCE = re.compile(r"(?<=#)(?=\d)|(?<=GH-)(?=\d)", re.IGNORECASE)
_AUTOLINK = re.compile(r"(?<=:)(?=//)|(?<=\bwww)(?=\.)", re.IGNORECASE)
_ZWJ = "\u200d"  # a zero-width joiner: GitHub no longer sees a mention or link, readers still do
_PLAIN = re.compile(r"[^\w #.,:()-]")  # what text prdup writes itself may contain

# Terminal escape sequences (ECMA-48): OSC (ESC ] ... BEL or ST), DCS/SOS/PM/APC strings, CSI
# (ESC [ ... final byte), and two-byte escapes; then their 8-bit C1 forms (0x9b CSI, 0x9d OSC).
_ESCAPE_SEQUENCE = re.compile(
    r"\x1b[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b[ -/]*[0-~]"
    r"|[\x90\x98\x9d-\x9f][^\x07\x1b\x9c]*(?:\x07|\x9c)?"
    r"|\x9b[0-?]*[ -/]*[@-~]"
)
_TERMINAL_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def without_controls(text: str | None) -> str:
    """`text` without terminal escape sequences (payload included) and control characters.

    Tabs and newlines stay; so does everything printable.
    """
    return _TERMINAL_CONTROL.sub("", _ESCAPE_SEQUENCE.sub("", text or ""))


def terminal(text: str | None) -> str:
    """PR text for a terminal: escape sequences and control characters removed, one line."""
    return " ".join(without_controls(text).replace("\t", " ").split("\n"))


def truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def inline(text: str | None, limit: int = MAX_TITLE) -> str:
    """PR text made safe for prose and table cells: one line, no HTML, no markdown, no pings.

    Also no links: issue references and URLs get a zero-width joiner, so quoting a title never
    cross-references an issue or turns into a clickable link.
    """
    flat = " ".join(_INVISIBLE.sub("", without_controls(text)).split())
    flat = truncate(flat, limit)
    flat = flat.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    flat = _MARKDOWN.sub(lambda match: "\\" + match.group(0), flat)
    flat = _MENTION.sub("@" + _ZWJ, flat)
    flat = _REFERENCE.sub(_ZWJ, flat)
    return _AUTOLINK.sub(_ZWJ, flat)


def reason_markdown(reason: str, in_table: bool = False) -> str:
    """A detector reason, whose `code` quotes come from the PR: code spans kept, the rest inline.

    Inside a code span GitHub parses no markdown, renders no HTML and links no mentions; a quote
    holding a backtick is not matched and gets escaped with the rest. In a table cell a pipe
    ends the cell even inside a code span, unless escaped (GFM's table extension).
    """
    parts = re.split(r"`([^`\n]+)`", truncate(" ".join(reason.split()), MAX_REASON))
    out: list[str] = []
    for position, part in enumerate(parts):
        if position % 2:
            code = _INVISIBLE.sub("", without_controls(part))
            out.append(f"`{code.replace('|', chr(92) + '|') if in_table else code}`")
        elif part.strip():
            lead = " " if part[0] == " " else ""
            trail = " " if part[-1] == " " else ""
            out.append(lead + inline(part, MAX_REASON) + trail)
        else:
            out.append(part)
    return "".join(out)


def code_span(text: str | None, limit: int = MAX_TITLE) -> str:
    """PR text (a file path) as a markdown code span, shown as written: inside it GitHub parses
    no markdown, renders no HTML and links no mentions, so nothing is escaped but backticks,
    which a longer delimiter holds (CommonMark), padded where the text starts or ends with one.
    """
    flat = truncate(" ".join(_INVISIBLE.sub("", without_controls(text)).split()), limit)
    fence = "`" * (max((len(run) for run in re.findall(r"`+", flat)), default=0) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def plain(text: str) -> str:
    """prdup's own words with keys like "#12" (links wanted): anything unexpected is dropped."""
    return _PLAIN.sub("", text)


def code_line(text: str) -> str:
    """A changed line for a fenced block: visible characters only, truncated.

    Inside a fence GitHub renders no HTML, links no mentions and parses no markdown; the one way
    out is a closing fence, which :func:`fence_for` prevents.
    """
    return truncate(_INVISIBLE.sub("", without_controls(text).replace("\t", "    ")), MAX_LINE)


def fence_for(lines: Iterable[str]) -> str:
    """A backtick fence longer than any backtick run in `lines` (CommonMark closes on >= length)."""
    longest = max((len(run) for line in lines for run in re.findall(r"`+", line)), default=0)
    return "`" * max(3, longest + 1)


def one_line(text: str | None, limit: int = MAX_REASON) -> str:
    """PR text for a plain-text channel (an annotation, a SARIF message): one line, visible
    characters only (no escape sequences, no bidi overrides), truncated. Nothing there renders
    markdown or HTML, so nothing else needs escaping."""
    return truncate(" ".join(_INVISIBLE.sub("", without_controls(text)).split()), limit)


def workflow_data(text: str) -> str:
    """The message of a workflow command (`::warning ...::MESSAGE`), escaped as the runner
    unescapes it (actions/toolkit's `escapeData`): a newline in PR text cannot start a command
    of its own on the next line."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def workflow_property(text: str) -> str:
    """A workflow command's property value (`file=`, `title=`): also `:` and `,`, which end a
    value (actions/toolkit's `escapeProperty`)."""
    return workflow_data(text).replace(":", "%3A").replace(",", "%2C")
