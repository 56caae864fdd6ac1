"""One campaign process per campaign folder: a lock file naming its holder.

Why: two `batsim-py campaign` commands (or `batsim_py.campaign.run` calls) on the same folder
would run the same runs twice at once, interleave their markers and outputs, and rewrite
`metrics.parquet` under each other. The first one takes an exclusive `flock` on
`DIR/campaign.lock` for the whole campaign and writes who it is (host, pid, start time) into
it; the second finds the lock taken and stops at once with one line naming the holder. The
kernel drops the lock when its process ends, however it ends (SIGKILL included), so a lock
left by a dead campaign never blocks the next one: there is nothing stale to clean up. (On
NFS, Linux maps `flock` to the server's byte-range locks, which every client sees.)
"""

from __future__ import annotations

import fcntl
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager

from batsim_py.campaign.spec import CampaignError

LOCK_NAME = "campaign.lock"


class CampaignBusy(CampaignError):
    """Another campaign process holds the campaign folder."""


@contextmanager
def campaign_lock(root: str) -> Iterator[str]:
    """Hold `root`'s lock for the block; raise CampaignBusy if another process holds it."""
    os.makedirs(root, exist_ok=True)
    path = os.path.join(root, LOCK_NAME)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip() or "unknown"
            raise CampaignBusy(
                f"campaign folder {root} is in use by another campaign process ({holder}; "
                f"lock {path}): wait for it to end, stop it, or give another -o") from None
        started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        holder = f"host {socket.gethostname()}, pid {os.getpid()}, since {started}"
        os.ftruncate(fd, 0)
        os.pwrite(fd, (holder + "\n").encode(), 0)
        try:
            yield path
        finally:
            os.ftruncate(fd, 0)  # (the next holder writes its own name)
    finally:
        os.close(fd)  # releases the lock
