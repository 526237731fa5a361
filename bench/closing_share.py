"""How much of a missed PR's change the commits that name it hold: what "landed by a commit
that closes it" can still find.

Run by hand, not a test. Takes the `--misses` file of `bench/landing_share.py` (the merged PRs
an index knows no landing for). For each PR, every commit on the clone's branches whose message
names it (`#N`), and the share of the PR's changed lines that the best of them holds: lines
compared by side and by their text with surrounding whitespace stripped, in any file, so the
share is an upper bound of what prdup's rule (every line, each in its file) can find.

    python bench/landing_share.py CLONE --db DB --prs-json prs.json --misses misses.json
    python bench/closing_share.py CLONE misses.json [--out shares.json]

Prints how many missed PRs fall in each band of that share, and of those whose lines a commit
holds all of, how many such commits are on a branch the index follows (`--target`, repeatable;
default the clone's HEAD branch).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from collections import Counter, defaultdict
from pathlib import Path


def git(clone: Path, *args: str) -> str:
    return subprocess.run(
        ["git", f"--git-dir={clone}", *args], capture_output=True, text=True, errors="replace"
    ).stdout


def changed_lines(diff: str) -> set[tuple[str, str]]:
    """A diff's added and removed lines as (side, stripped text), blank lines left out."""
    lines = set()
    for line in diff.splitlines():
        if line.startswith(("+++", "---")):
            continue
        if line[:1] in "+-" and line[1:].strip():
            lines.add((line[0], line[1:].strip()))
    return lines


def commits_naming(clone: Path) -> dict[int, list[str]]:
    """Each number that some commit message on the clone's branches names, with those commits."""
    branches = git(clone, "for-each-ref", "--format=%(refname:short)", "refs/heads").split()
    named: dict[int, list[str]] = defaultdict(list)
    for entry in git(clone, "log", "--format=%x01%H%x00%B", *branches).split("\x01")[1:]:
        sha, _, body = entry.partition("\x00")
        for number in set(re.findall(r"#(\d+)\b", body)):
            named[int(number)].append(sha)
    return named


def band(share: float) -> str:
    if share >= 1:
        return "all"
    if share >= 0.9:
        return "90% to 99%"
    return "half to 90%" if share >= 0.5 else "under half"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("clone", type=Path)
    parser.add_argument("misses", type=Path)
    parser.add_argument("--target", action="append", default=[])
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    targets = args.target or [git(args.clone, "symbolic-ref", "--short", "HEAD").strip()]
    named = commits_naming(args.clone)
    rows = []
    for miss in json.loads(args.misses.read_text()):
        number, head = miss["number"], miss["head"]
        base = git(args.clone, "merge-base", targets[0], head).strip()
        mine = changed_lines(git(args.clone, "diff", base, head)) if base else set()
        best, best_sha = 0.0, None
        for sha in named.get(number, []):
            theirs = changed_lines(git(args.clone, "show", "--format=", sha))
            share = len(mine & theirs) / len(mine) if mine else 0.0
            if best_sha is None or share > best:
                best, best_sha = share, sha
        rows.append({"number": number, "commit": best_sha, "share": round(best, 3)})
    bands = Counter("no commit names it" if r["commit"] is None else band(r["share"]) for r in rows)
    on_target = 0
    for row in rows:
        if row["commit"] is not None and row["share"] >= 1:
            row["on_target"] = any(
                subprocess.run(
                    ["git", f"--git-dir={args.clone}", "merge-base", "--is-ancestor"]
                    + [row["commit"], target],
                    capture_output=True,
                ).returncode
                == 0
                for target in targets
            )
            on_target += row["on_target"]
    summary = {"missed": len(rows), "bands": dict(bands), "all_held_on_a_target": on_target}
    print(json.dumps(summary, indent=1))
    if args.out:
        args.out.write_text(json.dumps({"summary": summary, "prs": rows}, indent=1))


if __name__ == "__main__":
    main()
