"""Compile a checkout's modules before a benchmark times its starts.

An installed prdup has its modules compiled (pip writes them at install); a checkout run where
PYTHONDONTWRITEBYTECODE is set compiles every module at every start, which no user pays.
"""

from __future__ import annotations

import compileall
from pathlib import Path

PARTS = ("detector", "index", "prdup", "commands", "cli.py")


def compile_build(root: Path) -> None:
    """Write the bytecode of `root`'s prdup modules (a checkout's top folder)."""
    for part in PARTS:
        target = root / part
        if target.is_dir():
            compileall.compile_dir(target, quiet=1)
        elif target.is_file():
            compileall.compile_file(target, quiet=1)
