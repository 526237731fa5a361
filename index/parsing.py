"""Diffs into their stored form and code words, in this process or in a worker beside it.

Parsing a diff and counting its code words are two fifths of a large first index's CPU, and
need nothing but the diff's text; reading git's output and writing rows need the rest. A
run with many changes to read hands the parsing to one worker process, so the two halves use
both cores. Results come back in the order they were asked for, so the index written is the
same row for row as one parsed in this process (`tests/test_parallel_parse.py`).
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from detector.model import NotADiff
from index.code_model import code_word_counter
from index.config import Settings
from index.errors import WorkerDied
from index.processes import die_with_parent
from index.stored_diff import StoredChange, parse_stored

# A change's stored form and its most used code words; None when the text is not a diff.
Parsed = tuple[StoredChange | None, list[tuple[str, int]]]
Counter = Callable[[dict[int, str]], list[tuple[str, int]]]

LARGE_DIFF = 32 << 20  # characters: a diff this large is parsed here, not copied to the worker


def parse_and_count(diff: str, settings: Settings, count: Counter) -> Parsed:
    try:
        change = parse_stored(diff, settings)
    except NotADiff:
        return None, []
    return change, count(change.texts)


class Parsing:
    """A diff handed to the parser; `get` gives its result, waiting for the worker's."""

    __slots__ = ("_value", "_future")

    def __init__(self, value: Parsed | None = None, future: Future[Parsed] | None = None) -> None:
        self._value = value
        self._future = future

    def get(self) -> Parsed:
        if self._future is None:
            assert self._value is not None
            return self._value
        try:
            return self._future.result()
        except BrokenProcessPool:
            raise WorkerDied(
                "the worker process parsing diffs died (out of memory?); everything written "
                "so far is kept: run 'prdup index' again, with PRDUP_PARSE_WORKER_AFTER=-1 "
                "to parse in one process"
            ) from None


class DiffParser:
    """Parses in this process until `settings.parse_worker_after` diffs were asked for in this
    run, then in one worker (a run that reads a few new PRs never starts one, whose start
    costs about 0.3 s; nor does a machine with one core). `close` ends the worker."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        self.worker_after = settings.parse_worker_after if (cores or 1) > 1 else -1
        self.count = code_word_counter()
        self.asked = 0
        self._pool: ProcessPoolExecutor | None = None
        self.started = False  # whether this run started a worker

    @property
    def in_worker(self) -> bool:
        return self._pool is not None

    def submit(self, diff: str) -> Parsing:
        self.asked += 1
        if self._pool is None and 0 <= self.worker_after < self.asked:
            self._pool = _start_worker(self.settings)
            self.started = True
        if self._pool is None or len(diff) > LARGE_DIFF:
            return Parsing(value=parse_and_count(diff, self.settings, self.count))
        return Parsing(future=self._pool.submit(_parse_in_worker, diff))

    def close(self, finished: bool = True) -> None:
        """End the worker: after its last result when `finished`, at once otherwise (a run
        stopped by Ctrl-C or an error)."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        if not finished:
            # Its current diff is of no use now. The executor has no public way to end its
            # workers before Python 3.14 (`terminate_workers`).
            for process in list(getattr(pool, "_processes", {}).values()):
                process.terminate()
        pool.shutdown(wait=True, cancel_futures=not finished)


_worker: tuple[Settings, Counter] | None = None


def _start_worker(settings: Settings) -> ProcessPoolExecutor:
    # spawn, not fork: a forked worker would hold the ends of git's pipes this process has
    # open (diff-tree would wait forever for the end of its input) and the index's file. Like
    # any spawned worker, it imports the main module again: a script that indexes a large
    # repository through `index_repository` keeps its work under `if __name__ == "__main__"`.
    context = multiprocessing.get_context("spawn")
    return ProcessPoolExecutor(1, context, _init_worker, (settings,))


def _init_worker(settings: Settings) -> None:
    global _worker
    die_with_parent()
    _worker = (settings, code_word_counter())


def _parse_in_worker(diff: str) -> Parsed:
    assert _worker is not None
    settings, count = _worker
    return parse_and_count(diff, settings, count)
