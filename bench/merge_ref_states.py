"""What GitHub's test merges (`refs/pull/N/merge`) say of PR states in a mirror, per repository.

Run by hand, not a test. For each clone: the PRs whose head no branch holds; those with a test
merge; those whose test merge is onto the default branch's tip; and of those, the ones made
after that tip was committed, which `prdup index` calls open without GitHub's metadata (with
the default branch as its only target). `--states FILE` (lines `NUMBER open|closed`, states
read on GitHub) adds how many of each the rule calls open.

    python bench/merge_ref_states.py /path/to/mirror ... [--states ripgrep-states.txt]

Prints one JSON object per clone.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path


def git(clone: Path, *args: str, stdin: str | None = None) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(clone), *args],
        input=stdin,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def measure(clone: Path, states: dict[int, str]) -> dict[str, object]:
    tip = git(clone, "rev-parse", "HEAD").strip()
    tip_time = int(git(clone, "log", "-1", "--format=%ct", tip))
    on_branches = set(git(clone, "rev-list", "--branches").split())
    heads: dict[int, str] = {}
    merges: dict[int, str] = {}
    for line in git(clone, "for-each-ref", "--format=%(refname) %(objectname)", "refs/pull/").split(
        "\n"
    ):
        if not line:
            continue
        ref, sha = line.split()
        _, _, number, kind = ref.split("/")
        if kind == "head":
            heads[int(number)] = sha
        elif kind == "merge":
            merges[int(number)] = sha
    made: dict[str, tuple[int, str]] = {}
    listed = "".join(f"{sha}\n" for sha in merges.values())
    for line in git(
        clone, "log", "--no-walk=unsorted", "--stdin", "--format=%H %ct %P", stdin=listed
    ).split("\n"):
        if line:
            sha, seconds, *parents = line.split()
            made[sha] = (int(seconds), parents[0] if parents else "")
    unmerged = [n for n, head in heads.items() if head not in on_branches]
    tested = [n for n in unmerged if n in merges and merges[n] in made]
    on_tip = [n for n in tested if made[merges[n]][1] == tip]
    called_open = {n for n in on_tip if made[merges[n]][0] >= tip_time}
    found: dict[str, object] = {
        "clone": str(clone),
        "unmerged": len(unmerged),
        "with_test_merge": len(tested),
        "onto_tip": len(on_tip),
        "called_open": len(called_open),
    }
    if states:
        known = {n: s for n, s in states.items() if n in set(unmerged)}
        for state in ("open", "closed"):
            sample = [n for n, s in known.items() if s == state]
            found[f"sampled_{state}"] = len(sample)
            found[f"sampled_{state}_called_open"] = sorted(n for n in sample if n in called_open)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("clones", nargs="+", type=Path)
    parser.add_argument("--states", type=Path, help="lines 'NUMBER open|closed'")
    args = parser.parse_args()
    states: dict[int, str] = {}
    if args.states:
        for line in args.states.read_text().splitlines():
            if line.strip():
                number, state = line.split()
                states[int(number)] = state
    for clone in args.clones:
        print(json.dumps(measure(clone, states)))


if __name__ == "__main__":
    main()
