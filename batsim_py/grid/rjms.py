"""The grid's resource managers as one in-process decision process: one OAR per cluster.

The engine has one decision process; a grid has one local RJMS per cluster. `GridRjms` is
that decision process: it routes each event to the cluster the job belongs to and gathers
the decisions of every cluster's `OarCluster` (one scheduling pass per cluster that saw an
event), so several independent OARs run side by side on one engine, on disjoint machines.

Which cluster a job belongs to: a CiGri job is announced by CiGri before its submission
(`expect`, as the OAR API of the chosen cluster receives it); a local job belongs to the
cluster of its workload (`local_workloads`), in that workload's queue (`default` unless the
grid file or the job's own `queue` field says `admin` or `besteffort`).

CiGri acts on OAR through the engine too: `oardel` requests (Nikita's kills) arrive as generic
external events, `{"type": "oardel", "job_id": ..., "event": ...}`, posted by CiGri's event
source, so that they happen in the engine's rounds like every other decision.
"""

from __future__ import annotations

from collections.abc import Sequence

from batsim_py.decision.decisions import (
    CallMeLater,
    Decision,
    ExecuteJob,
    KillJob,
    RejectJob,
    Reply,
)
from batsim_py.decision.events import Event, JobCompleted, JobSubmitted, Notify, RequestedCall
from batsim_py.decision.interface import DecisionProcess
from batsim_py.grid.oar import QUEUES, OarCluster, OarJob


class GridRjms(DecisionProcess):
    def __init__(self, clusters: dict[str, OarCluster], local_workloads: dict[str, str],
                 local_queues: dict[str, str] | None = None) -> None:
        self.clusters = clusters
        self.local_workloads = local_workloads  # workload name -> cluster name
        self.local_queues = local_queues or {}
        self.cluster_of: dict[str, OarCluster] = {}
        self.expected: dict[str, tuple[str, str]] = {}  # CiGri job id -> (cluster, queue)
        self.local_jobs: list[tuple[str, OarJob]] = []  # (cluster, job) of local workloads
        self._asked: set[float] = set()

    def expect(self, job_id: str, cluster: str, queue: str) -> None:
        """CiGri is about to submit `job_id` to `cluster`'s OAR, in `queue`."""
        self.expected[job_id] = (cluster, queue)

    def job(self, job_id: str) -> OarJob | None:
        c = self.cluster_of.get(job_id)
        return None if c is None else c.jobs.get(job_id)

    def exchange(self, now: float, events: Sequence[Event]) -> Reply:
        decisions: list[Decision] = []
        for event in events:
            kind = type(event)
            if kind is JobSubmitted:
                self._submitted(event.job, now)  # type: ignore[union-attr]
            elif kind is JobCompleted:
                c = self.cluster_of.get(event.job_id)  # type: ignore[union-attr]
                if c is not None:
                    c.ended(event.job_id, event.job_state,  # type: ignore[union-attr]
                            event.return_code, now)  # type: ignore[union-attr]
            elif kind is Notify and event.type == "generic":  # type: ignore[union-attr]
                data = event.data or {}  # type: ignore[union-attr]
                if data.get("type") == "oardel":
                    job_id = str(data.get("job_id"))
                    c = self.cluster_of.get(job_id)
                    if c is None:
                        continue
                    what = c.delete(job_id, str(data.get("event", "")), now)
                    if what == "reject":
                        decisions.append(RejectJob(now, job_id))
                    elif what == "kill":
                        decisions.append(KillJob(now, (job_id,)))
            elif kind is RequestedCall:
                self._asked.discard(event.timestamp)
        for c in self.clusters.values():
            if c.dirty or (c.kills_due and c.kills_due[0][0] <= now):
                act = c.schedule(now)
                for job_id in act.rejects:
                    decisions.append(RejectJob(now, job_id))
                if act.kills:
                    decisions.append(KillJob(now, tuple(act.kills)))
                for job_id, alloc in act.starts:
                    decisions.append(ExecuteJob(now, job_id, alloc))
                for at in act.wakeups:
                    if at not in self._asked:
                        self._asked.add(at)
                        decisions.append(CallMeLater(now, at))
        return Reply(now, tuple(decisions))

    def _submitted(self, job: object, now: float) -> None:
        job_id: str = job.id  # type: ignore[attr-defined]
        expected = self.expected.pop(job_id, None)
        if expected is not None:
            cluster_name, queue = expected
            cigri = True
        else:
            workload = job.workload  # type: ignore[attr-defined]
            cluster_name = self.local_workloads[workload]
            queue = str(job.description.get("queue",  # type: ignore[attr-defined]
                                            self.local_queues.get(workload, "default")))
            if queue not in QUEUES:
                queue = "default"
            cigri = False
        c = self.clusters[cluster_name]
        oar = OarJob(job_id, queue, job.res, job.walltime, now)  # type: ignore[attr-defined]
        self.cluster_of[job_id] = c
        if cigri:
            c.cigri_jobs.add(job_id)
        else:
            self.local_jobs.append((cluster_name, oar))
        c.submit(oar, now)
