"""Make a path read-only for this process, root included.

`chmod` is enough for a user; root ignores it, so there the immutable attribute is set
(`chattr +i`, which binds root too, on ext4, xfs and btrfs). Where neither works the test skips.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


def _set_immutable(path: Path, on: bool) -> None:
    flag = "+i" if on else "-i"
    done = subprocess.run(["chattr", flag, str(path)], capture_output=True, text=True)
    if done.returncode != 0:
        if on:
            pytest.skip(f"cannot make {path} read-only here: {done.stderr.strip()}")
        raise RuntimeError(done.stderr)


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[None]:
    """`path` (a folder or a file) read-only for this process, root included."""
    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(mode & ~0o222)
        try:
            yield
        finally:
            path.chmod(mode)
        return
    if shutil.which("chattr") is None:
        pytest.skip("no chattr: cannot make a path read-only for root")
    _set_immutable(path, True)
    try:
        yield
    finally:
        _set_immutable(path, False)
