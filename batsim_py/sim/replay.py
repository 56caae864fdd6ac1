"""Bringing a long-pending sleep up to date in O(log n) per binade it crosses, exactly as
SimGrid's step-by-step subtraction would (issue 12 item 7: N pending CALL_ME_LATERs cost O(N^2)).

SimGrid subtracts every step's delta from every pending activity, so a sleep's remaining
duration after steps u..k-1 is the fold `((r - d_u) - d_u+1) - ...`, each subtraction rounded.
Replaying the fold costs O(k - u) per sleep; with N sleeps pending over N steps, O(N^2).

The fold has a closed form while the value stays in one binade. Write r = m * g, where g =
2^(e-52) is the spacing of doubles in [2^e, 2^(e+1)) and m an integer in [2^52, 2^53). While the
exact difference m*g - d stays in that binade, round-to-nearest-even gives a multiple of g: with
t = d / g (exact: g is a power of two), the new m is m - rint(t), or, when t is a tie a + 1/2,
the even one of m - a - 1 and m - a. Each step is thus the map m -> m - c[m mod 2] for a pair
c = (c0, c1) that depends only on the delta and the binade, and such maps compose into maps of
the same form: (f then g)[p] = f[p] + g[(p + f[p]) mod 2]. A segment tree of composed pairs per
binade in use (levels of aligned blocks, built with numpy as steps are taken) answers any range
in O(log n). If the final m is at least 2^52 + 1, every intermediate difference was at least
(2^52 + 1/2) * g, above the binade's floor, so every step did round that way and the result is
exact; otherwise (or for values at a binade's floor, denormals...) the caller replays the fold.
Pairs saturate at 2^61 (such a range cannot pass the test anyway), so int64 never overflows.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

_FLOOR = 2**52  # m of a binade's floor
_SAT = 2**61  # saturation of the per-range subtrahends
_CHUNK = 256  # trees cover whole chunks of steps


class _Tree:
    """Composed (c0, c1) pairs of aligned blocks of 2^L deltas, level by level."""

    __slots__ = ("scale", "c0", "c1", "lens", "size")

    def __init__(self, scale: int) -> None:
        self.scale = scale  # d / g == ldexp(d, scale)
        self.c0: list[np.ndarray] = []  # per level, grown by doubling (appends stay linear)
        self.c1: list[np.ndarray] = []
        self.lens: list[int] = []  # valid entries per level
        self.size = 0  # deltas covered

    def extend(self, deltas: Any, k: int) -> None:
        n = self.size
        if k <= n:
            return
        with np.errstate(all="ignore"):  # huge quotients overflow to inf: saturated below
            t = np.ldexp(deltas[n:k], self.scale)
            a = np.floor(t)
            tie = (t - a) == 0.5
            q = np.where(tie, a, np.rint(t))
            q = np.minimum(q, float(_SAT)).astype(np.int64)
        odd = tie & (q % 2 == 1)  # a tie a + 1/2: c[p] = a + ((p + a) mod 2)
        even = tie & ~odd
        new0 = q + odd
        new1 = q + even
        self._append(0, new0, new1)
        self.size = k
        level = 0
        while True:
            lo0, lo1 = self.c0[level], self.c1[level]
            have = self.lens[level + 1] if level + 1 < len(self.lens) else 0
            full = self.lens[level] // 2
            if full <= have:
                break
            f0, f1 = lo0[2 * have:2 * full:2], lo1[2 * have:2 * full:2]
            g0, g1 = lo0[2 * have + 1:2 * full:2], lo1[2 * have + 1:2 * full:2]
            h0 = np.minimum(f0 + np.where(f0 % 2 == 0, g0, g1), _SAT)
            h1 = np.minimum(f1 + np.where(f1 % 2 == 0, g1, g0), _SAT)
            self._append(level + 1, h0, h1)
            level += 1

    def _append(self, level: int, c0: np.ndarray, c1: np.ndarray) -> None:
        if level == len(self.c0):
            self.c0.append(np.empty(max(64, 2 * len(c0)), dtype=np.int64))
            self.c1.append(np.empty(max(64, 2 * len(c0)), dtype=np.int64))
            self.lens.append(0)
        n = self.lens[level]
        end = n + len(c0)
        if end > len(self.c0[level]):
            self.c0[level] = np.resize(self.c0[level], max(end, 2 * len(self.c0[level])))
            self.c1[level] = np.resize(self.c1[level], max(end, 2 * len(self.c1[level])))
        self.c0[level][n:end] = c0
        self.c1[level][n:end] = c1
        self.lens[level] = end

    def pair(self, level: int, index: int) -> tuple[int, int]:
        return int(self.c0[level][index]), int(self.c1[level][index])


def _blocks(u: int, k: int) -> list[tuple[int, int]]:
    """The aligned blocks (level, index) covering [u, k), in order."""
    left: list[tuple[int, int]] = []
    right: list[tuple[int, int]] = []
    lo, hi, level = u, k, 0
    while lo < hi:
        if lo & 1:
            left.append((level, lo))
            lo += 1
        if hi & 1:
            hi -= 1
            right.append((level, hi))
        lo >>= 1
        hi >>= 1
        level += 1
    return left + right[::-1]


class DeltaReplay:
    """Closed-form catch-ups of pending sleeps over the engine's step deltas (one record, from
    its last rebase: `reset` when the engine starts the record again)."""

    def __init__(self) -> None:
        self._trees: dict[int, _Tree] = {}

    def reset(self) -> None:
        self._trees.clear()

    def fold(self, rem: float, deltas: Any, u: int, k: int) -> float:
        """`rem` minus deltas[u:k], as the sequential rounded fold gives it; -1.0 when the
        closed form cannot say (the caller then replays the fold).

        Blocks are applied in order while the value stays in its binade; a block that would
        take it out is split, down to the one delta that does, which is subtracted as the
        hardware does; the walk goes on in the new binade (O(log n) per binade crossed)."""
        # The trees grow by whole chunks (numpy's per-call cost would dominate steps added one
        # by one); the steps after the last whole chunk are subtracted one by one.
        covered = k - k % _CHUNK
        if covered <= u:
            return -1.0
        todo = _blocks(u, covered)
        todo.reverse()  # popped in order
        trees = self._trees
        tree: _Tree | None = None
        m = scale = 0  # rem == m * 2^-scale while `tree` is set
        while todo:
            level, index = todo.pop()
            if tree is None:
                if not 2.2250738585072014e-308 <= rem < math.inf:
                    return -1.0
                mant, exp = math.frexp(rem)  # rem = mant * 2^exp, mant in [0.5, 1)
                scale = 53 - exp
                m = int(math.ldexp(mant, 53))  # in [2^52, 2^53)
                if m != _FLOOR:
                    tree = trees.get(scale)
                    if tree is None:
                        tree = trees[scale] = _Tree(scale)
                    tree.extend(deltas, covered)
            if tree is not None:
                left = m - (tree.c1 if m & 1 else tree.c0)[level].item(index)
                if left > _FLOOR:
                    m = left
                    continue
                if level == 0:  # this delta leaves the binade: subtract it as SimGrid does
                    rem = math.ldexp(float(m), -scale)
                    tree = None
            if level == 0:
                rem = rem - deltas.item(index)
            else:
                todo.append((level - 1, 2 * index + 1))
                todo.append((level - 1, 2 * index))
        if tree is not None:
            rem = math.ldexp(float(m), -scale)
        for d in deltas[covered:k].tolist():
            rem -= d
        return rem
