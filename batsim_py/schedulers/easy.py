"""`easy`: the decisions of pybatsim 3.2.1's `easyBackfill` scheduler, made in-process.

Behaviour reproduced (not its code): jobs larger than the compute platform are rejected at
submission; otherwise every submission and completion triggers a pass: start queued jobs in
order while the queue head fits a free range (first range in list order large enough), then,
if more than one job still waits, reserve the head at the earliest time a range large enough
frees up (releasing running jobs by estimated end = start + walltime) and backfill, in queue
order, every job that fits a free range both in size and in walltime before that reservation.
Machine ranges come from `freespace.FreeList`. All decisions carry the request's `now`; the
reply's `now` is the request's (pybatsim's low-level API consumes no time here). The number of
machines managed is `nb_resources` (compute + storage), as in pybatsim.

Speed: a pass against a free list identical to the previous pass's (same version, same head
job) reuses the head's reservation and skips queued jobs already known not to fit.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

import numpy as np

from batsim_py.decision.decisions import Decision, ExecuteJob, RejectJob, Reply
from batsim_py.decision.events import Event, JobCompleted, JobSubmitted, SimulationBegins
from batsim_py.decision.interface import DecisionProcess
from batsim_py.schedulers.freespace import INF, FreeList, Space


class _Job:
    __slots__ = ("id", "req", "wall", "alloc", "end")

    def __init__(self, job_id: str, req: int, wall: float) -> None:
        self.id = job_id
        self.req = req
        self.wall = wall
        self.alloc: tuple[int, int] = (0, 0)
        self.end = 0.0  # estimated end: start + walltime


_VECTOR_FROM = 600  # below this many queued jobs a plain loop beats numpy's per-call cost


class _QueueArrays:
    """Sizes and walltimes of the waiting queue as arrays, to pre-select backfill candidates
    in C rather than testing thousands of queued jobs one by one in Python."""

    def __init__(self) -> None:
        self.req = np.zeros(1024, dtype=np.int64)
        self.wall = np.zeros(1024, dtype=np.float64)
        self.n = 0

    def append(self, req: int, wall: float) -> None:
        if self.n == len(self.req):
            self.req = np.concatenate([self.req, np.zeros_like(self.req)])
            self.wall = np.concatenate([self.wall, np.zeros_like(self.wall)])
        self.req[self.n] = req
        self.wall[self.n] = wall
        self.n += 1

    def drop_head(self, k: int) -> None:
        n = self.n
        self.req[: n - k] = self.req[k:n]
        self.wall[: n - k] = self.wall[k:n]
        self.n = n - k

    def drop_at(self, indices: list[int]) -> None:
        keep = np.ones(self.n, dtype=bool)
        keep[indices] = False
        m = int(keep.sum())
        self.req[:m] = self.req[: self.n][keep]
        self.wall[:m] = self.wall[: self.n][keep]
        self.n = m

    def candidates(self, start: int, wide: int, short: list[tuple[int, float]]) -> list[int]:
        req = self.req[start : self.n]
        mask = req <= wide
        for size, length in short:
            mask |= (req <= size) & (self.wall[start : self.n] <= length)
        return (np.flatnonzero(mask) + start).tolist()


class EasyBackfill(DecisionProcess):
    """pybatsim `easyBackfill` (EASY backfilling over contiguous machine ranges)."""

    def __init__(self, *, memo: bool = True) -> None:
        self._memo_enabled = memo  # False only to cross-check the shortcut in tests
        self._free = FreeList()
        self._nb_compute = 0
        self._waiting: list[_Job] = []
        self._arrays = _QueueArrays()  # sizes and walltimes of `_waiting`, same order
        self._running: list[_Job] = []  # sorted by estimated end, ties in insertion order
        self._running_ends: list[float] = []
        self._jobs: dict[str, _Job] = {}
        # Memo of the last backfilling pass that changed nothing (see module docstring).
        self._memo_version = -1
        self._memo_head: _Job | None = None
        self._memo_reservation: tuple[tuple[int, int], float] | None = None
        self._memo_checked = 0  # queue jobs behind the head known not to fit

    # ------------------------------------------------------------------ protocol side

    def exchange(self, now: float, events: Sequence[Event]) -> Reply:
        out: list[Decision] = []
        for event in events:
            if isinstance(event, JobSubmitted):
                self._on_submitted(event, now, out)
            elif isinstance(event, JobCompleted):
                self._on_completed(event, now, out)
            elif isinstance(event, SimulationBegins):
                self._free = FreeList(event.nb_resources)
                self._nb_compute = event.nb_compute_resources
        return Reply(now=now, decisions=tuple(out))

    def _on_submitted(self, event: JobSubmitted, now: float, out: list[Decision]) -> None:
        job = event.job
        wall = job.description.get("walltime", -1)
        if job.res > self._nb_compute:
            out.append(RejectJob(timestamp=now, job_id=job.id))
            return
        record = _Job(job.id, job.res, wall)
        self._jobs[job.id] = record
        self._waiting.append(record)
        self._arrays.append(record.req, record.wall)
        self._schedule(now, out)

    def _on_completed(self, event: JobCompleted, now: float, out: list[Decision]) -> None:
        job = self._jobs.pop(event.job_id, None)
        if job is None:
            return
        self._free.give_back(*job.alloc)
        i = bisect_right(self._running_ends, job.end) - 1
        while self._running[i] is not job:
            i -= 1
        del self._running[i]
        del self._running_ends[i]
        self._schedule(now, out)

    # ------------------------------------------------------------------ the pass

    def _start(self, job: _Job, alloc: tuple[int, int], now: float) -> None:
        job.alloc = alloc
        job.end = job.wall + now
        i = bisect_right(self._running_ends, job.end)
        self._running.insert(i, job)
        self._running_ends.insert(i, job.end)

    def _schedule(self, now: float, out: list[Decision]) -> None:
        started: list[_Job] = []
        waiting = self._waiting
        n_head = 0
        while n_head < len(waiting):
            job = waiting[n_head]
            space = _first_fit(self._free, job.req)
            if space is None:
                break
            self._start(job, self._free.take(space, job.req), now)
            started.append(job)
            n_head += 1
        if n_head:
            del waiting[:n_head]
            self._arrays.drop_head(n_head)
        if len(waiting) > 1:
            started += self._backfill(now)
        for job in started:
            lo, hi = job.alloc
            out.append(ExecuteJob(timestamp=now, job_id=job.id, alloc=tuple(range(lo, hi + 1))))

    def _backfill(self, now: float) -> list[_Job]:
        free = self._free
        head = self._waiting[0]
        version = free.version
        if self._memo_enabled and version == self._memo_version and head is self._memo_head:
            (a, b), start = self._memo_reservation  # type: ignore[misc]
            skip = self._memo_checked
        else:
            (a, b), start = self._reservation(head)
            skip = 0
        touched = self._split_for_reservation(a, b, start - now)
        chosen: list[_Job] = []
        chosen_at: list[int] = []
        queue = self._waiting
        arrays = self._arrays
        wide, short = _fit_thresholds(free)
        pos = 1 + skip
        while pos < len(queue):
            # Vectorised pre-selection with the current thresholds (they only shrink while
            # jobs are started, so the selection is a superset of what can still start).
            started = False
            if len(queue) - pos > _VECTOR_FROM:
                selection = arrays.candidates(pos, wide, short)
            else:
                selection = range(pos, len(queue))
            reach = max([wide] + [size for size, _ in short])
            for idx in selection:
                job = queue[idx]
                req = job.req
                if req > reach:
                    continue
                wall = job.wall
                if req > wide:
                    for size, length in short:
                        if req <= size and wall <= length:
                            break
                    else:
                        continue
                for space in free:
                    if req <= space.hi - space.lo + 1 and wall <= space.length:
                        self._start(job, free.take(space, req), now)
                        chosen.append(job)
                        chosen_at.append(idx)
                        wide, short = _fit_thresholds(free)
                        started = True
                        break
                if started:
                    pos = idx + 1
                    break
            if not started:
                break
        sides_changed = self._unsplit(touched)
        if chosen:
            for idx in reversed(chosen_at):
                del queue[idx]
            arrays.drop_at(chosen_at)
        elif not sides_changed:
            # The list is exactly as before the pass and every queued job failed against it:
            # the next pass against this same list only needs to look at new jobs.
            free.version = version
            self._memo_version = version
            self._memo_head = head
            self._memo_reservation = ((a, b), start)
            self._memo_checked = len(queue) - 1
        return chosen

    def _reservation(self, head: _Job) -> tuple[tuple[int, int], float]:
        """Where and when the head job would start if running jobs ended at their estimates."""
        trial = self._free.clone()
        for job in self._running:
            space = trial.give_back(*job.alloc)
            if head.req <= space.size:
                return trial.take(space, head.req), job.end
        raise AssertionError(f"job {head.id} can never fit on the platform")

    def _split_for_reservation(self, a: int, b: int, window: float) -> list[tuple]:
        """Shorten the spaces holding the reservation's ends `a` and `b` to `window`; their parts
        outside `[a, b]` become linked spaces of infinite length. Spaces lying strictly inside
        the reservation keep an infinite length (as in pybatsim). Returns what to restore."""
        free = self._free
        touched: list[tuple] = []  # (shortened space, linked space or None, its former side)
        first_done = False
        space = free.first
        while space is not None:
            if not first_done and space.lo == a:
                touched.append((space, None, space.low_first))
                space.length = window
                first_done = True
            elif not first_done and space.lo < a <= space.hi:
                touched.append((space, None, space.low_first))
                virtual = free.insert_after(space, space.lo, a - 1, INF)
                touched.append((None, virtual, None))
                virtual.partner, space.partner = space, virtual
                virtual.low_first, space.low_first = True, False
                space.length = window
                first_done = True
            if space.hi == b:
                touched.append((space, None, space.low_first))
                space.length = window
            elif space.lo <= b < space.hi:
                touched.append((space, None, space.low_first))
                virtual = free.insert_after(space, b + 1, space.hi, INF)
                touched.append((None, virtual, None))
                virtual.partner, space.partner = space, virtual
                virtual.low_first, space.low_first = False, True
                space.length = window
                break
            space = space.next
        return touched

    def _unsplit(self, touched: list[tuple]) -> bool:
        """Undo the split; True if a shortened space ends with another side than it had."""
        free = self._free
        for _, virtual, _ in touched:
            if virtual is not None:
                virtual.partner.partner = None
                virtual.partner = None
                if not virtual.gone:
                    free.unlink(virtual)
        changed = False
        for shortened, _, side in touched:
            if shortened is not None:
                shortened.length = INF
                if side is False:
                    changed = True
                shortened.low_first = True
        return changed


def _fit_thresholds(free: FreeList) -> tuple[int, list[tuple[int, float]]]:
    """Largest size among spaces of infinite length, and (size, length) of the others: a job
    fits some space iff its size is within the first, or within one of the others together
    with its walltime."""
    wide = 0
    short: list[tuple[int, float]] = []
    for space in free:
        size = space.hi - space.lo + 1
        if space.length == INF:
            if size > wide:
                wide = size
        else:
            short.append((size, space.length))
    return wide, short


def _first_fit(free: FreeList, req: int) -> Space | None:
    for space in free:
        if req <= space.hi - space.lo + 1:
            return space
    return None
