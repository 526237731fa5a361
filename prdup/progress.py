"""Progress of a long `prdup index` or `prdup sweep` run on stderr, for a person and for a
CI log alike.

On a terminal, a live `rich` bar per phase (the history of each target, the PR refs, the
finishing steps) or the sweep's refreshed count; otherwise a plain line every few seconds, so a
log shows the run moving. Results never go here: stdout stays for them.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any

from index.git.threads import start_quietly

PLAIN_EVERY = 5.0  # seconds between plain lines


class IndexProgress:
    """A `Progress` callback (`phase, done, total`) that draws a bar or prints plain lines.

    Use as a context manager: leaving it clears the bar. Plain lines (no terminal) come every
    `every` seconds while a phase moves, with its rate and what is left, and also while a long
    step reports nothing (a heartbeat), so a CI log never looks stuck.
    """

    def __init__(
        self,
        stream: IO[str] | None = None,
        live: bool | None = None,
        every: float = PLAIN_EVERY,
        command: str = "index",
    ) -> None:
        self.stream = stream or sys.stderr
        self.command = command
        self.live = self.stream.isatty() if live is None else live
        self.every = every
        self._bar: Any = None
        self._tasks: dict[str, Any] = {}
        self._last_plain = 0.0
        self._state: tuple[str, int, int | None] | None = None  # the last (phase, done, total)
        self._phase_start = (0.0, 0)  # when the phase began, and its count then
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._heartbeat: threading.Thread | None = None

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
        else:
            self._heartbeat = start_quietly(threading.Thread(target=self._beat, daemon=True))
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._heartbeat is not None:
            self._heartbeat.join()
            self._heartbeat = None
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
        with self._lock:
            now = time.monotonic()
            new_phase = self._state is None or self._state[0] != phase
            if new_phase:
                self._phase_start = (now, done)
            self._state = (phase, done, total)
            finished = total is not None and done == total  # a log shows the phase ended
            if new_phase or finished or now - self._last_plain >= self.every:
                self._print(now)

    def begin(self, phase: str) -> None:
        """Start `phase` without a line: the heartbeat says it only if it lasts (a run that
        fails at once shows its one-line error alone)."""
        with self._lock:
            now = time.monotonic()
            self._phase_start = (now, 0)
            self._state = (phase, 0, None)
            self._last_plain = now

    def _beat(self) -> None:
        """Between reports, say every `every` seconds that the phase is still under way."""
        while not self._stop.wait(self.every):
            with self._lock:
                now = time.monotonic()
                if self._state is not None and now - self._last_plain >= self.every:
                    self._print(now)

    def _print(self, now: float) -> None:
        assert self._state is not None
        phase, done, total = self._state
        count = f"{done}/{total}" if total is not None else (str(done) if done else "")
        line = f"prdup {self.command}: {phase} {count}".rstrip()
        line += _pace(now - self._phase_start[0], done - self._phase_start[1], done, total)
        print(line, file=self.stream, flush=True)
        self._last_plain = now


SweepReport = Callable[[int, int], None]


@contextmanager
def sweep_progress(
    stream: IO[str] | None = None, live: bool | None = None, every: float = PLAIN_EVERY
) -> Iterator[SweepReport]:
    """The sweep's `(done, total)` callback: `swept 120/400 PRs` refreshed on a terminal;
    otherwise plain lines every few seconds, also while the index is read before the first PR
    is checked (it can take minutes), so a sweep in CI or in the background is seen moving."""
    stream = stream or sys.stderr
    if stream.isatty() if live is None else live:

        def refresh(done: int, total: int) -> None:
            end = "\n" if done == total else ""
            print(f"\r\033[Kswept {done}/{total} PRs", end=end, file=stream, flush=True)

        yield refresh
        return
    with IndexProgress(stream=stream, live=False, every=every, command="sweep") as plain:
        plain.begin("reading the index")

        def report(done: int, total: int) -> None:
            plain("checking open PRs", done, total)

        yield report


def _pace(elapsed: float, moved: int, done: int, total: int | None) -> str:
    """` (35/s, about 20 s left)`, or how long the phase has run while nothing is counted."""
    if elapsed < 1:
        return ""
    if moved <= 0:
        return f" ({elapsed:.0f} s in this step)"
    rate = moved / elapsed
    shown = f"{rate:.0f}/s" if rate >= 1 else f"{rate * 60:.0f}/min"
    if total is None or total <= done:
        return f" ({shown})"
    return f" ({shown}, about {_duration((total - done) / rate)} left)"


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
