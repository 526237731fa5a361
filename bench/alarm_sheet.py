"""One reading sheet per false alarm of an accuracy report, so the hand reading can be redone.

Run by hand, not a test:

    python bench/alarm_sheet.py REPORT.json --bench-dir OUT --mirrors MIRRORS --work WORK
        [--repo owner+name] [--pr N] [--diff-lines 0] [--scope earlier|any]

For every alarm (`alarm_examples` of each repository in REPORT) it prints both PRs' titles, states,
dates, authors, the diff each has in the index (`WORK/<repo>.db`) as a diffstat with its commits,
the reasons prdup gave, and what the two diffs share: changed lines, commits with the same patch
id (a rebased or cherry-picked copy of the other PR's commits) and whether one head contains the
other. `--diff-lines N` also prints the first N lines of each diff. It reads the index and the
mirrors only.

The diff is the index's `base_sha..sha`: `sha` is the PR head, or the merge commit for a PR that
landed by a merge (its `base_sha` is then the merge's first parent, not an ancestor of the head).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

MAX_COMMITS = 200  # a PR range longer than this is a wrong base, not a change to compare by commit


@dataclass(frozen=True)
class Side:
    """One PR as the index and the benchmark see it."""

    number: int
    title: str
    state: str
    created: str
    merged: str
    author: str
    email: str
    login: str
    base: str | None
    end: str | None  # the diff is base..end: the PR head, or the merge commit that landed it
    head: str | None


def git(git_dir: Path, *args: str) -> str:
    """Run git read-only against the mirror; an unreadable range gives an empty answer."""
    done = subprocess.run(
        ["git", "--git-dir", str(git_dir), *args],
        capture_output=True,
        text=True,
        errors="replace",
        check=False,
    )
    return done.stdout


def load_side(db: sqlite3.Connection, prs: dict[int, dict], number: int) -> Side:
    """The index's row for PR `number`, with the login only the benchmark metadata has."""
    row = db.execute(
        "SELECT title, state, created_at, merged_at, author, author_email, base_sha, sha,"
        " head_sha FROM changes WHERE kind = 'pr' AND number = ?",
        (number,),
    ).fetchone()
    meta = prs.get(number, {})
    login = (meta.get("author") or {}).get("login") or ""
    if row is None:
        title = meta.get("title") or ""
        return Side(number, title, "?", "", "", "", "", login, None, None, None)
    title, state, created, merged, author, email, base, end, head = row
    return Side(
        number,
        title or "",
        state,
        (created or "")[:10],
        (merged or "")[:10],
        author or "",
        email or "",
        login,
        base,
        end,
        head,
    )


def load_commit_side(db: sqlite3.Connection, sha: str) -> Side:
    """A direct commit the index holds (an alarm of `check --pr N` may name one)."""
    row = db.execute(
        "SELECT title, state, created_at, merged_at, author, author_email, base_sha, sha,"
        " head_sha FROM changes WHERE sha = ? ORDER BY kind = 'commit' DESC",
        (sha,),
    ).fetchone()
    if row is None:
        return Side(0, sha[:10], "?", "", "", "", "", "", None, None, None)
    title, state, created, merged, author, email, base, end, head = row
    return Side(
        0,
        f"commit {sha[:10]}: {title or ''}",
        state,
        (created or "")[:10],
        (merged or "")[:10],
        author or "",
        email or "",
        "",
        base,
        end,
        head,
    )


def changed_lines(git_dir: Path, side: Side) -> tuple[set[str], set[str]]:
    """Added and removed lines (stripped, non-blank) of the PR's indexed diff."""
    added: set[str] = set()
    removed: set[str] = set()
    if not side.base or not side.end:
        return added, removed
    for line in git(git_dir, "diff", "--no-color", side.base, side.end).splitlines():
        if line.startswith(("+++", "---")):
            continue
        text = line[1:].strip()
        if not text:
            continue
        if line.startswith("+"):
            added.add(text)
        elif line.startswith("-"):
            removed.add(text)
    return added, removed


def commit_patch_ids(git_dir: Path, side: Side) -> dict[str, str]:
    """Patch id -> subject of each commit in the PR's range, to spot copied commits.

    A range of more than MAX_COMMITS commits gives none: it is history, not the PR's work.
    """
    if not side.base or not side.end:
        return {}
    shas = git(git_dir, "rev-list", "--no-merges", f"{side.base}..{side.end}").split()
    if len(shas) > MAX_COMMITS:
        return {}
    ids: dict[str, str] = {}
    for sha in shas:
        patch = git(git_dir, "show", "--no-color", "--format=", sha)
        found = subprocess.run(
            ["git", "patch-id", "--stable"], input=patch, capture_output=True, text=True
        ).stdout.split()
        if found:
            ids[found[0]] = git(git_dir, "log", "-1", "--format=%s", sha).strip()
    return ids


def is_ancestor(git_dir: Path, older: str | None, newer: str | None) -> bool:
    """Whether `newer` contains `older`: a branch built on the other PR, or merged after it."""
    if not older or not newer:
        return False
    done = subprocess.run(
        ["git", "--git-dir", str(git_dir), "merge-base", "--is-ancestor", older, newer],
        capture_output=True,
        check=False,
    )
    return done.returncode == 0


def describe(git_dir: Path, side: Side) -> Iterator[str]:
    """One PR's lines of the sheet: who, when, what state, and its diff in short."""
    state = f"merged {side.merged}" if side.merged else side.state
    who = side.author + (f" <{side.email}>" if side.email else "")
    who += f" (login {side.login})" if side.login and side.login != side.author else ""
    yield f"  #{side.number} [{state}] created {side.created} by {who}"
    yield f"    title: {side.title}"
    if side.base and side.end:
        commits = git(git_dir, "rev-list", "--count", f"{side.base}..{side.end}").strip()
        stat = git(git_dir, "diff", "--shortstat", side.base, side.end).strip()
        yield f"    diff {side.base[:10]}..{side.end[:10]} ({commits} commits): {stat}"
        files = git(git_dir, "diff", "--numstat", side.base, side.end).splitlines()
        for line in files[:12]:
            yield f"      {line}"
        if len(files) > 12:
            yield f"      ... {len(files) - 12} more files"
        log = git(git_dir, "log", "--format=%h %an: %s", f"{side.base}..{side.end}").splitlines()
        for line in log[:8]:
            yield f"      commit {line[:140]}"
        if len(log) > 8:
            yield f"      ... {len(log) - 8} more commits"
    else:
        yield "    no diff in the index"


def sheet(git_dir: Path, alarm: dict, query: Side, earlier: Side, diff_lines: int) -> Iterator[str]:
    """The reading sheet of one alarm."""
    named = f"#{earlier.number}" if earlier.number else earlier.title.split(":")[0]
    yield f"=== #{query.number} -> {named}  {alarm['verdict']} {alarm['score']}"
    for reason in alarm["reasons"]:
        yield f"  reason: {reason[:300]}"
    yield from describe(git_dir, query)
    yield from describe(git_dir, earlier)
    q_added, q_removed = changed_lines(git_dir, query)
    e_added, e_removed = changed_lines(git_dir, earlier)
    yield (
        f"  shared lines: added {len(q_added & e_added)}/{len(q_added)},"
        f" removed {len(q_removed & e_removed)}/{len(q_removed)}"
    )
    shared_commits = commit_patch_ids(git_dir, query).keys() & commit_patch_ids(git_dir, earlier)
    yield f"  commits with the same patch id: {len(shared_commits)}"
    if is_ancestor(git_dir, earlier.head, query.head):
        yield f"  #{earlier.number}'s head is an ancestor of #{query.number}'s head"
    if is_ancestor(git_dir, query.head, earlier.head):
        yield f"  #{query.number}'s head is an ancestor of #{earlier.number}'s head"
    for side in (query, earlier) if diff_lines else ():
        if side.base and side.end:
            text = git(git_dir, "diff", "--no-color", side.base, side.end).splitlines()
            yield f"  --- diff of #{side.number} (first {diff_lines} of {len(text)} lines)"
            yield from (f"  | {line[:200]}" for line in text[:diff_lines])


def main() -> None:
    """Print the sheets of every alarm (or of one repository or PR) of the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("--bench-dir", type=Path, required=True)
    parser.add_argument("--mirrors", type=Path, required=True)
    parser.add_argument("--work", type=Path, required=True, help="folder of <repo>.db indexes")
    parser.add_argument("--repo", help="only this owner+name")
    parser.add_argument("--pr", type=int, help="only the alarm on this PR")
    parser.add_argument("--diff-lines", type=int, default=0)
    parser.add_argument(
        "--scope",
        choices=("earlier", "any"),
        default="earlier",
        help="the alarms naming earlier PRs (default), or those of check --pr N as a user runs it",
    )
    args = parser.parse_args()
    report = json.loads(args.report.read_text())
    for repo in report["repos"]:
        name = repo["repo"]
        if args.repo and name != args.repo:
            continue
        prs = {
            pr["number"]: pr for pr in json.loads((args.bench_dir / name / "prs.json").read_text())
        }
        git_dir = args.mirrors / name / "repo"
        db = sqlite3.connect(f"file:{args.work / name}.db?mode=ro", uri=True)
        print(f"##### {name}: {repo['alarms']} alarms of {repo['sampled']} sampled PRs")
        alarms = repo.get("user_alarm_examples", []) if args.scope == "any" else None
        for alarm in alarms if alarms is not None else repo["alarm_examples"]:
            if args.pr and alarm["pr"] != args.pr:
                continue
            query = load_side(db, prs, alarm["pr"])
            if alarm["by"] is None and alarm.get("commit"):
                earlier = load_commit_side(db, alarm["commit"])
            else:
                earlier = load_side(db, prs, alarm["by"])
            for line in sheet(git_dir, alarm, query, earlier, args.diff_lines):
                print(line)
            print()
        db.close()


if __name__ == "__main__":
    main()
