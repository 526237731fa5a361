"""What an index knows about which PRs landed, against an outside answer.

Run by hand, not a test. Two questions, each on an index `prdup index` made of the same clone:

* `--prs-json FILE` (a `gh pr list --state all --json number,state,mergedAt,headRefOid,...`
  export, or the benchmark's `prs.json`): of the PRs GitHub calls merged, the share the index
  knows as merged with a landing commit. A merged PR whose ref is not in the clone, or whose
  head is missing from it, is counted apart (nothing git holds can name its landing). So are,
  beside the share (which counts them), the merged PRs whose head no branch of the clone
  holds: landed rewritten (rebased, squashed, amended), their own commits are on no branch,
  and only copies, or a message that names them, can tell where they landed. `--misses FILE`
  writes every merged PR the index knows no landing for, with what the index holds of it.
* `--rebase-truth`: git's own answer for PRs landed by rebase. Every unmerged-looking PR ref
  with two or more commits of its own, none of them on the target, every one of whose patches
  is on the target (`git cherry TARGET HEAD BASE` marks each `-`): the share the index knows
  as merged with a landing. One git call per PR, fine for a benchmark. And the PRs landed in
  part: some of those commits marked `-`, some `+`; against them, the PRs the index records
  landed in part (`part_landings`), and those it records that git does not mark so.

    python bench/landing_share.py /path/to/clone --db index.db --prs-json prs.json
    python bench/landing_share.py /path/to/clone --db index.db --rebase-truth --target main

Prints one JSON object (`--out` also writes it).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import sys
from pathlib import Path


def git(clone: Path, *args: str) -> str:
    return subprocess.run(
        ["git", f"--git-dir={clone}", *args], capture_output=True, text=True, check=False
    ).stdout


def indexed_prs(db: Path) -> dict[int, tuple[str, str | None, str | None]]:
    """number -> (state, landing commit, source) as the index holds them."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = conn.execute(
        "SELECT number, state, merge_commit, source FROM changes WHERE kind = 'pr'"
    ).fetchall()
    return {number: (state, landing, source) for number, state, landing, source in rows}


def pull_heads(clone: Path) -> dict[int, str]:
    heads: dict[int, str] = {}
    out = git(clone, "for-each-ref", "--format=%(refname) %(objectname)", "refs/pull")
    for line in out.splitlines():
        ref, sha = line.split()
        parts = ref.split("/")
        if len(parts) == 4 and parts[3] == "head" and parts[2].isdigit():
            heads[int(parts[2])] = sha
    return heads


def missing_objects(clone: Path, shas: list[str]) -> set[str]:
    if not shas:
        return set()
    out = subprocess.run(
        ["git", f"--git-dir={clone}", "cat-file", "--batch-check"],
        input="\n".join(shas) + "\n",
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    return {line.split()[0] for line in out.splitlines() if line.endswith(" missing")}


def on_branches(clone: Path, shas: list[str]) -> set[str]:
    """The commits among `shas` that some branch of the clone holds (one `git rev-list`)."""
    held = set(git(clone, "rev-list", "--branches").split())
    return {sha for sha in shas if sha in held}


def github_merged_share(
    clone: Path, db: Path, prs_json: Path, misses: Path | None = None
) -> dict[str, object]:
    merged = [pr["number"] for pr in json.loads(prs_json.read_text()) if pr.get("mergedAt")]
    index = indexed_prs(db)
    heads = pull_heads(clone)
    gone = missing_objects(clone, [heads[n] for n in merged if n in heads])
    no_ref = [n for n in merged if n not in heads or heads[n] in gone]
    readable = [n for n in merged if n not in no_ref]
    known = [n for n in readable if index.get(n, ("", None, None))[0] == "merged"]
    landed = [n for n in known if index[n][1]]
    sources: dict[str, int] = {}
    for n in landed:
        sources[index[n][2] or "?"] = sources.get(index[n][2] or "?", 0) + 1
    held = on_branches(clone, [heads[n] for n in readable])
    off_branches = [n for n in readable if heads[n] not in held]
    landed_set = set(landed)
    if misses is not None:
        missed = [
            {
                "number": n,
                "index_state": index.get(n, (None, None, None))[0],
                "index_source": index.get(n, (None, None, None))[2],
                "head": heads[n],
                "head_on_a_branch": heads[n] in held,
            }
            for n in readable
            if n not in landed_set
        ]
        misses.write_text(json.dumps(missed, indent=1) + "\n")
    return {
        "github_merged": len(merged),
        "no_ref_in_clone": len(no_ref),
        "readable": len(readable),
        "known_merged": len(known),
        "known_merged_with_landing": len(landed),
        "share_with_landing": round(len(landed) / len(readable), 4) if readable else None,
        "landing_sources": dict(sorted(sources.items())),
        "head_on_no_branch": len(off_branches),
        "head_on_no_branch_with_landing": sum(n in landed_set for n in off_branches),
        "missed": len(readable) - len(landed),
        "missed_sample": [n for n in readable if n not in landed_set][:40],
    }


def rebase_truth(
    clone: Path, db: Path, target: str, truth_from: Path | None = None
) -> dict[str, object]:
    index = indexed_prs(db)
    in_part = indexed_in_part(db)
    if truth_from is not None:  # git's answer saved by an earlier run on the same clone
        saved = json.loads(truth_from.read_text())["rebase"]
        landed_by_rebase = saved["landed_by_rebase"]
        partly = {int(n): marks for n, marks in saved.get("partly_by_git", {}).items()}
        return _rebase_share(target, landed_by_rebase, index) | _part_share(partly, in_part)
    tip = git(clone, "rev-parse", "--verify", f"{target}^{{commit}}").strip()
    landed_by_rebase: list[int] = []
    partly: dict[int, list[int]] = {}  # PR -> [commits marked `-`, commits]
    for number, head in sorted(pull_heads(clone).items()):
        base = git(clone, "merge-base", tip, head).strip()
        if not base or base == head:
            continue
        own = git(clone, "rev-list", "--no-merges", f"{base}..{head}").split()
        if len(own) < 2 or len(own) > 200:
            continue
        marks = git(clone, "cherry", tip, head, base).split("\n")
        marks = [line for line in marks if line]
        if not marks or len(marks) != len(own):
            continue
        landed = sum(line.startswith("- ") for line in marks)
        if landed == len(marks):
            landed_by_rebase.append(number)
        elif landed:
            partly[number] = [landed, len(marks)]
    return _rebase_share(target, landed_by_rebase, index) | _part_share(partly, in_part)


def indexed_in_part(db: Path) -> dict[int, list[int]]:
    """PR -> [its commits recorded landed, its commits recorded], for the PRs the index
    records landed in part (none for an index without the table)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            "SELECT c.number, count(p.copy), count(*) FROM part_landings p "
            "JOIN changes c ON c.id = p.change_id GROUP BY c.number"
        ).fetchall()
    except sqlite3.OperationalError:
        return {}
    return {number: [landed, total] for number, landed, total in rows}


def _part_share(partly: dict[int, list[int]], in_part: dict[int, list[int]]) -> dict[str, object]:
    known = [n for n in partly if n in in_part]
    return {
        "partly_landed_by_git": len(partly),
        "partly_known_to_index": len(known),
        "partly_missed": sorted(n for n in partly if n not in in_part),
        "index_in_part": len(in_part),
        "index_in_part_not_by_git": sorted(n for n in in_part if n not in partly),
        "index_in_part_counts": {str(n): in_part[n] for n in sorted(in_part)},
        "partly_by_git": {str(n): partly[n] for n in sorted(partly)},
    }


def _rebase_share(
    target: str, landed_by_rebase: list[int], index: dict[int, tuple[str, str | None, str | None]]
) -> dict[str, object]:
    known = [n for n in landed_by_rebase if index.get(n, ("", None, None))[0] == "merged"]
    with_landing = [n for n in known if index[n][1]]
    return {
        "target": target,
        "multi_commit_landed_by_rebase": len(landed_by_rebase),
        "known_merged": len(known),
        "known_merged_with_landing": len(with_landing),
        "share_with_landing": (
            round(len(with_landing) / len(landed_by_rebase), 4) if landed_by_rebase else None
        ),
        "missed": [n for n in landed_by_rebase if n not in with_landing],
        "landed_by_rebase": landed_by_rebase,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("clone", type=Path, help="the git dir prdup indexed")
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--prs-json", type=Path)
    parser.add_argument("--rebase-truth", action="store_true")
    parser.add_argument("--target", default="HEAD")
    parser.add_argument(
        "--truth-from", type=Path, help="reuse git's answer saved in an earlier --out file"
    )
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--misses", type=Path, help="write every merged PR with no landing known (--prs-json)"
    )
    args = parser.parse_args()
    result: dict[str, object] = {"clone": args.clone.name}
    if args.prs_json:
        result["github_merged"] = github_merged_share(
            args.clone, args.db, args.prs_json, args.misses
        )
    if args.rebase_truth:
        result["rebase"] = rebase_truth(args.clone, args.db, args.target, args.truth_from)
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
