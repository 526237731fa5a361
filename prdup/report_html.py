"""The sweep as one self-contained HTML page: a summary, then the classes a maintainer acts on,
in order: PRs already done, duplicate groups with their evidence, PRs partly done (what
remains), and related work (collapsed).

The page needs no network: CSS and the small script that sorts and filters are inline in the
template (`prdup/templates/sweep_report.html`). Every text that comes from a PR (titles, lines,
reasons) is escaped here; the template only receives finished HTML fragments.
"""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime
from importlib import resources

from detector.evidence import OPEN_STATES
from detector.grouping import AlreadyDone, Group
from prdup.escaping import without_controls
from prdup.sweep import SweepResult, SweptFinding

TEMPLATE = "sweep_report.html"
SHOWN_LINES = 8
OPEN_GROUPS = 10  # the first groups show their evidence unfolded; the rest on a click
_PLACEHOLDER = re.compile(r"\{\{ (\w+) \}\}")


def _e(value: object) -> str:
    # Control characters are not allowed in HTML text; escape sequences would reach a terminal
    # that shows the file with `cat`.
    return html.escape(without_controls(str(value)), quote=True)


def template() -> str:
    return resources.files("prdup").joinpath("templates", TEMPLATE).read_text(encoding="utf-8")


def render_html(
    result: SweepResult,
    title: str = "",
    generated: datetime | None = None,
    pulls_url: str | None = None,
) -> str:
    """The whole page; `generated` is fixed in tests so the output is reproducible.

    With `pulls_url` ("https://github.com/owner/repo/pull/"), each PR number links to its PR.
    """
    links = _Links(pulls_url)
    when = (generated or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    parts = {
        "title": _e(f"prdup sweep: {title}" if title else "prdup sweep"),
        "generated": _e(when),
        "summary": _summary(result),
        "groups": "\n".join(_group(result, i, g, links) for i, g in enumerate(result.groups, 1))
        or '<p class="empty">No duplicate groups.</p>',
        "already_done": _already_done(result, links),
        "superseded": _superseded(result, links),
        "partly_done": _partly_done(result, links),
        "related": _related(result, links),
    }
    # One pass over the template: a PR title that reads "{{ groups }}" stays text.
    return _PLACEHOLDER.sub(lambda found: parts[found.group(1)], template())


def _summary(result: SweepResult) -> str:
    stats = result.stats
    groups = result.groups
    closable = {n for g in result.groups for n in g.members[1:]} | {
        d.pr for d in result.already_done
    }
    closable = {n for n in closable if (p := result.pulls.get(n)) and p.state in OPEN_STATES}
    cards = [
        (stats.swept, "open PRs swept", f"of {stats.open_prs} in the index"),
        (len(result.already_done), "already done", "open PRs a merged change made"),
        (len(result.groups), "duplicate groups", f"{sum(len(g.members) for g in groups)} PRs"),
        (len(result.superseded), "superseded", "a landing rewrote their lines"),
        (len(result.partly_done), "partly done", "to rebase: only a part remains"),
        (len(closable), "open PRs to close", "done PRs, and group members not kept"),
        (len(result.related), "related", "same code or issue, no claim"),
    ]
    html_cards = "".join(
        f'<div class="card"><b>{_e(value)}</b><span>{_e(label)}</span><small>{_e(note)}</small>'
        f"</div>"
        for value, label, note in cards
    )
    detail = (
        f"{stats.rechecked} checked, {stats.reused} from cache, {stats.seconds:.1f}s on "
        f"{stats.jobs} process(es); findings scoring below {result.min_score:.2f} are ignored."
    )
    if stats.unknown_states:
        detail += (
            f" The states of {stats.unknown_states} swept PRs are unknown (unmerged: open or "
            "closed; no GitHub metadata), so a closed PR may be listed as open."
        )
    return (
        f'<div class="cards">{html_cards}</div>{_class_chart(result)}'
        f'<p class="detail">{_e(detail)}</p>'
    )


# The five classes as the chart draws them, in the report's order, with their colours.
_CHART = (
    ("already done", "#2e7d32"),
    ("superseded", "#6a1b9a"),
    ("duplicates", "#c62828"),
    ("partly done", "#ef6c00"),
    ("related", "#9e9e9e"),
)


def _class_chart(result: SweepResult) -> str:
    """How the swept PRs with an answer split across the classes, as one stacked bar (inline
    SVG: the page stays one file and needs no script to draw it). A reader sees at once how
    much of the backlog can be closed."""
    members = sum(len(group.members) - 1 for group in result.groups)
    counts = [
        len(result.already_done),
        len(result.superseded),
        members,
        len(result.partly_done),
        len(result.related),
    ]
    total = sum(counts)
    if not total:
        return ""
    width, x = 600.0, 0.0
    bars, legend = [], []
    for (label, colour), count in zip(_CHART, counts, strict=True):
        if not count:
            continue
        share = width * count / total
        bars.append(
            f'<rect class="bar" data-class="{_e(label)}" x="{x:.1f}" y="0" width="{share:.1f}" '
            f'height="18" fill="{colour}"><title>{_e(label)}: {count}</title></rect>'
        )
        legend.append(f'<span style="color:{colour}">&#9632;</span> {_e(label)} {count}')
        x += share
    return (
        f'<figure class="chart"><svg role="img" aria-label="swept PRs by class" '
        f'viewBox="0 0 {width:.0f} 18" width="100%" height="18">{"".join(bars)}</svg>'
        f"<figcaption>{' &nbsp; '.join(legend)}</figcaption></figure>"
    )


class _Links:
    """PR numbers as HTML: links to the PRs when their repository is known, else plain."""

    def __init__(self, pulls_url: str | None) -> None:
        self.pulls_url = pulls_url

    def pr(self, number: int) -> str:
        if self.pulls_url is None:
            return f'<span class="pr">#{_e(number)}</span>'
        return f'<a class="pr" href="{_e(self.pulls_url)}{_e(number)}">#{_e(number)}</a>'


def _state(state: str) -> str:
    return f'<span class="state {_e(state)}">{_e(state)}</span>'


def _group(result: SweepResult, index: int, group: Group, links: _Links) -> str:
    keep = result.pulls.get(group.keep)
    found = {n: result.answer(n) for n in group.members[1:]}
    best = max((f.score for f in found.values() if f), default=0.0)
    words = " ".join(
        f"#{n} {p.title} {p.state}" for n in group.members if (p := result.pulls.get(n))
    )
    verdicts = " ".join(sorted({f.verdict for f in found.values() if f}))
    words += " " + verdicts
    rows = [_member_row(result, group.keep, None, links, keep=True)]
    rows += [_member_row(result, n, found[n], links) for n in group.members[1:]]
    unfold = index <= OPEN_GROUPS
    evidence = "".join(_evidence(n, f, unfold, links) for n, f in found.items() if f is not None)
    keep_title = _e(keep.marked_title) if keep else ""
    own = result.keep_landed(group)
    note = (
        f' <span class="where">itself {_e(own.verdict)} {_named(own, links)}</span>' if own else ""
    )
    return f"""
<section class="group" id="group-{index}" data-size="{len(group.members)}"
  data-score="{best:.4f}" data-keep="{group.keep}" data-index="{index}"
  data-verdicts="{_e(verdicts)}" data-text="{_e(words.lower())}">
  <h2><span class="num">{index}</span> Keep {links.pr(group.keep)}
    {_state(keep.state if keep else "unknown")}{note} <span class="title">{keep_title}</span></h2>
  <table class="members sortable">
    <thead><tr><th data-sort="num">PR</th><th data-sort="text">state</th>
      <th data-sort="text">verdict</th><th data-sort="num">of</th><th data-sort="num">score</th>
      <th data-sort="num">lines</th><th data-sort="text">title</th></tr></thead>
    <tbody>{"".join(rows)}</tbody>
  </table>
  {evidence}
</section>"""


def _member_row(
    result: SweepResult,
    number: int,
    found: SweptFinding | None,
    links: _Links,
    keep: bool = False,
) -> str:
    pull = result.pulls.get(number)
    verdict = "keep" if keep else (found.verdict if found else "?")
    score = f"{found.score:.2f}" if found else ""
    lines = pull.changed_lines if pull else 0
    return (
        f'<tr class="{"kept" if keep else "member"}">'
        f'<td data-value="{number}">{links.pr(number)}</td>'
        f"<td>{_state(pull.state if pull else 'unknown')}</td>"
        f'<td><span class="verdict {_e(verdict)}">{_e(verdict)}</span></td>'
        f'<td data-value="{(found.pr or 0) if found else 0}">'
        f"{_named(found, links) if found else ''}</td>"
        f'<td data-value="{_e(score or 9)}">{_e(score)}</td>'
        f'<td data-value="{lines}">+{pull.added if pull else 0} -{pull.removed if pull else 0}</td>'
        f"<td>{_e(pull.marked_title if pull else '')}</td></tr>"
    )


def _lines(texts: tuple[str, ...], sign: str) -> str:
    if not texts:
        return '<p class="none">none</p>'
    shown = "".join(
        f'<div class="line {"del" if sign == "-" else "add"}"><i>{sign}</i>'
        f"<code>{_e(text)}</code></div>"
        for text in texts[:SHOWN_LINES]
    )
    more = len(texts) - SHOWN_LINES
    return shown + (f'<p class="more">and {more} more</p>' if more > 0 else "")


def _named(found: SweptFinding, links: _Links) -> str:
    """The change a finding names: a link to its PR, or its commit."""
    if found.pr is not None:
        return links.pr(found.pr)
    return f"<code>{_e((found.commit or '')[:10])}</code>"


def _evidence(number: int, found: SweptFinding, unfold: bool, links: _Links) -> str:
    reasons = "".join(f"<li>{_e(reason)}</li>" for reason in found.reasons)
    where = ", ".join(found.shared_symbols[:4] or found.shared_files[:4])
    return f"""
  <details class="evidence"{" open" if unfold else ""}>
    <summary>{links.pr(number)} vs {_named(found, links)}:
      <span class="verdict {_e(found.verdict)}">{_e(found.verdict)}</span> {found.score:.2f}
      <span class="where">{_e(where)}</span></summary>
    <ul class="reasons">{reasons}</ul>
    <div class="sides">
      <div><h3>removed by both</h3>{_lines(found.shared_removed, "-")}</div>
      <div><h3>added by both</h3>{_lines(found.shared_added, "+")}</div>
    </div>
  </details>"""


def _reasons(found: SweptFinding | None) -> str:
    """A finding's reasons, folded into a table cell."""
    if found is None or not found.reasons:
        return "<td></td>"
    items = "".join(f"<li>{_e(reason)}</li>" for reason in found.reasons)
    return (
        f'<td><details class="reasons"><summary>{len(found.reasons)} reason(s)</summary>'
        f'<ul class="reasons">{items}</ul></details></td>'
    )


def _done_row(result: SweepResult, done: AlreadyDone, links: _Links) -> str:
    pull = result.pulls.get(done.pr)
    by_pull = result.pulls.get(done.by) if done.by is not None else None
    by = (
        links.pr(done.by) if done.by is not None else f"<code>{_e((done.commit or '')[:10])}</code>"
    )
    if done.through is not None:
        by += f" (through {links.pr(done.through)})"
    text = f"#{done.pr} {pull.title if pull else ''}".lower()
    commit = f"<code>{_e(done.commit[:10])}</code>" if done.commit else ""
    return (
        f'<tr data-text="{_e(text)}" data-verdict="already-merged">'
        f'<td data-value="{done.pr}">{links.pr(done.pr)}</td>'
        f"<td>{_e(pull.marked_title if pull else '')}</td>"
        f'<td data-value="{done.by or 0}">{by}</td>'
        f"<td>{_e(by_pull.marked_title if by_pull else '')}</td>"
        f"<td>{commit}</td>"
        f'<td data-value="{done.score:.4f}">{done.score:.2f}</td>'
        f"{_reasons(result.answer(done.pr))}</tr>"
    )


def _already_done(result: SweepResult, links: _Links) -> str:
    if not result.already_done:
        return '<p class="empty">No open PR is already on the target.</p>'
    rows = "".join(_done_row(result, done, links) for done in result.already_done)
    return f"""<table class="done listed sortable">
  <thead><tr><th data-sort="num">open PR</th><th data-sort="text">title</th>
    <th data-sort="num">done by</th><th data-sort="text">its title</th>
    <th data-sort="text">landing</th><th data-sort="num">score</th>
    <th data-sort="text">evidence</th></tr></thead>
  <tbody>{rows}</tbody>
</table>"""


def _partly_row(result: SweepResult, number: int, found: SweptFinding, links: _Links) -> str:
    """A partly done or superseded PR: what landed, and what of the rest is or is not to do."""
    pull = result.pulls.get(number)
    text = f"#{number} {pull.title if pull else ''} {found.verdict}".lower()
    share = found.done_share
    remaining = "".join(f"<li><code>{_e(item)}</code></li>" for item in found.remaining_text())
    remaining += "".join(f'<li class="not-to-apply">{_e(said)}</li>' for said in found.not_to_apply)
    commit = f"<code>{_e(found.commit[:10])}</code>" if found.commit else ""
    return (
        f'<tr data-text="{_e(text)}" data-verdict="{_e(found.verdict)}">'
        f'<td data-value="{number}">{links.pr(number)}</td>'
        f"<td>{_e(pull.marked_title if pull else '')}</td>"
        f'<td data-value="{found.pr or 0}">{_named(found, links)}</td>'
        f"<td>{commit}</td>"
        f'<td data-value="{share or 0:.4f}">{_e(found.share_done or "")}</td>'
        f'<td><ul class="remaining">{remaining}</ul></td>{_reasons(found)}</tr>'
    )


def _partly_done(result: SweepResult, links: _Links) -> str:
    empty = "No open PR is partly done on the target."
    return _landed_table(result, links, "partly", empty, "partly done in", "still to do")


def _superseded(result: SweepResult, links: _Links) -> str:
    empty = "No open PR is superseded by a landing."
    return _landed_table(result, links, "superseded", empty, "superseded by", "rest")


def _landed_table(
    result: SweepResult, links: _Links, name: str, empty: str, named: str, rest: str
) -> str:
    """The PRs of class `name` (partly done, or superseded) beside the landing each names."""
    found = result.partly_done if name == "partly" else result.superseded
    if not found:
        return f'<p class="empty">{_e(empty)}</p>'
    rows = "".join(_partly_row(result, n, f, links) for n, f in found)
    return f"""<table class="{name} listed sortable">
  <thead><tr><th data-sort="num">open PR</th><th data-sort="text">title</th>
    <th data-sort="num">{_e(named)}</th><th data-sort="text">landing</th>
    <th data-sort="num">done</th><th data-sort="text">{_e(rest)}</th>
    <th data-sort="text">evidence</th></tr></thead>
  <tbody>{rows}</tbody>
</table>"""


def _related(result: SweepResult, links: _Links) -> str:
    """Related work, folded: the same code or issue, with no claim that either does the other."""
    related = result.related
    if not related:
        return ""
    rows = "".join(
        f'<tr><td data-value="{n}">{links.pr(n)}</td>'
        f"<td>{_e(p.marked_title if (p := result.pulls.get(n)) else '')}</td>"
        f'<td><span class="verdict {_e(f.verdict)}">{_e(f.verdict)}</span></td>'
        f'<td data-value="{f.pr or 0}">{_named(f, links)}</td>'
        f'<td data-value="{f.score:.4f}">{f.score:.2f}</td>{_reasons(f)}</tr>'
        for n, f in related
    )
    return f"""<details class="related">
  <summary><h2 class="section">Related work (no claim): {len(related)} PR(s)</h2></summary>
  <table class="related sortable">
    <thead><tr><th data-sort="num">open PR</th><th data-sort="text">title</th>
      <th data-sort="text">verdict</th><th data-sort="num">to</th>
      <th data-sort="num">score</th><th data-sort="text">evidence</th></tr></thead>
    <tbody>{rows}</tbody>
  </table>
</details>"""
