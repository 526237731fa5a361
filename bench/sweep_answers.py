"""Compare two `prdup sweep --format json` outputs: each PR's answer, and every class.

Run by hand (not a test), e.g. on the JSON `bench/sweep_speed.py --save` wrote with two builds:

    python bench/sweep_answers.py BEFORE.json AFTER.json

Prints how many PRs each answers and every difference: a PR answered in one only, or
answered differently (the PR or commit it names, the verdict, the score); then, class by
class (already done, groups, partly done, related), the entries that differ. Exits 1 on any
difference.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def answers(data: dict[str, Any]) -> dict[int, tuple]:
    return {
        item["pr"]: (
            item["class"],
            item["finding"]["pr"],
            item["finding"]["commit"],
            item["finding"]["verdict"],
            item["finding"]["score"],
        )
        for item in data["prs"]
    }


def keyed(data: dict[str, Any], name: str) -> dict[str, str]:
    """A class's entries by their PR (groups: by the kept PR), each as canonical JSON."""
    key = "keep" if name == "groups" else "pr"
    return {str(item[key]): json.dumps(item, sort_keys=True) for item in data[name]}


def main() -> None:
    before, after = (json.loads(Path(path).read_text()) for path in sys.argv[1:3])
    old, new = answers(before), answers(after)
    print(f"answers: {len(old)} before, {len(new)} after")
    differ = 0
    for number in sorted(old.keys() | new.keys()):
        if old.get(number) != new.get(number):
            differ += 1
            print(f"  #{number}: {old.get(number)} -> {new.get(number)}")
    for name in ("already_done", "groups", "partly_done", "related"):
        one, two = keyed(before, name), keyed(after, name)
        changed = sorted(k for k in one.keys() | two.keys() if one.get(k) != two.get(k))
        differ += len(changed)
        print(f"{name}: {len(one)} before, {len(two)} after, {len(changed)} differ")
        for k in changed[:10]:
            print(f"  {k}:\n    before {one.get(k)}\n    after  {two.get(k)}")
    print("identical" if not differ else f"{differ} differences")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
