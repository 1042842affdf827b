"""Committing a batch in one step with respect to Ctrl-C.

A ``KeyboardInterrupt`` is raised between any two bytecodes of the main thread, so one arriving
while ``learn_many`` updates many counts would leave a batch half-learned. The statements that
change a learner's state run inside :func:`uninterrupted`, which holds SIGINT back until they
are done and then delivers it: the learner has learned the whole batch and the interrupt still
stops the program. Only SIGINT is held back (another exception raised asynchronously, such as a
``KeyboardInterrupt`` sent by ``PyThreadState_SetAsyncExc``, is not), and only in the main
thread, the one Python delivers signals to.
"""

from __future__ import annotations

import contextlib
import signal
import threading

__all__ = ["uninterrupted"]


@contextlib.contextmanager
def uninterrupted():
    """Hold SIGINT back while the block runs, then deliver it as the previous handler would.

    >>> with uninterrupted():
    ...     total = sum(range(10))
    >>> total
    45
    """
    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or previous is None:
        yield  # no Python handler to restore (installed outside Python): nothing held back
        return
    held = []
    signal.signal(signal.SIGINT, lambda signum, frame: held.append(frame))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if held:
            if callable(previous):
                previous(signal.SIGINT, held[0])
            elif previous == signal.SIG_DFL:
                signal.raise_signal(signal.SIGINT)
