"""Progress of a long `prdup index` run on stderr, for a person and for a CI log alike.

On a terminal, a live `rich` bar per phase (the history of each target, the PR refs, the
finishing steps); otherwise a plain line every few seconds, so a log shows the run moving.
Results never go here: stdout stays for them.
"""

from __future__ import annotations

import sys
import time
from typing import IO, Any

PLAIN_EVERY = 5.0  # seconds between plain lines


class IndexProgress:
    """A `Progress` callback (`phase, done, total`) that draws a bar or prints plain lines.

    Use as a context manager: leaving it clears the bar.
    """

    def __init__(self, stream: IO[str] | None = None, live: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty() if live is None else live
        self._bar: Any = None
        self._tasks: dict[str, Any] = {}
        self._last_plain = 0.0
        self._last_phase = ""

    def __enter__(self) -> IndexProgress:
        if self.live:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            self._bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=Console(file=self.stream),
                transient=True,
            )
            self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def __call__(self, phase: str, done: int, total: int | None) -> None:
        if self._bar is not None:
            task = self._tasks.get(phase)
            if task is None:
                task = self._tasks[phase] = self._bar.add_task(phase, total=total)
            self._bar.update(task, completed=done, total=total)
            return
        now = time.monotonic()
        if phase == self._last_phase and now - self._last_plain < PLAIN_EVERY:
            return
        self._last_plain, self._last_phase = now, phase
        count = f"{done}/{total}" if total is not None else (str(done) if done else "")
        print(f"prdup index: {phase} {count}".rstrip(), file=self.stream, flush=True)
