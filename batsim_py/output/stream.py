"""Writing a very large output file without filling the page cache with it.

A million jobs on 1,024 hosts write a Pajé trace of 13 GB. Written as usual, the whole file
goes through the page cache: past the kernel's dirty limits the writer is throttled to the
disk's speed anyway, and once the cache holds most of the memory the kernel reclaims pages in
the writer's own time, so each gigabyte costs several times the CPU of the first (measured
here: 1.1 s of CPU per GB over 6 GB, against 0.45 s when the written pages are dropped as it
goes), and other processes lose their cached files.

So past the first STREAM_AFTER bytes (a file below that, every file of an ordinary run, is
written as before), `DropBehind` asks the kernel, every WINDOW bytes, to start writing the
new window to disk and to drop the pages of the window before the previous one, whose
writeback was started two windows ago (`posix_fadvise(POSIX_FADV_DONTNEED)`: advice only, the
bytes written are the same; a platform without it writes as before).
"""

from __future__ import annotations

import os

STREAM_AFTER = 256 << 20  # bytes of a file kept in the page cache as usual
WINDOW = 32 << 20  # bytes handed to the disk at a time past STREAM_AFTER


class DropBehind:
    """Call `advance(offset)` as a file descriptor's writes progress (`offset`: the bytes
    written so far)."""

    __slots__ = ("fd", "start", "window", "_mark", "_started")

    def __init__(self, fd: int, start: int | None = None, window: int | None = None) -> None:
        self.fd = fd
        self.start = STREAM_AFTER if start is None else start
        self.window = WINDOW if window is None else window
        self._mark = 0  # where the next window starts
        self._started: list[tuple[int, int]] = []  # windows being written back, oldest first

    def advance(self, offset: int) -> None:
        if offset < self.start or offset - self._mark < self.window:
            return
        advise = getattr(os, "posix_fadvise", None)
        if advise is None:
            return
        try:
            # (DONTNEED on dirty pages starts their writeback; clean ones are dropped)
            advise(self.fd, self._mark, offset - self._mark, os.POSIX_FADV_DONTNEED)
            self._started.append((self._mark, offset - self._mark))
            if len(self._started) > 2:
                lo, length = self._started.pop(0)
                advise(self.fd, lo, length, os.POSIX_FADV_DONTNEED)  # written back by now
        except OSError:  # (advice refused: the file is written as usual)
            self.start = 1 << 62
        self._mark = offset
