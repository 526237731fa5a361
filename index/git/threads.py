"""Threads that leave stop signals to the main thread.

The kernel delivers a process's SIGTERM or SIGINT to any of its threads that does not block
it, and Python then handles it in the main thread at once, whatever that thread is doing. A
block of the main thread that holds the signals (`prdup.lifetime.signals_held`, around
forking the sweep's workers) holds them only if every other thread blocks them too: a
progress heartbeat that took a stop while the pool was being made left a pool half made,
whose workers the command's exit then waited for, for ever.
"""

from __future__ import annotations

import signal
import threading

STOPS = frozenset({signal.SIGTERM, signal.SIGINT})


def start_quietly(thread: threading.Thread) -> threading.Thread:
    """Start `thread` with SIGTERM and SIGINT blocked in it (it inherits the mask it is
    started with), so they reach the main thread alone, where Python handles them anyway."""
    if not hasattr(signal, "pthread_sigmask"):  # no per-thread masks (Windows): nothing to do
        thread.start()
        return thread
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)
    try:
        thread.start()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
    return thread
