"""Find changed definitions in worker processes while the indexer parses diffs and writes rows.

Tree-sitter parsing is most of an indexing run's CPU, and it is independent of the SQLite writes,
so it runs beside them. Each file path belongs to one worker, given to the least busy worker
the first time the path is seen: a file's versions keep arriving at the same worker in history
order, so its `SymbolExtractor` derives each version incrementally from the previous one,
exactly as a single process would, and the rows written are the same. (Hashing paths to
workers left one worker with three times the work of the other on mypy: a few hot files decide
the load.)

Requests travel in tickets, one per batch of changes; answers come back in submission order.
`InProcessSymbols` has the same interface for small runs and one-core machines.
"""

from __future__ import annotations

import multiprocessing
import queue
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from index import gitsource
from index.changes import FileAnswer, FileRequest, answer
from index.errors import SymbolWorkerFailed
from index.gitsource import BlobReader
from index.symbols import DEFAULT_CACHED_BYTES, DEFAULT_CACHED_TREES, SymbolExtractor

POLL_SECONDS = 1.0  # how often a wait for answers checks that the workers are still alive


@dataclass
class Ticket:
    """A submitted batch of requests; `answers` resolves it."""

    number: int
    requests: Sequence[FileRequest]
    shards: dict[int, list[int]] = field(default_factory=dict)  # worker -> request positions


class SymbolFinder(Protocol):
    def submit(self, requests: Sequence[FileRequest]) -> Ticket: ...

    def answers(self, ticket: Ticket) -> list[FileAnswer]: ...

    def close(self) -> None: ...


class InProcessSymbols:
    """Answers in this process, when asked (so work follows submission order)."""

    def __init__(self, blobs: BlobReader, max_file_bytes: int) -> None:
        self.blobs = blobs
        self.limit = max_file_bytes
        self.extractor = SymbolExtractor()
        self._submitted = 0

    def submit(self, requests: Sequence[FileRequest]) -> Ticket:
        self._submitted += 1
        return Ticket(self._submitted, requests)

    def answers(self, ticket: Ticket) -> list[FileAnswer]:
        return [
            answer(request, self.extractor, self.blobs, self.limit) for request in ticket.requests
        ]

    def close(self) -> None:
        pass


class SymbolWorkers:
    """`jobs` processes, each answering the requests for its share of the file paths."""

    def __init__(self, git_dir: str, max_file_bytes: int, jobs: int) -> None:
        # spawn, not fork: the indexer already runs threads (git feeders), and forking a
        # threaded process can copy a held lock into the child.
        context = multiprocessing.get_context("spawn")
        self._inboxes: list[Any] = []
        self._outboxes: list[Any] = []
        self._processes: list[Any] = []
        for _ in range(jobs):
            inbox, outbox = context.Queue(), context.Queue()
            process = context.Process(
                target=_serve,
                args=(git_dir, max_file_bytes, inbox, outbox, jobs),
                daemon=True,
            )
            process.start()
            self._inboxes.append(inbox)
            self._outboxes.append(outbox)
            self._processes.append(process)
        self._submitted = 0
        self._owner: dict[str, int] = {}  # path -> its worker, for the whole run
        self._load = [0] * jobs  # requests sent to each worker so far

    def submit(self, requests: Sequence[FileRequest]) -> Ticket:
        self._submitted += 1
        ticket = Ticket(self._submitted, requests)
        for position, request in enumerate(requests):
            worker = self._owner.get(request.path)
            if worker is None:
                worker = min(range(len(self._load)), key=self._load.__getitem__)
                self._owner[request.path] = worker
            self._load[worker] += 1
            ticket.shards.setdefault(worker, []).append(position)
        for worker, positions in ticket.shards.items():
            self._inboxes[worker].put((ticket.number, [requests[i] for i in positions]))
        return ticket

    def answers(self, ticket: Ticket) -> list[FileAnswer]:
        found: list[FileAnswer | None] = [None] * len(ticket.requests)
        for worker, positions in ticket.shards.items():
            number, answers = self._receive(worker)
            if number != ticket.number or len(answers) != len(positions):
                raise SymbolWorkerFailed("symbol worker answered out of order")
            for position, found_answer in zip(positions, answers, strict=True):
                found[position] = found_answer
        return [item if item is not None else (None, None) for item in found]

    def _receive(self, worker: int) -> tuple[int, list[FileAnswer]]:
        while True:
            try:
                return self._outboxes[worker].get(timeout=POLL_SECONDS)
            except queue.Empty:
                process = self._processes[worker]
                if not process.is_alive():
                    raise SymbolWorkerFailed(
                        f"symbol worker {worker} exited with code {process.exitcode}; "
                        "run 'prdup index' again to resume (add --jobs 1 if it recurs)"
                    ) from None

    def close(self) -> None:
        for inbox in self._inboxes:
            inbox.put(None)
        for process in self._processes:
            process.join(timeout=5)
            if process.is_alive():
                process.terminate()
        for box in (*self._inboxes, *self._outboxes):
            box.close()
            box.join_thread()


def _serve(git_dir: str, max_file_bytes: int, inbox: Any, outbox: Any, share: int) -> None:
    """A worker's loop: answer each ticket's requests in order, until told to stop."""
    blobs = BlobReader(gitsource.open_repository(git_dir))
    # Each worker sees only its share of the paths, so its share of the tree cache keeps the
    # same hit rate as one process with the whole cache.
    extractor = SymbolExtractor(
        max_cached_trees=DEFAULT_CACHED_TREES // share,
        max_cached_bytes=DEFAULT_CACHED_BYTES // share,
    )
    try:
        while (message := inbox.get()) is not None:
            number, requests = message
            outbox.put((number, [answer(r, extractor, blobs, max_file_bytes) for r in requests]))
    except KeyboardInterrupt:  # Ctrl-C reaches the whole process group: the indexer reports it
        return
