"""Rate of one activity alone on its resources under SimGrid's ptask_L07 model.

Used for Batsim's internal 1-byte messages, which never share their route with anything else
while delay jobs run: the rate (fraction of the transfer per second) is the smallest link
capacity per byte, capped by the TCP-gamma bound (simgrid-models §2.3, §2.7). With no link at
all the transfer has no work: it completes one engine step after its latency.
"""

from __future__ import annotations

from collections.abc import Sequence

TCP_GAMMA = 4194304.0


def lone_transfer(
    latency: float, bandwidths: Sequence[float], nbytes: float, gamma: float = TCP_GAMMA
) -> tuple[float, float, bool]:
    """(latency, rate, free): `free` when the transfer has no resource to load."""
    if not bandwidths or nbytes <= 0:
        rate = gamma / (2.0 * latency * nbytes) if latency > 0 and nbytes > 0 else float("inf")
        return (latency, rate, True)
    rate = min(bw / nbytes for bw in bandwidths)
    if latency > 0:
        bound = gamma / (2.0 * latency * nbytes)
        if bound < rate:
            rate = bound
    return (latency, rate, False)
