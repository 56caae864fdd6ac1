"""Duration of one activity alone on its resources under SimGrid's ptask_L07 model.

Used for Batsim's internal 1-byte messages when nothing else shares their route: the rate is
the smallest of the link capacities per byte and the TCP-gamma bound (simgrid-models §2.3, §2.7).
"""

from __future__ import annotations

from collections.abc import Sequence

TCP_GAMMA = 4194304.0


def lone_transfer(
    latency: float, bandwidths: Sequence[float], nbytes: float, gamma: float = TCP_GAMMA
) -> tuple[float, float]:
    """(latency phase, transfer phase) of `nbytes` sent alone over links of `bandwidths`.

    With no link and no latency the transfer is free (SimGrid completes it at the next step).
    """
    if nbytes <= 0:
        return (latency, 0.0)
    rate = float("inf")
    for bw in bandwidths:
        r = bw / nbytes
        if r < rate:
            rate = r
    if latency > 0:
        bound = gamma / (2.0 * latency * nbytes)
        if bound < rate:
            rate = bound
    if rate == float("inf"):
        return (latency, 0.0)
    return (latency, 1.0 / rate)
