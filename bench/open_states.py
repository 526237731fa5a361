"""How well what a clone holds predicts that a PR nobody can see landed is still open.

Run by hand, not a test. Git alone cannot tell an open PR from a closed one; two things a
mirror holds may: GitHub's test merge (`refs/pull/N/merge`, which GitHub renews only while a PR
is open, and on today's GitHub removes when it closes) and the age of the PR's head commit.
Ages are counted back from the clone's "now": the newest commit on a branch or PR head.

Truth, where there is some: the benchmark's `prs.json` (`--bench OUT/REPO`) lists every PR of
the collection window (to 2017-12-13) as MERGED (landed) or CLOSED (no landing evidence);
GitHub's real states are not offline, but nearly every PR of 2017 or earlier is closed by
the mirror's date, so each "open" call on a benchmark PR that did not land is a false open
(precision for open there is 0 whenever a predictor fires; the share called open is printed).
Open PRs have no offline truth; the proxy is the PRs whose test merge GitHub made in the last
30 days (only an open PR gets one): of them, the share each predictor calls open (recall
against PRs open a month ago). Beside them, per predictor, how many of the clone's PRs that no
branch holds it calls open.

    python bench/open_states.py "$MIRROR/REPO/repo" --bench "$OUT/REPO" [...]
    python bench/open_states.py /path/to/clone.git        # counts only

Prints one JSON object per clone.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.merge_ref_states import git  # noqa: E402  (one way to ask a clone's git)

DAY = 86_400
RECENT_TEST_MERGE = 30 * DAY  # the proxy for "open": GitHub test-merged it in the last 30 days


@dataclass(frozen=True)
class Pull:
    """One PR ref of the clone, as the predictors see it."""

    number: int
    head_age: float  # seconds before the clone's now
    test_merge_age: float | None  # None: no refs/pull/N/merge
    onto_tip: bool  # the test merge's base is the default branch's tip


def read_pulls(clone: Path) -> tuple[list[Pull], set[int], float]:
    """Every PR ref; the numbers of those whose head a branch holds (landed as it is); the age
    of the default branch's last commit."""
    heads: dict[int, str] = {}
    merges: dict[int, str] = {}
    for line in git(clone, "for-each-ref", "--format=%(refname) %(objectname)", "refs/pull/").split(
        "\n"
    ):
        if line:
            ref, sha = line.split()
            _, _, number, kind = ref.split("/")
            {"head": heads, "merge": merges}.get(kind, {})[int(number)] = sha
    dates: dict[str, tuple[int, list[str]]] = {}
    wanted = "".join(f"{sha}\n" for sha in {*heads.values(), *merges.values()})
    for line in git(
        clone, "log", "--no-walk=unsorted", "--stdin", "--format=%H %ct %P", stdin=wanted
    ).split("\n"):
        if line:
            sha, seconds, *parents = line.split()
            dates[sha] = (int(seconds), parents)
    newest_branch = int(git(clone, "log", "-1", "--branches", "--format=%ct").strip() or 0)
    now = max([newest_branch, *(dates[sha][0] for sha in heads.values() if sha in dates)])
    tip = git(clone, "rev-parse", "HEAD").strip()
    tip_age = float(now - int(git(clone, "log", "-1", "--format=%ct", tip)))
    pulls = []
    for number, head in heads.items():
        if head not in dates:
            continue
        merge = dates.get(merges.get(number, ""))
        pulls.append(
            Pull(
                number,
                now - dates[head][0],
                None if merge is None else now - merge[0],
                merge is not None and merge[1][:1] == [tip],
            )
        )
    on_branches = set(git(clone, "rev-list", "--branches").split())
    landed = {number for number, head in heads.items() if head in on_branches}
    return pulls, landed, tip_age


Predictor = Callable[[Pull], bool]


def predictors(tip_age: float) -> dict[str, Predictor]:
    """Each rule for "open" measured. `tip_age`: the default branch's last commit's age."""

    def merge_ref(p: Pull) -> bool:
        return p.test_merge_age is not None

    def test_merge_within(days: int) -> Predictor:
        return lambda p: p.test_merge_age is not None and p.test_merge_age <= days * DAY

    def head_within(days: int) -> Predictor:
        return lambda p: p.head_age <= days * DAY

    def both_within(days: int) -> Predictor:
        return lambda p: merge_ref(p) and p.head_age <= days * DAY

    return {
        "test merge onto tip, made after it (0.x rule)": lambda p: (
            p.onto_tip and p.test_merge_age is not None and p.test_merge_age <= tip_age
        ),
        "merge ref": merge_ref,
        **{f"test merge made <= {d}d": test_merge_within(d) for d in (90, 365, 730)},
        **{f"head <= {d}d": head_within(d) for d in (90, 365, 730)},
        **{f"merge ref and head <= {d}d": both_within(d) for d in (365, 730)},
    }


def measure(clone: Path, bench: Path | None) -> dict[str, object]:
    pulls, landed, tip_age = read_pulls(clone)
    unlanded = [p for p in pulls if p.number not in landed]
    recent = [
        p
        for p in unlanded
        if p.test_merge_age is not None and p.test_merge_age <= RECENT_TEST_MERGE
    ]
    closed: list[Pull] = []
    if bench is not None:
        states = {pr["number"]: pr["state"] for pr in json.loads((bench / "prs.json").read_text())}
        closed = [p for p in unlanded if states.get(p.number) == "CLOSED"]
    found: dict[str, object] = {
        "clone": clone.name if clone.name != "repo" else clone.parent.name,
        "pr_refs": len(pulls),
        "unlanded": len(unlanded),
        "with_merge_ref": sum(p.test_merge_age is not None for p in unlanded),
        "proxy_open (test merge <= 30d)": len(recent),
        "bench_closed": len(closed),
    }
    rows = {}
    for name, rule in predictors(tip_age).items():
        row: dict[str, object] = {"called_open": sum(map(rule, unlanded))}
        if closed:
            wrong = sum(map(rule, closed))
            row["bench_closed_called_open"] = wrong
            row["bench_precision"] = 0.0 if wrong else None
        if recent:
            row["proxy_recall"] = round(sum(map(rule, recent)) / len(recent), 3)
        rows[name] = row
    found["predictors"] = rows
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("clones", nargs="+", type=Path)
    parser.add_argument(
        "--bench",
        type=Path,
        action="append",
        default=[],
        help="the benchmark folder (prs.json) of each clone, in order",
    )
    args = parser.parse_args()
    benches: list[Path | None] = [*args.bench, *[None] * len(args.clones)]
    for clone, bench in zip(args.clones, benches, strict=False):
        print(json.dumps(measure(clone, bench)))


if __name__ == "__main__":
    main()
