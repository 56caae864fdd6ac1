"""Rate of one activity alone on its resources under SimGrid's ptask_L07 model.

Used for Batsim's internal 1-byte messages, which never share their route with anything else
while delay jobs run: the rate (fraction of the transfer per second) is the smallest link
capacity per byte, capped by the TCP-gamma bound (simgrid-models §2.3, §2.7). With no link at
all the transfer has no work: it completes one engine step after its latency.
"""

from __future__ import annotations

from collections.abc import Sequence

TCP_GAMMA = 4194304.0
INF = float("inf")
SMALLEST = 5e-324  # the smallest positive double


def tcp_bound(gamma: float, latency_bytes: float) -> float:
    """SimGrid's TCP-gamma rate bound `gamma / (2 latency bytes)`; inf (none) if 0.

    Where the product overflows (a latency or an amount near 1e308) SimGrid's bound becomes 0,
    which its solver reads as "no bound": the transfer would suddenly be free. The bound here
    stays positive instead (the smallest double at worst), so such a transfer takes longer
    than any simulated time and the kernel reports the clock overflow.
    """
    if latency_bytes <= 0.0:
        return INF
    bound = gamma / (2.0 * latency_bytes)
    return bound if bound > 0.0 else SMALLEST


def lone_transfer(
    latency: float, bandwidths: Sequence[float], nbytes: float, gamma: float = TCP_GAMMA
) -> tuple[float, float, bool]:
    """(latency, rate, free): `free` when the transfer has no resource to load."""
    if not bandwidths or nbytes <= 0:
        rate = tcp_bound(gamma, latency * nbytes) if latency > 0 and nbytes > 0 else INF
        return (latency, rate, True)
    rate = min(bw / nbytes for bw in bandwidths)
    if latency > 0:
        bound = tcp_bound(gamma, latency * nbytes)
        if bound < rate:
            rate = bound
    return (latency, rate, False)
