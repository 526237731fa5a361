"""How a prdup process ends: SIGTERM stops a command as Ctrl-C does (a worker ends with the
command that started it: `index.processes`)."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from types import FrameType


class Terminated(KeyboardInterrupt):
    """SIGTERM (`kill`, a CI job's timeout, a service manager): a request to stop, met as Ctrl-C
    is (a transaction in progress rolls back, everything committed stays)."""


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """While the block runs, SIGTERM raises `Terminated` in this process."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set a signal handler
        return
    owner = os.getpid()

    def stop(signum: int, frame: FrameType | None) -> None:
        if os.getpid() != owner:
            # A worker forked inside the block inherited this handler; `Pool.terminate` ends
            # workers with SIGTERM, which must end them as it does by default, not raise.
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        raise Terminated

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """SIGTERM and SIGINT wait while the block runs, and arrive at its end.

    For forking: right after a fork the parent runs the at-fork handlers (logging's lock
    release among them), and a signal met there is printed as an ignored exception with its
    traceback instead of stopping the command. The threads a block starts keep the signals
    held, so they reach the main thread, which is where Python handles them anyway.
    """
    held = {signal.SIGTERM, signal.SIGINT}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
