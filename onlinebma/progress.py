"""Progress display for long fits and experiments: tqdm when installed, a plain line otherwise.

>>> list(progress(range(3), enabled=False))
[0, 1, 2]
"""

from __future__ import annotations

import sys
import time

__all__ = ["progress"]


def progress(iterable, total=None, desc: str | None = None, enabled: bool = True, **kwargs):
    """Wrap ``iterable`` in a progress bar (tqdm if available) when ``enabled``."""
    if not enabled:
        return iterable
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return _plain(iterable, total, desc)
    # delay: a bar appears only once the loop has run 1 s, so the short refits of a stream
    # print nothing (tqdm's own "one line per long fit at most").
    kwargs.setdefault("delay", 1.0)
    return tqdm(iterable, total=total, desc=desc, file=sys.stderr, **kwargs)


def _plain(iterable, total, desc):
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)
    start = last = time.monotonic()
    i, shown = 0, False
    for i, item in enumerate(iterable, 1):
        yield item
        now = time.monotonic()
        if now - last >= 1.0:
            last, shown = now, True
            of = f"/{total}" if total else ""
            print(f"\r{desc or ''} {i}{of} ({now - start:.0f}s)", end="", file=sys.stderr)
    if shown:  # one line per long loop; a short one (a refit in a stream) prints nothing
        print(f"\r{desc or ''} {i} done in {time.monotonic() - start:.1f}s", file=sys.stderr)
