"""`fcfs`: the decisions of pybatsim 3.2.1's `schedFcfs` (batsim.sched `filler_sched` with
`abort_on_first_nonfitting` and the consecutive-resources filter), made in-process.

A pass walks the open jobs in submission order: a job whose dependencies are unmet is skipped;
a job that fits gets the lowest run of consecutive free machine ids long enough for it; a job
larger than the whole platform, or asking for no machine (`res` 0: Batsim loads it but refuses an
EXECUTE_JOB with an empty allocation), is rejected when the walk reaches it; the first other
job that does not fit ends the pass (strict FCFS). Walltimes play no role for a present-time
allocation.

Cost: pybatsim rebuilds its queue and scans the whole machine list on every attempt, which is
O(queue + machines) per pass (10,000 hosts x 100,000 jobs took minutes). The same decisions are
taken incrementally here:
- jobs whose dependencies are unmet are not in the walked queue at all (skipping them is all the
  walk would do); a count of unmet dependencies per job puts a job in, at its submission rank,
  when its last dependency completes;
- every job the walk passes is started or rejected, so the walked queue only loses its head:
  it is a list with a moving head index, compacted when the dead part outweighs the live one;
- free machines live in `FreeRuns`, which answers "first run of req consecutive free ids" in
  O(log req) operations on integers of one bit per machine and books or frees an allocation in
  one; a blocked head (no run long enough, nothing freed since) costs O(1).
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Mapping
from typing import Any

from batsim_py.decision.decisions import ExecuteJob, RejectJob
from batsim_py.decision.events import SimulationBegins
from batsim_py.schedulers.free_runs import FreeRuns
from batsim_py.schedulers.sched_common import SchedJob, SchedLayerScheduler

_COMPACT_AT = 1024  # dead queue entries tolerated before compaction is considered


def _seq(job: SchedJob) -> int:
    return job.seq


class Fcfs(SchedLayerScheduler):
    """pybatsim `schedFcfs`."""

    def __init__(self, *, sched_delay: float | None = None,
                 options: Mapping[str, Any] | None = None) -> None:
        super().__init__(sched_delay=sched_delay, options=options)
        self._queue: list[SchedJob] = []  # runnable open jobs by submission rank, from _head
        self._head = 0
        self._unmet: dict[int, int] = {}  # seq -> unmet dependencies (absent: runnable)
        self._waiters: dict[str, list[SchedJob]] = {}  # job id -> jobs waiting for it
        self._free = FreeRuns([])

    def on_begin(self, event: SimulationBegins) -> None:
        self._free = FreeRuns(self.machines)

    def on_job_submitted(self, job: SchedJob) -> None:
        unmet = 0
        if job.deps:
            workload = job.id.rsplit("!", 1)[0]
            for dep in job.deps:
                full = dep if "!" in dep else f"{workload}!{dep}"
                other = self.jobs.get(full)
                if other is None or other.state != "completed":
                    unmet += 1
                    self._waiters.setdefault(full, []).append(job)
        if unmet:
            self._unmet[job.seq] = unmet
        else:
            self._enqueue(job)

    def on_job_finished(self, job: SchedJob) -> None:
        self._free.release(job.alloc)
        for waiter in self._waiters.pop(job.id, ()):
            left = self._unmet[waiter.seq] - 1
            if left:
                self._unmet[waiter.seq] = left
            else:
                del self._unmet[waiter.seq]
                self._enqueue(waiter)

    def _enqueue(self, job: SchedJob) -> None:
        queue = self._queue
        if len(queue) == self._head or queue[-1].seq < job.seq:
            queue.append(job)
        else:  # a job whose dependencies just completed goes back to its submission rank
            insort(queue, job, lo=self._head, key=_seq)

    def schedule(self) -> None:
        queue = self._queue
        i, end = self._head, len(queue)
        if i == end:
            return
        free = self._free
        nb_machines = len(self.machines)
        now = self.time
        while i < end:
            job = queue[i]
            alloc = free.take(job.req) if job.subtime <= now else None
            if alloc is not None:
                job.alloc, job.state, job.start = alloc, "running", now  # (list order)
                if alloc.step < 0:  # (decisions carry ids in increasing order)
                    alloc = range(alloc[-1], alloc[0] + 1)
                self.emit(ExecuteJob(now, job.id, alloc))
            elif job.req > nb_machines or job.req <= 0:
                job.state = "rejected"
                self.emit(RejectJob(now, job.id))
            else:
                break
            i += 1
        if i > _COMPACT_AT and 2 * i > end:
            del queue[:i]
            i = 0
        self._head = i
