"""A repository with a long history, written in one `git fast-import` stream: big enough that
`prdup index` and `prdup sweep` are still running when a test stops them, and built in about
a second (the commit-by-commit builder would take minutes for as many commits).

Every merged PR changes one function's line in one of the modules and lands squashed
(`Subject (#N)`); every open PR makes again, from the commit before it landed, the change of
an earlier merged PR, so a sweep has real work: a candidate to find and a replay to prove.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

MODULES = 40
FUNCTIONS = 30
_EPOCH = 1_700_000_000
_WHO = b"Bulk Author <bulk@example.com>"


def _module(lines: list[str]) -> bytes:
    return "".join(lines).encode()


def _initial(module: int) -> list[str]:
    lines = []
    for function in range(FUNCTIONS):
        lines += [f"def m{module}_f{function}(x):\n", f"    return x + {function}\n", "\n"]
    return lines


class _Stream:
    def __init__(self) -> None:
        self.data = bytearray()
        self.tick = 0

    def commit(
        self, ref: str, mark: int, parent: int | None, message: str, files: dict[str, bytes]
    ) -> None:
        self.tick += 1
        stamp = f" {_EPOCH + self.tick * 60} +0000\n".encode()
        text = message.encode()
        self.data += f"commit {ref}\nmark :{mark}\n".encode()
        self.data += b"author " + _WHO + stamp + b"committer " + _WHO + stamp
        self.data += f"data {len(text)}\n".encode() + text + b"\n"
        if parent is not None:
            self.data += f"from :{parent}\n".encode()
        for path, content in files.items():
            self.data += f"M 100644 inline {path}\ndata {len(content)}\n".encode()
            self.data += content + b"\n"


def build(path: Path, merged: int, open_prs: int) -> None:
    """`main` with `merged` squash-merged PRs after an initial commit, and `open_prs` open
    PRs under `refs/pull/N/head` (numbered after the merged ones)."""
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    stream = _Stream()
    modules = {k: _initial(k) for k in range(MODULES)}
    stream.commit(
        "refs/heads/main",
        1,
        None,
        "Start",
        {f"src/m{k}.py": _module(lines) for k, lines in modules.items()},
    )
    for number in range(1, merged + 1):
        module = number % MODULES
        modules[module][_line(number)] = _text(number)
        stream.commit(
            "refs/heads/main",
            number + 1,
            number,
            f"Compute m{module} for case {number} (#{number})",
            {f"src/m{module}.py": _module(modules[module])},
        )
    for index in range(open_prs):
        number = merged + 1 + index
        again = (index * 7) % merged + 1  # the merged PR whose change this one makes again
        module = again % MODULES
        lines = _at(again, module)
        lines[_line(again)] = _text(again)
        stream.commit(
            f"refs/pull/{number}/head",
            number + 1,
            again,  # the commit before PR `again` landed
            f"Compute m{module} for case {again} again",
            {f"src/m{module}.py": _module(lines)},
        )
    subprocess.run(
        ["git", "-C", str(path), "fast-import", "--quiet"], input=bytes(stream.data), check=True
    )


def _line(number: int) -> int:
    """The line of its module that merged PR `number` changes: one function's return."""
    return (number // MODULES) % FUNCTIONS * 3 + 1


def _text(number: int) -> str:
    return f"    return x * {number} + {(number // MODULES) % FUNCTIONS}\n"


def _at(mark: int, module: int) -> list[str]:
    """The module's lines at commit `mark`: after merged PRs 1 to mark - 1."""
    lines = _initial(module)
    for number in range(module or MODULES, mark, MODULES):
        lines[_line(number)] = _text(number)
    return lines
