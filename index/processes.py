"""Worker processes end with the command that started them, even one killed with SIGKILL."""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys

_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


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
