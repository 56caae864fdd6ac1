"""`usage_trace` profiles (added in Batsim 4.2.0): the trace files they replay.

The profile's `trace` file lists one per-rank trace file per line (relative to its own
directory); each rank file has lines `<rank> m_usage <usage> <flops>`: use that fraction of the
host's cores (at least one) to compute that many flops on each. Files are read once per profile.
"""

from __future__ import annotations

import math
import os
from functools import cache

from batsim_py.errors import WorkloadError
from batsim_py.workload.model import TraceProfile


@cache
def _read(path: str) -> tuple[tuple[float, float], ...]:
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read().splitlines()
    except OSError as exc:
        raise WorkloadError(f"{path}: cannot read the usage trace ({exc.strerror})") from None
    lines = []
    for n, line in enumerate(text, start=1):
        tokens = line.split()
        if not tokens or tokens[0].startswith("#"):
            continue
        if len(tokens) != 4 or tokens[1] != "m_usage":
            raise WorkloadError(f"{path}:{n}: expected '<rank> m_usage <usage> <flops>'")
        try:
            usage, flops = float(tokens[2]), float(tokens[3])
        except ValueError:
            raise WorkloadError(f"{path}:{n}: usage and flops must be numbers") from None
        if not (math.isfinite(usage) and 0.0 <= usage <= 1.0):
            raise WorkloadError(f"{path}:{n}: usage {tokens[2]} is not in [0, 1]")
        if not (math.isfinite(flops) and flops >= 0.0):
            raise WorkloadError(f"{path}:{n}: flops {tokens[3]} must be finite and >= 0")
        lines.append((usage, flops))
    return tuple(lines)


def rank_traces(profile: TraceProfile) -> list[tuple[tuple[float, float], ...]]:
    """The (usage, flops) lines of every rank of a usage_trace profile."""
    listing = profile.trace
    try:
        with open(listing, encoding="utf-8") as f:
            names = [line.strip() for line in f if line.strip()]
    except OSError as exc:
        raise WorkloadError(
            f"profile '{profile.name}': cannot read its trace list {listing} ({exc.strerror})"
        ) from None
    if not names:
        raise WorkloadError(f"profile '{profile.name}': trace list {listing} names no rank file")
    folder = os.path.dirname(listing)
    return [_read(os.path.join(folder, name)) for name in names]
