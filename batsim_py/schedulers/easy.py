"""`easy`: the decisions of pybatsim 3.2.1's `easyBackfill` scheduler, made in-process.

Behaviour reproduced (not its code): jobs larger than the compute platform are rejected at
submission, and so are jobs asking for no machine at all (`res` 0: Batsim loads them but refuses an
EXECUTE_JOB with an empty allocation, so rejecting is the only valid decision); otherwise every
submission and completion triggers a pass: start queued jobs in order while the queue head fits a
free range (first range in list order large enough), then, if more than one job still waits,
reserve the head at the earliest time a range large enough frees up (releasing running jobs by
estimated end = start + walltime) and backfill, in queue order, every job that fits a free range
both in size and in walltime before that reservation. A backfilling pass also leaves the free
ranges holding the reservation's ends carving from their low end. Machine ranges come from
`freespace.FreeList`. All decisions carry the request's `now`; the reply's `now` is the request's
(pybatsim's low-level API consumes no time here). The number of machines managed is `nb_resources`
(compute + storage), as in pybatsim.

Speed (a pass runs after every event, with a long queue of jobs that mostly cannot start):
- queued jobs that are too large for every free range are skipped by a tight loop over the
  queue when compiled, by a C-level scan (`_SizeIndex`) when interpreted, never by a first-fit
  search each; and when the largest free range is smaller than every queued job (counts of
  queued jobs by size give the smallest), nothing is scanned at all;
- the head's reservation is computed on bit masks of machines (`_reserve`) rather than by
  releasing running jobs one by one into a copy of the free list, and only when the pass needs
  it: a pass in which no queued job is small enough to start, and in which every free range
  already carves from its low end, cannot change anything whatever the reservation;
- the head's reservation is kept from pass to pass while the jobs that start and end leave
  alone the machines it depends on (see `_reserve`): it rarely changes while a head waits;
- the free ranges holding the reservation's ends are split for the pass (as pybatsim does)
  only once a job's first-fit search reaches them;
- a pass against a free list identical to the previous pass's (same version, same head job)
  skips queued jobs already known not to fit;
- few objects are allocated per call (reused lists, masks instead of tuples), which also
  keeps Python's garbage collections, paid by whoever allocates, mostly out of `exchange`;
- compiled by mypyc, calls into the interpreter cost more than the work around them: events are
  dispatched by exact type, running jobs are found by a loop rather than `bisect`, and a free
  mask is updated with as few operations on long integers as possible.
`EasyBackfill(shortcuts=False)` turns all of this off (plain pybatsim-like passes), to cross-check
the shortcuts in tests; `EasyBackfill(check_reservations=True)` checks every reservation taken
from the masks (or held from an earlier pass) against the plain release order, and counts them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from batsim_py.decision.decisions import Decision, ExecuteJob, RejectJob, Reply
from batsim_py.decision.events import Event, JobCompleted, JobSubmitted, SimulationBegins
from batsim_py.decision.interface import DecisionProcess
from batsim_py.schedulers.freespace import INF, FreeList


class _Job:
    __slots__ = ("id", "req", "wall", "lo", "hi", "mask", "end")

    def __init__(self, job_id: str, req: int, wall: float) -> None:
        self.id = job_id
        self.req = req
        self.wall = wall
        self.lo = self.hi = 0  # allocated machines: lo..hi
        self.mask = 0  # the same as bits: bit i set iff machine i is allocated to the job
        self.end = 0.0  # estimated end: start + walltime


# Compiled (mypyc), a loop over the queue's jobs tests one in a few nanoseconds, faster than
# any call out; run by the interpreter, queue tails longer than `_SCAN_IN_C` are scanned by
# `_SizeIndex.find` (C code) instead, and only then is the index kept.
_COMPILED: Final = not __file__.endswith(".py")
_SCAN_IN_C: Final = 16
_BLOCKS_KEPT: Final = 65_536  # allocations (ranges) `_start` keeps for reuse (f_50k: 3,734)

# `_SizeIndex` tables, one per threshold byte t: bytes <= t become 1, the others 0.
_AT_MOST = [bytes(1 if code <= t else 0 for code in range(256)) for t in range(256)]


class _SizeIndex:
    """The sizes of the waiting queue's jobs, one byte each in queue order, so that the next job
    small enough for some free range is found in C (`find`): in a long queue almost every job is
    larger than every free range, and testing them one by one in Python dominated.

    A byte holds `min(255, size // unit)` with `unit` chosen so that the platform's largest size
    fits; this is monotonic in the size, so a job whose byte exceeds the byte of `reach` is
    surely larger than `reach` (the converse is checked by the caller on the real size).
    (`bytes.translate` + `find` beats a regex scan and allocates nothing the GC tracks.)"""

    __slots__ = ("codes", "unit", "at_most", "kept", "counts", "present", "smallest")

    def __init__(self, nb_machines: int = 0) -> None:
        self.kept = not _COMPILED  # (compiled, nothing reads it: see `EasyBackfill._find`)
        self.codes = bytearray()
        # How many queued jobs ask for each size, and the smallest size asked (above every
        # size when the queue is empty): a pass in which no free range reaches it scans nothing.
        self.counts = [0] * (max(0, nb_machines) + 2)
        # present[s] == 1 iff counts[s]: the next smallest size is found by one C-level scan
        # (walking `counts` in Python cost up to the platform's size per queued job removed).
        self.present = bytearray(len(self.counts))
        self.smallest = len(self.counts)
        self.unit = max(1, -(-nb_machines // 255))
        self.at_most = [_AT_MOST[self.code(reach)] for reach in range(max(0, nb_machines) + 1)]

    def code(self, size: int) -> int:
        return min(255, max(0, size) // self.unit)

    def push(self, size: int) -> None:
        counts = self.counts
        if size >= len(counts):  # (only sizes up to the platform's are queued)
            self.present.extend(bytes(size + 1 - len(counts)))
            counts.extend([0] * (size + 1 - len(counts)))
        counts[size] += 1
        self.present[size] = 1
        if size < self.smallest:
            self.smallest = size
        if self.kept:
            self.codes.append(self.code(size))

    def remove(self, pos: int, size: int) -> None:
        counts = self.counts
        counts[size] -= 1
        if not counts[size]:
            self.present[size] = 0
            if size == self.smallest:
                first = self.present.find(1, size)
                self.smallest = len(counts) if first < 0 else first
        if self.kept:
            del self.codes[pos]

    def find(self, start: int, reach: int) -> int:
        """Index of the first job at or after `start` that may be no larger than `reach`, or -1."""
        return self.codes.translate(self.at_most[reach]).find(1, start)


class EasyBackfill(DecisionProcess):
    """pybatsim `easyBackfill` (EASY backfilling over contiguous machine ranges)."""

    # Every reply's `now` is the request's and every decision carries it (no CALL_ME_LATER):
    # `InProcess` may pass the reply on without checking it.
    replies_at_request_time: Final = True

    def __init__(self, *, shortcuts: bool = True, check_reservations: bool = False) -> None:
        self._shortcuts = shortcuts  # False only to cross-check the shortcuts in tests
        self._check_reservations = check_reservations  # True only in tests, see the docstring
        self.nb_checked_reservations = 0
        self._free = FreeList()
        self._free_mask = 0  # bit i set iff machine i is in a free range
        self._all_mask = 0  # every machine
        # The masks describe the machines exactly only while allocations never overlap and free
        # ranges never touch; `_start` checks the first (the second follows) and, should it ever
        # fail, `_reserve` falls back to releasing jobs into a copy of the free list.
        self._masks_exact = True
        self._nb_compute = 0
        self._nb_keys = 1  # the number of machines, as a key's base (`_start`)
        # The allocations given (a range: O(1) memory) and their masks, by first and last machine
        self._blocks: dict[int, tuple[range, int]] = {}
        self._waiting: list[_Job] = []
        self._sizes = _SizeIndex()  # sizes of `_waiting`, same order
        self._running: list[_Job] = []  # sorted by estimated end, ties in insertion order
        self._jobs: dict[str, _Job] = {}
        self._out: list[Decision] = []
        # `_survey` of the free list as of version `_surveyed` (most passes follow a submission
        # that changed nothing, so the survey of the previous pass still holds).
        self._surveyed = -1
        self._widest = 0  # size of the largest free range
        self._high_first = False  # whether some free range may carve from its high end
        # The last backfilling pass that changed nothing (see module docstring): free list
        # version, head job, number of queued jobs behind the head known not to fit.
        self._memo_version = -1
        self._memo_head: _Job | None = None
        self._memo_checked = 0
        # The reservation of `_held_head` (None: nothing held) and what keeps it valid (see
        # `_reserve`): the job whose release lets the head start, the free machines just
        # before that release, and the run of machines the head fits in, widened by one machine
        # on each side.
        self._held_head: _Job | None = None
        self._held_a = self._held_b = 0  # the reservation: machines a..b from `_held_start`
        self._held_start = 0.0
        self._held_job: _Job | None = None
        self._held_before = 0
        self._held_near = 0
        self._held_exact = False  # whether the head fills the run exactly (no side involved)

    # ------------------------------------------------------------------ protocol side

    def exchange(self, now: float, events: Sequence[Event]) -> Reply:
        out = self._out  # reused: fewer allocations, fewer garbage collections in here
        if isinstance(events, list):  # the engine's case: a compiled loop over a list
            for event in events:
                self._on_event(event, now, out)
        else:
            for i in range(len(events)):
                self._on_event(events[i], now, out)
        if not out:
            return Reply(now, ())
        decisions = tuple(out)
        out.clear()
        return Reply(now, decisions)

    def _on_event(self, event: Event, now: float, out: list[Decision]) -> None:
        if type(event) is JobSubmitted:  # (exact types first: a pointer comparison each)
            self._on_submitted(event, now, out)
        elif type(event) is JobCompleted:
            self._on_completed(event, now, out)
        elif isinstance(event, JobSubmitted):
            self._on_submitted(event, now, out)
        elif isinstance(event, JobCompleted):
            self._on_completed(event, now, out)
        elif isinstance(event, SimulationBegins):
            self._free = FreeList(event.nb_resources)
            self._free_mask = self._all_mask = (1 << max(0, event.nb_resources)) - 1
            self._sizes = _SizeIndex(event.nb_resources)
            self._nb_compute = event.nb_compute_resources
            self._nb_keys = max(1, event.nb_resources)
            self._blocks.clear()
            self._held_head = None

    def _on_submitted(self, event: JobSubmitted, now: float, out: list[Decision]) -> None:
        job = event.job
        req = job.res
        if req > self._nb_compute or req <= 0:
            out.append(RejectJob(now, job.id))
            return
        job_id = job.id
        record = _Job(job_id, req, job.walltime)
        self._jobs[job_id] = record
        self._waiting.append(record)
        self._sizes.push(req)
        self._schedule(now, out)

    def _on_completed(self, event: JobCompleted, now: float, out: list[Decision]) -> None:
        job_id = event.job_id
        job = self._jobs.pop(job_id, None)
        if job is None:
            return
        free = self._free
        surveyed = self._surveyed == free.version
        space = free.give_back(job.lo, job.hi)
        if surveyed:  # a merge only grows ranges (and `_high_first` may stay True by excess)
            self._surveyed = free.version
            self._widest = max(self._widest, space.hi - space.lo + 1)
            self._high_first = self._high_first or not space.low_first
        self._free_mask |= job.mask
        if self._held_head is not None:
            self._keep_held_after_end(job)
        running = self._running
        i = _after_end(running, job.end) - 1
        while running[i] is not job:
            i -= 1
        running.pop(i)
        self._schedule(now, out)

    # ------------------------------------------------------------------ the pass

    def _start(self, job: _Job, lo: int, now: float, out: list[Decision]) -> None:
        """Run `job` on machines `lo`.. from `now` (they were just taken from the free list)."""
        job.lo = lo
        job.hi = hi = lo + job.req - 1
        # A range and a mask per block of machines, kept: making the range (`range()`'s
        # generic call and argument checks) and the mask (three operations on long integers
        # beyond 62 machines, each a new object) cost more than the look-up.
        key = lo * self._nb_keys + hi
        kept = self._blocks.get(key)
        if kept is None:
            if len(self._blocks) >= _BLOCKS_KEPT:
                self._blocks.clear()  # (bounded: a few MB at most)
            kept = (range(lo, hi + 1), ((1 << (hi - lo + 1)) - 1) << lo)
            self._blocks[key] = kept
        block, mask = kept
        job.mask = mask
        free_mask = self._free_mask
        if free_mask & mask == mask:  # (few operations on these long integers)
            self._free_mask = free_mask ^ mask
        else:
            self._masks_exact = False
            self._held_head = None
            self._free_mask = free_mask & ~mask
        job.end = end = job.wall + now
        if self._held_head is not None:
            if end >= self._held_job.end:  # type: ignore[union-attr]
                if mask & self._held_near:
                    self._held_head = None
                else:
                    self._held_before &= ~mask  # released after the job the head waits for
            elif mask & self._held_near and not self._held_exact:
                self._held_head = None
        running = self._running
        running.insert(_after_end(running, end), job)
        out.append(ExecuteJob(now, job.id, block))

    def _survey(self) -> None:
        """Refresh `_widest` and `_high_first` if the free list changed since they were taken
        (most passes follow a submission that changed nothing)."""
        free = self._free
        if self._surveyed != free.version:
            self._surveyed = free.version
            widest = 0
            high_first = False
            space = free.first
            while space is not None:
                if space.hi - space.lo >= widest:
                    widest = space.hi - space.lo + 1
                if not space.low_first:
                    high_first = True
                space = space.next
            self._widest = widest
            self._high_first = high_first

    def _schedule(self, now: float, out: list[Decision]) -> None:
        waiting = self._waiting
        free = self._free
        self._survey()
        while waiting and waiting[0].req <= self._widest and free.first is not None:
            job = waiting[0]
            space = free.first
            # (`_widest` is surveyed: some range is large enough, `next` never runs out)
            while job.req > space.hi - space.lo + 1:
                space = space.next  # type: ignore[assignment]
            self._start(job, free.take(space, job.req), now, out)
            waiting.pop(0)
            self._sizes.remove(0, job.req)
            self._survey()
        if len(waiting) > 1:
            if self._shortcuts:
                self._backfill(now, out)
            else:
                self._backfill_plain(now, out)

    def _find(self, start: int, reach: int) -> int:
        """Index of the first queued job at or after `start` that may be no larger than `reach`,
        or -1: none when every queued job is larger; otherwise the jobs are tested one by one
        (compiled, or when few are left: after a submission usually only the new one), else
        through `_SizeIndex.find`'s C-level scan."""
        if reach < self._sizes.smallest:  # (no queued job is that small)
            return -1
        queue = self._waiting
        end = len(queue)
        if end - start > _SCAN_IN_C and not _COMPILED:
            return self._sizes.find(start, reach)
        while start < end:
            if queue[start].req <= reach:
                return start
            start += 1
        return -1

    def _backfill(self, now: float, out: list[Decision]) -> None:
        """The backfilling pass with the shortcuts of the module docstring."""
        free = self._free
        queue = self._waiting
        sizes = self._sizes
        head = queue[0]
        version = free.version
        if version == self._memo_version and head is self._memo_head:
            pos = self._find(1 + self._memo_checked, self._widest)
        else:
            pos = self._find(1, self._widest)
        if pos < 0 and not self._high_first:
            # No queued job is small enough for any free range, and no side can change.
            self._memo_version, self._memo_head, self._memo_checked = version, head, len(queue) - 1
            return

        self._reserve(head)
        a, b, start = self._held_a, self._held_b, self._held_start
        # pybatsim splits the free ranges holding the reservation's ends `a` and `b` for the pass
        # (`_split_for_reservation`). Ranges before them in list order are left alone by the
        # split, so it is done only once a job's first-fit search reaches one of them.
        touched: list[tuple] | None = None
        started = False
        reach = self._widest  # every range is no larger (the split adds only sub-ranges)
        while pos >= 0:
            job = queue[pos]
            req = job.req
            if req <= reach:
                wall = job.wall
                space = free.first
                while space is not None:
                    if touched is None and (space.lo <= a <= space.hi or space.lo <= b <= space.hi):
                        touched = self._split_for_reservation(a, b, start - now)
                    if req <= space.hi - space.lo + 1 and wall <= space.length:
                        self._start(job, free.take(space, req), now, out)
                        started = True
                        reach = _widest(free)
                        queue.pop(pos)
                        sizes.remove(pos, req)
                        pos -= 1  # the next job moved to `pos`
                        break
                    space = space.next
            pos = self._find(pos + 1, reach)
        if touched is not None:
            sides_changed = self._unsplit(touched)
        else:  # what the split and its undoing would have left: both ends carve from low
            sides_changed = self._high_first and _carve_low_at(free, a, b)
        if sides_changed:
            if not self._held_exact:
                self._held_head = None  # the reservation depends on these sides
            free.version = max(free.version, version + 1)  # a later pass must not reuse this one
        elif not started:
            # The list is exactly as before the pass and every queued job failed against it:
            # the next pass against this same list only needs to look at new jobs.
            free.version = version
            self._memo_version, self._memo_head, self._memo_checked = version, head, len(queue) - 1

    def _backfill_plain(self, now: float, out: list[Decision]) -> None:
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
                    self._start(job, free.take(space, job.req), now, out)
                    chosen_at.append(idx)
                    break
        self._unsplit(touched)
        for idx in reversed(chosen_at):
            self._sizes.remove(idx, queue[idx].req)
            del queue[idx]

    # ------------------------------------------------------------------ the reservation

    def _reservation_by_release(self, head: _Job) -> tuple[tuple[int, int], float]:
        """Where and when the head job would start if running jobs ended at their estimates,
        found as pybatsim does: releasing them in order into a copy of the free list."""
        trial = self._free.clone()
        for job in self._running:
            space = trial.give_back(job.lo, job.hi)
            if head.req <= space.size:
                first = trial.take(space, head.req)
                return (first, first + head.req - 1), job.end
        raise AssertionError(f"job {head.id} can never fit on the platform")

    def _reserve(self, head: _Job) -> None:
        self._reserve_by_masks(head)
        if self._check_reservations:
            found = (self._held_a, self._held_b), self._held_start
            plain = self._reservation_by_release(head)
            if found != plain:
                raise AssertionError(f"reservation of job {head.id}: {found} instead of {plain}")
            self.nb_checked_reservations += 1

    def _reserve_by_masks(self, head: _Job) -> None:
        """Set `_held_a`, `_held_b`, `_held_start` to the head's reservation, the same as
        `_reservation_by_release` finds but computed on bit masks without copying.

        Machines are either free or held by exactly one running job, and free ranges are the
        maximal runs of free machines. Releasing jobs in order, the head (which fits no free range
        now) first fits when the run of free machines around the job just released reaches its
        size; a cheap count of free machines skips the releases before that can happen. The head
        is then carved from that run on the side the release left it (`_side_after_release`).

        The result is held for later passes. It depends only on the free machines just before the
        awaited job's release (`_held_before`: no run there is long enough, and with that job
        they make the run), and on what happens inside the run: releases, free ranges and their
        sides. So it stays valid while the jobs that start or end keep off the run and the
        machine on either side of it (`_held_near`), a job ending before its estimate after the
        awaited one (so its machines join `_held_before`) does not make a run long enough there
        (`_keep_held_after_end`), and no side changes (`_backfill`). When the head fills the run
        exactly, sides do not matter, nor do jobs inside the run that are released before the
        awaited one (they leave `_held_before` as it is) (`_start`, `_keep_held_after_end`).
        """
        if head is self._held_head:
            return
        req = head.req
        if not self._masks_exact or req <= 0:
            (self._held_a, self._held_b), self._held_start = self._reservation_by_release(head)
            return
        # The head cannot fit before the free machines number `req`: skip the releases before
        # the first job whose release leaves at most `nb - req` machines busy. Usually the head
        # waits for the last job (counting from the end finds it at once).
        running = self._running
        may_stay_busy = self._all_mask.bit_count() - req
        first = len(running) - 1
        kept = 0
        kept_mask = 0  # the jobs after `first`
        while first > 0 and kept + running[first].req <= may_stay_busy:
            kept += running[first].req
            kept_mask |= running[first].mask
            first -= 1
        if first < 0:
            raise AssertionError(f"job {head.id} can never fit on the platform")
        # the free machines before `first` is released:
        state = self._all_mask ^ (kept_mask | running[first].mask)
        for t in range(first, len(running)):
            job = running[t]
            state |= job.mask
            lo, hi = job.lo, job.hi
            busy = ~state
            above = busy >> (hi + 1)  # the lowest set bit: the first busy machine above the job
            run_hi = hi + (above & -above).bit_length() - 1
            run_lo = (busy & ((1 << lo) - 1)).bit_length()
            if run_hi - run_lo + 1 >= req:
                before = state ^ job.mask
                # (an exact fit, the usual case, needs no side)
                self._held_exact = run_hi - run_lo + 1 == req
                if self._held_exact or self._side_after_release(t, before):
                    self._held_a = run_lo
                else:
                    self._held_a = run_hi - req + 1
                self._held_b = self._held_a + req - 1
                self._held_start = job.end
                self._held_head, self._held_job, self._held_before = head, job, before
                self._held_near = ((1 << (run_hi + 2)) - 1) ^ ((1 << max(0, run_lo - 1)) - 1)
                return
        raise AssertionError(f"job {head.id} can never fit on the platform")

    def _keep_held_after_end(self, job: _Job) -> None:
        """Keep or drop the held reservation now that `job` ended (see `_reserve`)."""
        mask = job.mask
        if mask & self._held_before:  # it was released before the job the head waits for
            if mask & self._held_near and not self._held_exact:
                self._held_head = None
        elif mask & self._held_near:
            self._held_head = None
        else:  # it was released after the job the head waits for, away from the run
            before = self._held_before | mask
            busy = ~before
            above = busy >> (job.hi + 1)
            run_hi = job.hi + (above & -above).bit_length() - 1
            run_lo = (busy & ((1 << job.lo) - 1)).bit_length()
            if run_hi - run_lo + 1 >= self._held_head.req:  # type: ignore[union-attr]
                self._held_head = None  # the head may now start earlier
            else:
                self._held_before = before

    def _side_after_release(self, t: int, before: int) -> bool:
        """`low_first` of the range that releasing `running[t]` into the free machines `before`
        yields, by `FreeList.give_back`'s rules: merged on the left only it carves from its high
        end; merged on both sides it keeps the side of the range on its left, which is the side
        left by the last release inside that range (or the side of the free range it is, if no
        release touched it); otherwise it carves from its low end."""
        running = self._running
        while True:
            job = running[t]
            lo, hi = job.lo, job.hi
            if not (lo > 0 and (before >> (lo - 1)) & 1):
                return True
            if not (before >> (hi + 1)) & 1:
                return False
            start = (~before & ((1 << (lo - 1)) - 1)).bit_length()  # of the range on the left
            for j in range(t - 1, -1, -1):
                before ^= running[j].mask  # now the free machines before `running[j]` is released
                if start <= running[j].lo < lo:  # a released job lies wholly in one range
                    t = j
                    break
            else:
                return self._side_of_free_range(start)

    def _side_of_free_range(self, start: int) -> bool:
        if not self._high_first:  # surveyed at this version in `_schedule`
            return True  # every free range carves from its low end
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


def _carve_low_at(free: FreeList, a: int, b: int) -> bool:
    """Make the free ranges holding machine `a` or `b` carve from their low end; True if one
    did not."""
    changed = False
    space = free.first
    while space is not None and space.lo <= b:
        if not space.low_first and (space.lo <= a <= space.hi or b <= space.hi):
            space.low_first = True
            changed = True
        space = space.next
    return changed


def _widest(free: FreeList) -> int:
    """Size of the largest free range."""
    widest = 0
    space = free.first
    while space is not None:
        if space.hi - space.lo >= widest:
            widest = space.hi - space.lo + 1
        space = space.next
    return widest


def _after_end(running: list[_Job], end: float) -> int:
    """Where a job ending at `end` goes in `running` (sorted by end): after the jobs ending no
    later (`bisect.bisect_right` on their ends, as a loop the compiler turns into C)."""
    lo = 0
    hi = len(running)
    while lo < hi:
        mid = (lo + hi) >> 1
        if end < running[mid].end:
            hi = mid
        else:
            lo = mid + 1
    return lo
