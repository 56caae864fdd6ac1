"""A plain reference for the `easy` scheduler, written for the tests from the rules of
pybatsim 3.2.1's `easyBackfill` (`research/pybatsim-compat.md`), with none of the shipped
scheduler's shortcuts: no masks, no memos, no held reservation, no size index. Each pass does
everything again from scratch, so it is slow and easy to check by reading.

The rules, as pybatsim applies them:
- machines are `nb_resources` ids kept as an ordered list of free ranges; each range has a
  length (how long it stays free, infinite outside a backfilling pass) and a side to carve jobs
  from (low end first by default);
- a job asking for more than the compute machines, or for none, is rejected at submission;
- after every submission and completion: while the queue's head fits a free range (first range
  in list order at least as large), it starts there; then, if two or more jobs wait, the head is
  reserved and every other waiting job, in queue order, starts in the first range large enough
  whose length is at least its walltime;
- the head's reservation: running jobs are released in order of estimated end (start +
  walltime; ties in the order they started) into a copy of the free ranges; the first range
  made large enough takes the head (on its side): that is where, and the released job's end is
  when;
- for the pass, the free ranges holding the reservation's first and last machines are
  shortened to the time left until the reservation, and their parts outside it are offered as
  extra ranges of infinite length (linked to the shortened range: taking from one shrinks the
  other), placed just after the range they come from; after the pass the extra ranges go and
  every range touched is infinite again and carves from its low end;
- releasing a job's range merges it with free neighbours: merged with the range below it, the
  range carves from its high end next time; merged with the range above only, from its low end.
All decisions carry the request's time.
"""

from __future__ import annotations

from collections.abc import Sequence

from batsim_py.decision.decisions import Decision, ExecuteJob, RejectJob, Reply
from batsim_py.decision.events import Event, JobCompleted, JobSubmitted, SimulationBegins
from batsim_py.decision.interface import DecisionProcess

INF = float("inf")


class Range:
    def __init__(self, first: int, last: int, length: float = INF) -> None:
        self.first = first
        self.last = last
        self.length = length
        self.low_first = True
        self.linked: Range | None = None

    @property
    def size(self) -> int:
        return self.last - self.first + 1

    def copy(self) -> Range:
        r = Range(self.first, self.last, self.length)
        r.low_first = self.low_first
        return r


class Free:
    """The ordered list of free ranges (a Python list: plain, slow, obvious)."""

    def __init__(self, ranges: list[Range]) -> None:
        self.ranges = ranges

    def take(self, r: Range, n: int) -> tuple[int, int]:
        """Carve `n` machines from `r` on its side; returns (first, last)."""
        if r.low_first:
            alloc = (r.first, r.first + n - 1)
            r.first += n
            if r.linked is not None and r.linked.first <= alloc[1]:
                r.linked.first = alloc[1] + 1
        else:
            alloc = (r.last - n + 1, r.last)
            r.last -= n
            if r.linked is not None and r.linked.last >= alloc[0]:
                r.linked.last = alloc[0] - 1
        if r.size == 0:
            self.ranges.remove(r)
        if r.linked is not None and r.linked in self.ranges and r.linked.size <= 0:
            self.ranges.remove(r.linked)
        return alloc

    def release(self, first: int, last: int) -> Range:
        """Give back machines first..last; returns the range now holding them."""
        below = [r for r in self.ranges if r.first <= first]
        above = [r for r in self.ranges if r.first > first]
        lo = below[-1] if below else None
        hi = above[0] if above else None
        join_lo = lo is not None and lo.last + 1 == first
        join_hi = hi is not None and hi.first - 1 == last
        if join_lo and join_hi:
            assert lo is not None and hi is not None
            lo.last = hi.last
            self.ranges.remove(hi)
            return lo
        if join_lo:
            assert lo is not None
            lo.last = last
            lo.low_first = False
            return lo
        if join_hi:
            assert hi is not None
            hi.first = first
            hi.low_first = True
            return hi
        new = Range(first, last)
        self.ranges.insert(len(below), new)
        return new


class Job:
    def __init__(self, job_id: str, req: int, wall: float) -> None:
        self.id = job_id
        self.req = req
        self.wall = wall
        self.alloc = (0, 0)
        self.end = 0.0


class ReferenceEasy(DecisionProcess):
    def __init__(self) -> None:
        self.free = Free([])
        self.nb_compute = 0
        self.waiting: list[Job] = []
        self.running: list[Job] = []  # by estimated end, ties in start order
        self.jobs: dict[str, Job] = {}
        self.out: list[Decision] = []

    def exchange(self, now: float, events: Sequence[Event]) -> Reply:
        self.out = []
        for event in events:
            if isinstance(event, SimulationBegins):
                self.free = Free([Range(0, event.nb_resources - 1)])
                self.nb_compute = event.nb_compute_resources
            elif isinstance(event, JobSubmitted):
                job = event.job
                if job.res > self.nb_compute or job.res <= 0:
                    self.out.append(RejectJob(now, job.id))
                    continue
                record = Job(job.id, job.res, job.description.get("walltime", -1))
                self.jobs[job.id] = record
                self.waiting.append(record)
                self.schedule(now)
            elif isinstance(event, JobCompleted):
                ended = self.jobs.pop(event.job_id, None)
                if ended is None:
                    continue
                self.free.release(*ended.alloc)
                self.running.remove(ended)
                self.schedule(now)
        return Reply(now, tuple(self.out))

    def start(self, job: Job, alloc: tuple[int, int], now: float) -> None:
        job.alloc = alloc
        job.end = now + job.wall
        at = len([j for j in self.running if j.end <= job.end])
        self.running.insert(at, job)
        self.out.append(ExecuteJob(now, job.id, tuple(range(alloc[0], alloc[1] + 1))))

    def schedule(self, now: float) -> None:
        while self.waiting:
            head = self.waiting[0]
            fit = next((r for r in self.free.ranges if head.req <= r.size), None)
            if fit is None:
                break
            self.start(head, self.free.take(fit, head.req), now)
            self.waiting.pop(0)
        if len(self.waiting) > 1:
            self.backfill(now)

    def reservation(self, head: Job) -> tuple[tuple[int, int], float]:
        trial = Free([r.copy() for r in self.free.ranges])
        for job in self.running:
            r = trial.release(*job.alloc)
            if head.req <= r.size:
                return trial.take(r, head.req), job.end
        raise AssertionError("the head can never fit")

    def backfill(self, now: float) -> None:
        head = self.waiting[0]
        (a, b), start = self.reservation(head)
        window = start - now
        touched: list[Range] = []
        extra: list[Range] = []
        ranges = self.free.ranges
        i = 0
        first_done = False
        while i < len(ranges):
            r = ranges[i]
            if not first_done and r.first == a:
                r.length = window
                touched.append(r)
                first_done = True
            elif not first_done and r.first < a <= r.last:
                part = Range(r.first, a - 1)
                part.low_first, r.low_first = True, False
                part.linked, r.linked = r, part
                ranges.insert(i + 1, part)
                extra.append(part)
                r.length = window
                touched.append(r)
                first_done = True
            if r.last == b:
                r.length = window
                touched.append(r)
            elif r.first <= b < r.last:
                part = Range(b + 1, r.last)
                part.low_first, r.low_first = False, True
                part.linked, r.linked = r, part
                ranges.insert(i + 1, part)
                extra.append(part)
                r.length = window
                touched.append(r)
                break
            i += 1
        started = []
        for job in self.waiting[1:]:
            fit = next((r for r in self.free.ranges
                        if job.req <= r.size and job.wall <= r.length), None)
            if fit is not None:
                self.start(job, self.free.take(fit, job.req), now)
                started.append(job)
        for job in started:
            self.waiting.remove(job)
        for part in extra:
            assert part.linked is not None
            part.linked.linked = None
            part.linked = None
            if part in ranges:
                ranges.remove(part)
        for r in touched:
            r.length = INF
            r.low_first = True
