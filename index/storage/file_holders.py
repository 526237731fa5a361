"""Which other processes have a file open, as far as the system tells: to say who holds the
index's lock instead of guessing.

Linux's `/proc/PID/fd` is read; elsewhere, or for another user's processes, nothing is known
and the caller says so.
"""

from __future__ import annotations

import os
from pathlib import Path

_PROC = Path("/proc")
_INTERPRETERS = ("python", "pypy", "env")
_SHOWN = 60  # characters of a command line kept in a message


def processes_holding(path: Path) -> list[str]:
    """`pid 1234 (prdup index)` for each other process with `path` (or its SQLite `-wal` file)
    open, in pid order."""
    if not _PROC.is_dir():
        return []
    resolved = str(path.resolve())
    wanted = {resolved, f"{resolved}-wal"}
    found: list[tuple[int, str]] = []
    for entry in _PROC.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        if _has_open(entry, wanted):
            found.append((int(entry.name), _command(entry)))
    return [f"pid {pid} ({command})" if command else f"pid {pid}" for pid, command in sorted(found)]


def _has_open(process: Path, wanted: set[str]) -> bool:
    try:
        descriptors = os.listdir(process / "fd")
    except OSError:  # gone, or another user's
        return False
    for descriptor in descriptors:
        try:
            if os.readlink(process / "fd" / descriptor) in wanted:
                return True
        except OSError:
            continue
    return False


def _command(process: Path) -> str:
    """The program and its first arguments: `prdup index`, `sqlite3 prdup.db`, `python3 -c`."""
    try:
        raw = (process / "cmdline").read_bytes()
    except OSError:
        return ""
    args = [a.decode("utf-8", "replace") for a in raw.split(b"\0") if a]
    if not args:
        return ""
    program = Path(args[0]).name
    if program.startswith(_INTERPRETERS) and len(args) > 1:
        if args[1] == "-m":  # python -m module args
            args = args[2:]
            program = args[0] if args else program
        elif args[1].startswith("-"):  # python -c CODE: the code says little in one line
            args = [args[1]]
        else:  # python path/to/script args
            args = args[1:]
            program = Path(args[0]).name
        if args and not args[0].startswith("-"):
            args = args[1:]
    else:
        args = args[1:]
    text = " ".join([program, *args[:2]])
    text = "".join(c if c.isprintable() else "?" for c in text)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."
