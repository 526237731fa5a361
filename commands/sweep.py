"""`prdup sweep`: the whole open backlog as a maintainer acts on it, as text, JSON, markdown or
HTML: already done, duplicate groups, partly done, related work (in that order)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from commands.support import (
    EXIT_FINDINGS,
    db_option,
    fail_on_option,
    github_option,
    handles_errors,
    min_score_option,
    repo_option,
    work_tree,
)
from index.config import Settings
from prdup.escaping import inline, terminal

if TYPE_CHECKING:  # the sweep engine is imported when the command runs: `prdup check` starts fast
    from detector.grouping import AlreadyDone, Group
    from prdup.sweep import SweepResult, SweepStats, SweptFinding

FORMATS = ("text", "json", "markdown", "html")


@click.command("sweep")
@repo_option
@db_option
@click.option("--format", "output", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option(
    "--out",
    "out_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the report to FILE instead of stdout.",
)
@min_score_option(f"Ignore findings scoring below S [default: {Settings().min_score}].")
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=2,
    show_default=True,
    help="Processes matching PRs in parallel.",
)
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=None,
    help="Sweep only the N highest-numbered open PRs.",
)
@click.option("--full", is_flag=True, help="Re-check every PR instead of reusing the cache.")
@click.option(
    "--since",
    metavar="DATE",
    help="Sweep only PRs opened on or after DATE (YYYY-MM-DD; without metadata, the day of "
    "the head commit).",
)
@click.option(
    "--include-estimated-closed",
    is_flag=True,
    help="Also sweep the PRs git estimates closed (no metadata; no test merge for a year, no "
    "commit for two).",
)
@github_option(
    "Link PR numbers in the HTML report to this repository's PRs (default: "
    "$GITHUB_REPOSITORY, else the repository `prdup index --github` imported)."
)
@fail_on_option("a swept PR's answer (the finding check shows first)")
@click.option("--exit-zero", is_flag=True, help="Exit 0 whatever is found (--fail-on none).")
@handles_errors
def sweep(
    repo_path: Path,
    db_path: Path | None,
    output: str,
    out_path: Path | None,
    min_score: float | None,
    jobs: int,
    limit: int | None,
    full: bool,
    since: str | None,
    include_estimated_closed: bool,
    github_repo: str | None,
    fail_on: tuple[str, ...] | None,
    exit_zero: bool,
) -> None:
    """Check every open PR against merged and open PRs; list those already done, duplicate
    groups (one per PR to keep), those partly done, and related work.

    Each PR's answer is the finding `check --pr N` shows first. Exits 1 when an answer's
    verdict is one --fail-on names (by default: a PR already done, or a duplicate to close), 0
    otherwise, 2 on errors.
    """
    from index.config import load_settings
    from prdup.progress import sweep_progress
    from prdup.sweep import sweep as run_sweep
    from prdup.sweep_scope import parse_since

    since_day = parse_since(since) if since is not None else None
    settings = load_settings(work_tree(repo_path), min_score=min_score, fail_on=fail_on)
    if out_path is not None:
        check_writable(out_path)  # before the sweep, which can take minutes
    with sweep_progress() as progress:
        result = run_sweep(
            repo_path,
            db_path,
            min_score=settings.min_score,
            jobs=jobs,
            limit=limit,
            full=full,
            progress=progress,
            settings=settings,
            since=since_day,
            include_estimated_closed=include_estimated_closed,
        )
    pulls_url = None
    if output == "html":
        pulls_url = _pulls_url(github_repo or _imported_repository(repo_path, db_path))
    report = render(result, output, title=_title(repo_path, db_path), pulls_url=pulls_url)
    if out_path is not None:
        write_report(out_path, report)
        click.echo(f"{summary_line(result)} -> {out_path}", err=True)
    else:
        click.echo(report)
    failing = sorted(v for v in result.verdicts() if settings.fails_on(v))
    if failing and not exit_zero:
        # The exit code is the findings' (`--fail-on`), not an error: say so where it is read.
        click.echo(
            f"prdup: exit {EXIT_FINDINGS}: some answers are {', '.join(failing)} "
            "(--fail-on; --exit-zero exits 0)",
            err=True,
        )
        raise SystemExit(EXIT_FINDINGS)


def check_writable(path: Path) -> None:
    """Fail now, in one line, where the report could not be written later."""
    import tempfile

    from index.errors import BadOutput

    folder = path.parent
    if not folder.is_dir():
        raise BadOutput(f"--out {path}: the folder {folder} does not exist")
    if path.is_dir():
        raise BadOutput(f"--out {path}: is a folder; give a file's path")
    try:
        if path.exists():
            with open(path, "a", encoding="utf-8"):  # appends nothing: only asks
                pass
        else:
            # A real file, not os.access: that says yes to root where nothing can be written.
            with tempfile.TemporaryFile(dir=folder):
                pass
    except OSError as error:
        raise BadOutput(f"--out {path}: cannot write there ({error.strerror})") from None


def write_report(path: Path, report: str) -> None:
    from index.errors import BadOutput

    try:
        path.write_text(report, encoding="utf-8")
    except OSError as error:
        raise BadOutput(f"--out {path}: cannot write the report ({error.strerror})") from None


def _title(repo_path: Path, db_path: Path | None) -> str:
    name = Path(repo_path).resolve().name if db_path is None else Path(db_path).stem
    return name.removesuffix(".git")


def _imported_repository(repo_path: Path, db_path: Path | None) -> str | None:
    import os

    from prdup.github_import import imported_repository

    return os.environ.get("GITHUB_REPOSITORY") or imported_repository(repo_path, db_path)


def _pulls_url(github_repo: str | None) -> str | None:
    """Where PR N lives: {server}/{owner/repo}/pull/N ($GITHUB_SERVER_URL for GitHub Enterprise)."""
    import os
    import re

    if not github_repo or not re.fullmatch(r"[\w.-]+/[\w.-]+", github_repo):
        return None
    server = (os.environ.get("GITHUB_SERVER_URL") or "https://github.com").rstrip("/")
    return f"{server}/{github_repo}/pull/"


def render(result: SweepResult, output: str, title: str = "", pulls_url: str | None = None) -> str:
    if output == "json":
        return json.dumps(result.to_json(), indent=2)
    if output == "markdown":
        return to_markdown(result)
    if output == "html":
        from prdup.report_html import render_html

        return render_html(result, title=title, pulls_url=pulls_url)
    return to_text(result)


def summary_line(result: SweepResult) -> str:
    stats = result.stats
    closable = sum(len(group.members) - 1 for group in result.groups)
    return (
        f"swept {stats.swept} of {stats.open_prs} open PRs ({stats.rechecked} checked, "
        f"{stats.reused} from cache) in {stats.seconds:.1f}s: {len(result.already_done)} PR(s) "
        f"already done, {len(result.superseded)} superseded, "
        f"{len(result.groups)} duplicate group(s) ({closable} PR(s) to close), "
        f"{len(result.partly_done)} partly done, {len(result.related)} related"
        + unknown_states_note(stats)
    )


def unknown_states_note(stats: SweepStats) -> str:
    """What the sweep says of the states git estimated (no GitHub metadata), and of the open
    PRs it left out."""
    said = []
    if stats.estimated_open:
        said.append(
            f"{stats.estimated_open} of the swept PRs are open by estimate (a recent test merge "
            "of GitHub's)"
        )
    if stats.unknown_states:
        said.append(
            f"the states of {stats.unknown_states} of the swept PRs are unknown (unmerged: open "
            "or closed), so a closed PR may be listed as open"
        )
    if stats.estimated_closed_left_out:
        said.append(
            f"{stats.estimated_closed_left_out} PR(s) estimated closed (no test merge for a "
            "year, no commit for two) were left out: --include-estimated-closed sweeps them"
        )
    if stats.opened_before_since:
        said.append(f"{stats.opened_before_since} PR(s) opened before --since were left out")
    if not said:
        return ""
    tells = (
        ": prdup index --github OWNER/REPO (or --prs-json FILE) tells the states"
        if stats.estimated_open or stats.unknown_states or stats.estimated_closed_left_out
        else ""
    )
    return "; " + "; ".join(said) + tells


SAYS = {
    "already-merged": "already done by",
    "superseded": "superseded by",
    "duplicate": "duplicate of",
    "covered": "covered by",
    "partly-merged": "partly done in",
    "overlap": "overlaps",
    "related": "related to",
}
RELATED_LISTED = 10  # the related class is a count and a short list in text
SPANS_SHOWN = 6  # line spans of one file a partly done PR still has to do (JSON has all)
FILES_SHOWN = 6


def _shares(found: SweptFinding) -> str:
    """What a related PR shares, where a score would read as the odds of a duplicate."""
    from prdup.render import shared_in_words

    return shared_in_words(
        found.shared_removed, found.shared_added, found.shared_files, found.shared_symbols
    )


def says(found: SweptFinding) -> str:
    """ "covered by #31", "already done by commit 0123456789": the answer in words."""
    words = SAYS.get(found.verdict, found.verdict.replace("-", " "))
    return f"{words} {found.named}"


def landing(found: SweptFinding) -> str:
    """Where the named change is: "#5 (merged, commit 0123456789)"."""
    if found.pr is None:
        return found.named
    commit = f", commit {found.commit[:10]}" if found.commit else ""
    return f"{found.named} ({found.state}{commit})"


def _done_by(done: AlreadyDone) -> str:
    """Where an already done PR's change is, from its entry: "#5 (commit 0123456789), through
    #7 (the same change, itself done by it)"."""
    commit = (done.commit or "")[:10]
    if done.by is None:
        where = f"commit {commit}"
    else:
        where = f"#{done.by}" + (f" (commit {commit})" if commit else "")
    if done.through is not None:
        where += f", through #{done.through} (the same change, itself done by it)"
    return where


def _pr_title(result: SweepResult, number: int) -> str:
    pull = result.pulls.get(number)
    return f"  {terminal(pull.marked_title)}" if pull and pull.title else ""


def _state(result: SweepResult, number: int) -> str:
    pull = result.pulls.get(number)
    return pull.state if pull else "?"


def _keep_note(result: SweepResult, group: Group) -> str:
    """The kept PR's own answer, where it landed in whole or in part (itself partly done)."""
    found = result.keep_landed(group)
    return f" (itself {says(found)})" if found is not None else ""


def _remaining(found: SweptFinding) -> str:
    """What remains, shortened: the first files and spans, and how many more."""
    items = found.remaining_text(SPANS_SHOWN)
    more = len(items) - FILES_SHOWN
    return "; ".join(items[:FILES_SHOWN]) + (f"; and {more} more file(s)" if more > 0 else "")


def to_text(result: SweepResult) -> str:
    lines = [f"prdup: {summary_line(result)}"]
    if result.already_done:
        lines += ["", "Already done on the target (close them; the landing is named):"]
        for done in result.already_done:
            found = result.answer(done.pr)
            where = landing(found) if found and done.through is None else _done_by(done)
            lines.append(
                f"  #{done.pr} done by {terminal(where)}, score {done.score:.2f}"
                + _pr_title(result, done.pr)
            )
            if found is not None and found.remaining and done.through is None:
                # Its tests or docs the landing lacks: real, and easy to close away unread.
                lines.append(f"    still to do: {terminal(_remaining(found))}")
    if result.superseded:
        lines += [
            "",
            "Superseded (a landing rewrote their lines: close, or rebase what is wanted):",
        ]
        for number, found in result.superseded:
            lines.append(
                f"  #{number} superseded by {terminal(landing(found))}, score {found.score:.2f}"
                + _pr_title(result, number)
            )
            if found.remaining:
                lines.append(f"    still to do: {terminal(_remaining(found))}")
            lines += [f"    {terminal(said)}" for said in found.not_to_apply]
    if result.groups:
        lines += ["", "Duplicates (keep one PR of each group, close the others into it):"]
    for index, group in enumerate(result.groups, 1):
        keep = group.keep
        lines.append(
            f"Group {index}: keep #{keep} [{_state(result, keep)}]"
            f"{terminal(_keep_note(result, group))}{_pr_title(result, keep)}"
        )
        for number in group.members[1:]:
            found = result.answer(number)
            why = f"{says(found)}, score {found.score:.2f}" if found else "?"
            lines.append(f"  #{number} [{_state(result, number)}] {why}{_pr_title(result, number)}")
            if found is not None and found.remaining:
                lines.append(f"    not in {found.named}: {terminal(_remaining(found))}")
    if result.partly_done:
        lines += ["", "Partly done (rebase: only what remains is still to do):"]
        for number, found in result.partly_done:
            share = f", {found.share_done}" if found.share_done is not None else ""
            lines.append(
                f"  #{number} partly done in {terminal(landing(found))}{share}, score "
                f"{found.score:.2f}{_pr_title(result, number)}"
            )
            if found.remaining:
                lines.append(f"    still to do: {terminal(_remaining(found))}")
            lines += [f"    {terminal(said)}" for said in found.not_to_apply]
    related = result.related
    if related:
        shown = ", ".join(
            f"#{number} {says(found)} ({_shares(found)})"
            for number, found in related[:RELATED_LISTED]
        )
        more = (
            f", and {len(related) - RELATED_LISTED} more" if len(related) > RELATED_LISTED else ""
        )
        lines += ["", f"Related work (no claim), {len(related)} PR(s): {terminal(shown)}{more}"]
    return "\n".join(lines)


def _md_pr(number: int | None, found: SweptFinding | None = None) -> str:
    if number is None:
        return f"`{((found.commit if found else None) or '')[:10]}`"
    return f"#{number}"


def to_markdown(result: SweepResult) -> str:
    lines = [f"**prdup sweep**: {summary_line(result)}"]
    if result.already_done:
        lines += ["", "### Already done on the target: can be closed", ""]
        lines += ["| PR | done by | landing | score | still to do | title |"]
        lines += ["|---|---|---|---|---|---|"]
        for done in result.already_done:
            pull = result.pulls.get(done.pr)
            found = result.answer(done.pr)
            commit = f"`{done.commit[:10]}`" if done.commit and done.by is not None else ""
            rest = (
                inline(_remaining(found), 300)
                if found is not None and found.remaining and done.through is None
                else ""
            )
            if done.through is None:
                by = _md_pr(done.by, found)
            else:
                named = _md_pr(done.by) if done.by is not None else commit
                by = f"{named} (through #{done.through})"
            lines.append(
                f"| #{done.pr} | {by} | {commit} | {done.score:.2f} "
                f"| {rest} | {inline(pull.marked_title if pull else '')} |"
            )
    if result.superseded:
        lines += ["", "### Superseded: a landing rewrote their lines; close, or rebase", ""]
        lines += ["| PR | superseded by | landing | rewritten since | title |"]
        lines += ["|---|---|---|---|---|"]
        for number, rewrote in result.superseded:
            pull = result.pulls.get(number)
            commit = f"`{rewrote.commit[:10]}`" if rewrote.commit else ""
            said = "<br>".join(inline(s, 300) for s in rewrote.not_to_apply)
            lines.append(
                f"| #{number} | {_md_pr(rewrote.pr, rewrote)} | {commit} | {said} "
                f"| {inline(pull.marked_title if pull else '')} |"
            )
    if result.groups:
        lines += ["", "### Duplicates: keep one PR of each group, close the others"]
    for index, group in enumerate(result.groups, 1):
        note = inline(_keep_note(result, group), 80)
        lines += ["", f"#### Group {index}: keep #{group.keep}{note}", ""]
        lines += ["| PR | state | verdict | of | score | title |", "|---|---|---|---|---|---|"]
        for number in group.members:
            pull = result.pulls.get(number)
            found = None if number == group.keep else result.answer(number)
            verdict, of, score = (
                (found.verdict, _md_pr(found.pr, found), f"{found.score:.2f}")
                if found
                else ("keep", "", "")
            )
            lines.append(
                f"| #{number} | {inline(pull.state if pull else '?', 20)} | {inline(verdict, 40)} "
                f"| {of} | {score} | {inline(pull.marked_title if pull else '')} |"
            )
    if result.partly_done:
        lines += ["", "### Partly done: rebase, only what remains is still to do", ""]
        lines += ["| PR | done in | landing | done | still to do |", "|---|---|---|---|---|"]
        for number, found in result.partly_done:
            commit = f"`{found.commit[:10]}`" if found.commit else ""
            share = found.share_done or ""
            items = found.remaining_text(SPANS_SHOWN)
            remaining = "<br>".join(inline(item, 200) for item in items[:FILES_SHOWN])
            if len(items) > FILES_SHOWN:
                remaining += f"<br>and {len(items) - FILES_SHOWN} more file(s)"
            remaining = "<br>".join(
                [*([remaining] if remaining else []), *(inline(s, 300) for s in found.not_to_apply)]
            )
            lines.append(
                f"| #{number} | {_md_pr(found.pr, found)} | {commit} | {share} | {remaining} |"
            )
    related = result.related
    if related:
        lines += [
            "",
            f"<details><summary>Related work (no claim): {len(related)} PR(s)</summary>",
            "",
            "| PR | verdict | to | shares | title |",
            "|---|---|---|---|---|",
        ]
        for number, found in related:
            pull = result.pulls.get(number)
            lines.append(
                f"| #{number} | {inline(found.verdict, 40)} | {_md_pr(found.pr, found)} "
                f"| {inline(_shares(found), 120)} | {inline(pull.marked_title if pull else '')} |"
            )
        lines += ["", "</details>"]
    return "\n".join(lines)


@click.command("dashboard")
@repo_option
@db_option
@github_option("The repository whose dashboard issue to keep (default: $GITHUB_REPOSITORY).")
@min_score_option(f"Ignore findings scoring below S [default: {Settings().min_score}].")
@click.option("--jobs", type=click.IntRange(min=1), default=2, show_default=True)
@click.option(
    "--report-url",
    help="Where the full report is (default in Actions: this workflow run's page).",
)
@handles_errors
def dashboard(
    repo_path: Path,
    db_path: Path | None,
    github_repo: str | None,
    min_score: float | None,
    jobs: int,
    report_url: str | None,
) -> None:
    """Sweep, then keep one dashboard issue on GitHub listing the open PRs to close.

    The issue is created once and edited in place; nothing is posted on the PRs. A closed
    dashboard is left alone (reopen it to resume). Exits 0 whatever the sweep found.
    """
    import os

    from commands.support import job_summary, step_outputs
    from index.config import load_settings
    from prdup.dashboard import sync_dashboard
    from prdup.github import GitHubClient
    from prdup.progress import sweep_progress
    from prdup.sweep import sweep as run_sweep

    github_repo = github_repo or os.environ.get("GITHUB_REPOSITORY")
    if not github_repo:
        raise click.UsageError("give --github OWNER/REPO (or set GITHUB_REPOSITORY)")
    settings = load_settings(work_tree(repo_path), min_score=min_score)
    with sweep_progress() as progress:
        result = run_sweep(
            repo_path,
            db_path,
            min_score=settings.min_score,
            jobs=jobs,
            progress=progress,
            settings=settings,
        )
    run = sync_dashboard(
        GitHubClient(github_repo),
        result,
        bot_login=os.environ.get("PRDUP_BOT_LOGIN") or None,
        report_url=report_url or _run_url(),
    )
    where = f"{github_repo}#{run.issue}" if run.issue is not None else github_repo
    line = f"{run.action} dashboard {where}" + (f": {run.note}" if run.note else "")
    click.echo(f"{summary_line(result)}", err=True)
    click.echo(line)
    job_summary(f"**prdup**: {line}")
    step_outputs(dashboard=run.action, issue=str(run.issue) if run.issue is not None else "")


def _run_url() -> str | None:
    """This Actions run's page, where its artifacts (the HTML report) are listed."""
    import os

    server = os.environ.get("GITHUB_SERVER_URL") or "https://github.com"
    repo, run_id = os.environ.get("GITHUB_REPOSITORY"), os.environ.get("GITHUB_RUN_ID")
    if not (repo and run_id and run_id.isdigit()):
        return None
    return f"{server.rstrip('/')}/{repo}/actions/runs/{run_id}"
