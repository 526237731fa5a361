"""How a prdup process ends: SIGTERM stops a command as Ctrl-C does, and a forked worker ends
with the command that started it, even one killed with SIGKILL."""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Iterator
from types import FrameType

_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


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


def die_with_parent() -> None:
    """A `multiprocessing.Pool` initializer: this worker ends when its parent does.

    Without it a worker whose parent was killed lives on until it next talks to it. Linux kills
    it at once (`PR_SET_PDEATHSIG`); elsewhere it ends at its next result, as before. Ctrl-C,
    which a terminal sends to every process of the command, is left to the parent, which then
    ends the pool; SIGTERM ends a worker as it does by default.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # Forked inside `signals_held`: take SIGTERM again (`Pool.terminate` ends workers with it).
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    parent = multiprocessing.parent_process()
    if parent is not None and os.getppid() != parent.pid:
        os._exit(1)  # the parent died before the request was made: nobody would tell us
