"""`easy`: the decisions of pybatsim 3.2.1's `easyBackfill` scheduler, made in-process.

Behaviour reproduced (not its code): jobs larger than the compute platform are rejected at
submission; otherwise every submission and completion triggers a pass: start queued jobs in
order while the queue head fits a free range (first range in list order large enough), then,
if more than one job still waits, reserve the head at the earliest time a range large enough
frees up (releasing running jobs by estimated end = start + walltime) and backfill, in queue
order, every job that fits a free range both in size and in walltime before that reservation.
A backfilling pass also leaves the free ranges holding the reservation's ends carving from
their low end. Machine ranges come from `freespace.FreeList`. All decisions carry the request's
`now`; the reply's `now` is the request's (pybatsim's low-level API consumes no time here). The
number of machines managed is `nb_resources` (compute + storage), as in pybatsim.

Speed (a pass runs after every event, with a long queue of jobs that mostly cannot start):
- queued jobs that are too large for every free range are skipped by a C-level scan
  (`_SizeIndex`) instead of being tested one by one;
- the head's reservation is computed on bit masks of machines (`_reservation`) rather than by
  releasing running jobs one by one into a copy of the free list, and only when the pass needs
  it: a pass in which no queued job is small enough to start, and in which every free range
  already carves from its low end, cannot change anything whatever the reservation;
- a pass against a free list identical to the previous pass's (same version, same head job)
  reuses the head's reservation and skips queued jobs already known not to fit.
`EasyBackfill(shortcuts=False)` turns all of this off (plain pybatsim-like passes), to cross-check
the shortcuts in tests.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from functools import reduce
from itertools import accumulate
from operator import or_

from batsim_py.decision.decisions import Decision, ExecuteJob, RejectJob, Reply
from batsim_py.decision.events import Event, JobCompleted, JobSubmitted, SimulationBegins
from batsim_py.decision.interface import DecisionProcess
from batsim_py.schedulers.freespace import INF, FreeList, Space


class _Job:
    __slots__ = ("id", "req", "wall", "alloc", "mask", "end")

    def __init__(self, job_id: str, req: int, wall: float) -> None:
        self.id = job_id
        self.req = req
        self.wall = wall
        self.alloc: tuple[int, int] = (0, 0)
        self.mask = 0  # bit i set iff machine i is allocated to the job
        self.end = 0.0  # estimated end: start + walltime


# `_SizeIndex.find` patterns, one per threshold byte: "any byte <= threshold".
_AT_MOST = [re.compile(rb"[\x00-\x%02x]" % t) for t in range(256)]


class _SizeIndex:
    """The sizes of the waiting queue's jobs, one byte each in queue order, so that the next job
    small enough for some free range is found by a regex scan in C: in a long queue almost every
    job is larger than every free range, and testing them one by one in Python dominated.

    A byte holds `min(255, size // unit)` with `unit` chosen so that the platform's largest size
    fits; this is monotonic in the size, so a job whose byte exceeds the byte of `reach` is
    surely larger than `reach` (the converse is checked by the caller on the real size)."""

    __slots__ = ("codes", "unit")

    def __init__(self, nb_machines: int = 0) -> None:
        self.codes = bytearray()
        self.unit = max(1, -(-nb_machines // 255))

    def code(self, size: int) -> int:
        return min(255, max(0, size) // self.unit)

    def find(self, start: int, reach: int) -> int:
        """Index of the first job at or after `start` that may be no larger than `reach`, or -1."""
        if reach < 0:
            return -1
        found = _AT_MOST[self.code(reach)].search(self.codes, start)
        return -1 if found is None else found.start()


class EasyBackfill(DecisionProcess):
    """pybatsim `easyBackfill` (EASY backfilling over contiguous machine ranges)."""

    def __init__(self, *, shortcuts: bool = True) -> None:
        self._shortcuts = shortcuts  # False only to cross-check the shortcuts in tests
        self._free = FreeList()
        self._free_mask = 0  # bit i set iff machine i is in a free range
        # The masks describe the machines exactly only while allocations never overlap and free
        # ranges never touch; `_start` checks the first (the second follows) and, should it ever
        # fail, `_reservation` falls back to releasing jobs into a copy of the free list.
        self._masks_exact = True
        self._nb_compute = 0
        self._waiting: list[_Job] = []
        self._sizes = _SizeIndex()  # sizes of `_waiting`, same order
        self._running: list[_Job] = []  # sorted by estimated end, ties in insertion order
        self._running_ends: list[float] = []
        self._running_masks: list[int] = []  # the jobs' masks and sizes, same order
        self._running_sizes: list[int] = []
        self._jobs: dict[str, _Job] = {}
        # Memo of the last backfilling pass that changed nothing (see module docstring).
        self._memo_version = -1
        self._memo_head: _Job | None = None
        self._memo_reservation: tuple[tuple[int, int], float] | None = None  # None: not computed
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
                self._free_mask = (1 << max(0, event.nb_resources)) - 1
                self._sizes = _SizeIndex(event.nb_resources)
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
        self._sizes.codes.append(self._sizes.code(record.req))
        self._schedule(now, out)

    def _on_completed(self, event: JobCompleted, now: float, out: list[Decision]) -> None:
        job = self._jobs.pop(event.job_id, None)
        if job is None:
            return
        self._free.give_back(*job.alloc)
        self._free_mask |= job.mask
        i = bisect_right(self._running_ends, job.end) - 1
        while self._running[i] is not job:
            i -= 1
        del self._running[i]
        del self._running_ends[i]
        del self._running_masks[i]
        del self._running_sizes[i]
        self._schedule(now, out)

    # ------------------------------------------------------------------ the pass

    def _start(self, job: _Job, alloc: tuple[int, int], now: float) -> None:
        job.alloc = alloc
        job.mask = mask = ((1 << (alloc[1] - alloc[0] + 1)) - 1) << alloc[0]
        if mask & ~self._free_mask:
            self._masks_exact = False
        self._free_mask &= ~mask
        job.end = job.wall + now
        i = bisect_right(self._running_ends, job.end)
        self._running.insert(i, job)
        self._running_ends.insert(i, job.end)
        self._running_masks.insert(i, mask)
        self._running_sizes.insert(i, alloc[1] - alloc[0] + 1)

    def _schedule(self, now: float, out: list[Decision]) -> None:
        started: list[_Job] = []
        waiting = self._waiting
        free = self._free
        widest, high_first = _survey(free)
        n_head = 0
        while n_head < len(waiting):
            job = waiting[n_head]
            space = _first_fit(free, job.req) if job.req <= widest else None
            if space is None:
                break
            self._start(job, free.take(space, job.req), now)
            started.append(job)
            n_head += 1
            widest, high_first = _survey(free)
        if n_head:
            del waiting[:n_head]
            del self._sizes.codes[:n_head]
        if len(waiting) > 1:
            if self._shortcuts:
                started += self._backfill(now, widest, high_first)
            else:
                started += self._backfill_plain(now)
        for job in started:
            lo, hi = job.alloc
            out.append(ExecuteJob(timestamp=now, job_id=job.id, alloc=tuple(range(lo, hi + 1))))

    def _backfill(self, now: float, widest: int, high_first: bool) -> list[_Job]:
        """The backfilling pass with the shortcuts of the module docstring; `widest` is the size
        of the largest free range, `high_first` whether some free range carves from its high end.
        """
        free = self._free
        queue = self._waiting
        sizes = self._sizes
        head = queue[0]
        version = free.version
        if version == self._memo_version and head is self._memo_head:
            reservation = self._memo_reservation
            skip = self._memo_checked
        else:
            reservation = None
            skip = 0
        pos = sizes.find(1 + skip, widest)
        if pos < 0:
            # No queued job is small enough for any free range: the pass starts nothing and can
            # only turn the ranges holding the reservation's ends to carve from their low end.
            if high_first:
                if reservation is None:
                    reservation = self._reservation(head)
                (a, b), _ = reservation
                changed = False
                for space in free:
                    if not space.low_first and (space.lo <= a <= space.hi
                                                or space.lo <= b <= space.hi):
                        space.low_first = True
                        changed = True
                if changed:
                    free.version += 1
                    return []
            self._remember(version, head, reservation, len(queue) - 1)
            return []

        if reservation is None:
            reservation = self._reservation(head)
        (a, b), start = reservation
        touched = self._split_for_reservation(a, b, start - now)
        chosen: list[_Job] = []
        chosen_at: list[int] = []
        reach = widest  # the split adds only ranges inside existing ones
        while pos >= 0:
            job = queue[pos]
            req = job.req
            if req <= reach:
                wall = job.wall
                for space in free:
                    if req <= space.hi - space.lo + 1 and wall <= space.length:
                        self._start(job, free.take(space, req), now)
                        chosen.append(job)
                        chosen_at.append(pos)
                        reach = _survey(free)[0]
                        break
            pos = sizes.find(pos + 1, reach)
        sides_changed = self._unsplit(touched)
        if chosen:
            codes = sizes.codes
            for idx in reversed(chosen_at):
                del queue[idx]
                del codes[idx]
        elif not sides_changed:
            # The list is exactly as before the pass and every queued job failed against it:
            # the next pass against this same list only needs to look at new jobs.
            free.version = version
            self._remember(version, head, reservation, len(queue) - 1)
        else:
            free.version = version + 1  # sides changed: a later pass must not reuse this one
        return chosen

    def _remember(self, version: int, head: _Job,
                  reservation: tuple[tuple[int, int], float] | None, checked: int) -> None:
        self._memo_version = version
        self._memo_head = head
        self._memo_reservation = reservation
        self._memo_checked = checked

    def _backfill_plain(self, now: float) -> list[_Job]:
        """The backfilling pass without shortcuts: every queued job against every free range."""
        free = self._free
        queue = self._waiting
        (a, b), start = self._reservation_by_release(queue[0])
        touched = self._split_for_reservation(a, b, start - now)
        chosen_at: list[int] = []
        for idx in range(1, len(queue)):
            job = queue[idx]
            for space in free:
                if job.req <= space.hi - space.lo + 1 and job.wall <= space.length:
                    self._start(job, free.take(space, job.req), now)
                    chosen_at.append(idx)
                    break
        self._unsplit(touched)
        chosen = [queue[idx] for idx in chosen_at]
        for idx in reversed(chosen_at):
            del queue[idx]
            del self._sizes.codes[idx]
        return chosen

    # ------------------------------------------------------------------ the reservation

    def _reservation_by_release(self, head: _Job) -> tuple[tuple[int, int], float]:
        """Where and when the head job would start if running jobs ended at their estimates,
        found as pybatsim does: releasing them in order into a copy of the free list."""
        trial = self._free.clone()
        for job in self._running:
            space = trial.give_back(*job.alloc)
            if head.req <= space.size:
                return trial.take(space, head.req), job.end
        raise AssertionError(f"job {head.id} can never fit on the platform")

    def _reservation(self, head: _Job) -> tuple[tuple[int, int], float]:
        """Same result as `_reservation_by_release`, computed on bit masks without copying.

        Machines are either free or held by exactly one running job, and free ranges are the
        maximal runs of free machines. Releasing jobs in order, the head (which fits no free range
        now) first fits when the run of free machines around the job just released reaches its
        size; a cheap count of free machines skips the releases before that can happen. The head
        is then carved from that run on the side the release left it (`_side_after_release`).
        """
        req = head.req
        if not self._masks_exact or req <= 0:
            return self._reservation_by_release(head)
        # counts[t]: free machines once the first t running jobs are released
        counts = list(accumulate(self._running_sizes, initial=self._free_mask.bit_count()))
        first = max(0, bisect_left(counts, req) - 1)  # the first release that may be enough
        masks = self._running_masks
        state = reduce(or_, masks[:first], self._free_mask)
        running = self._running
        for t in range(first, len(running)):
            job = running[t]
            state |= masks[t]
            lo, hi = job.alloc
            busy = ~state
            above = busy >> (hi + 1)  # the lowest set bit: the first busy machine above the job
            run_hi = hi + (above & -above).bit_length() - 1
            run_lo = (busy & ((1 << lo) - 1)).bit_length()
            if run_hi - run_lo + 1 >= req:
                if self._side_after_release(t, state ^ masks[t]):
                    return (run_lo, run_lo + req - 1), job.end
                return (run_hi - req + 1, run_hi), job.end
        raise AssertionError(f"job {head.id} can never fit on the platform")

    def _side_after_release(self, t: int, before: int) -> bool:
        """`low_first` of the range that releasing `running[t]` into the free machines `before`
        yields, by `FreeList.give_back`'s rules: merged with both neighbours it keeps the left
        one's side, merged on the left only it carves from its high end, else from its low end.
        """
        lo, hi = self._running[t].alloc
        left = lo > 0 and (before >> (lo - 1)) & 1
        if not left:
            return True
        if not (before >> (hi + 1)) & 1:
            return False
        return self._side_of_run_ending(lo - 1, before, t)

    def _side_of_run_ending(self, end: int, state: int, t: int) -> bool:
        """`low_first` of the run of free machines ending at `end` once the first `t` running
        jobs are released into the free machines (`state`): the side left by the last release
        inside the run, or the side of the free range it is if no release touched it."""
        start = (~state & ((1 << end) - 1)).bit_length()
        running = self._running
        before = state
        for j in range(t - 1, -1, -1):
            before ^= running[j].mask  # now the free machines before `running[j]` is released
            if start <= running[j].alloc[0] <= end:  # a released job lies wholly in one run
                return self._side_after_release(j, before)
        for space in self._free:
            if space.lo == start:
                return space.low_first
        raise AssertionError(f"no free range starts at machine {start}")

    # ------------------------------------------------------------------ the split

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


def _survey(free: FreeList) -> tuple[int, bool]:
    """Size of the largest free range, and whether some free range carves from its high end."""
    widest = 0
    high_first = False
    for space in free:
        size = space.hi - space.lo + 1
        if size > widest:
            widest = size
        if not space.low_first:
            high_first = True
    return widest, high_first


def _first_fit(free: FreeList, req: int) -> Space | None:
    for space in free:
        if req <= space.hi - space.lo + 1:
            return space
    return None
