"""The scheduler's view of the resources: ranks, cores, up/down, who holds what.

Built from the first `resource.acquire` response (RFC 28: the inventory R and the `up` idset).
Allocation is flux-core's `Rv1Pool` policy as documented there (not its code): candidates are
the up ranks with enough free cores (all of them for an exclusive node), sorted by free cores,
most first (worst-fit), ties in rank order; a node request takes the first candidates, a slot
request packs as many slots as fit on each candidate in turn. A request that no pool state
could ever satisfy raises `InfeasibleRequest` ("unsatisfiable request: ...", the text
sched-simple's DENY carries); one that must wait raises `InsufficientResources`.
"""

from __future__ import annotations

import copy
from typing import Any

from batsim_py.protocol.flux import idset, rv1
from batsim_py.protocol.flux.jobspec import Request


class InsufficientResources(Exception):
    """Not now: the request fits the pool, not its free part."""


class InfeasibleRequest(Exception):
    """Never: the request exceeds what the pool holds."""


class ResourcePool:
    def __init__(self, R: dict[str, Any], up: str | None = None) -> None:
        assignment = rv1.parse(R, "resource.acquire")
        names = []
        for entry in R["execution"].get("nodelist", []):
            names.extend(idset.expand_hostlist(entry))
        ranks = sorted(assignment)
        self.hostnames = {r: (names[i] if i < len(names) else f"rank{r}")
                          for i, r in enumerate(ranks)}
        self.cores: dict[int, tuple[int, ...]] = dict(assignment)
        self.allocated: dict[int, set[int]] = {r: set() for r in ranks}
        up_ranks = set(idset.decode(up)) if up is not None else set(ranks)
        self.up: dict[int, bool] = {r: r in up_ranks for r in ranks}
        self.jobs: dict[int, tuple[float, rv1.Assignment]] = {}  # id -> (end time, resources)
        self.nfree: dict[int, int] = {r: len(c) for r, c in self.cores.items()}
        self._feasible: set[Any] = set()  # requests known to fit the inventory

    # --------------------------------------------------------------- state
    def mark_up(self, ids: str) -> None:
        for r in idset.decode(ids):
            if r in self.up:
                self.up[r] = True

    def mark_down(self, ids: str) -> None:
        for r in idset.decode(ids):
            if r in self.up:
                self.up[r] = False

    def register_alloc(self, jobid: int, assignment: rv1.Assignment, end: float = 0.0) -> None:
        for rank, cores in assignment.items():
            held = self.allocated[rank]
            held.update(cores)
            self.nfree[rank] = len(self.cores[rank]) - len(held)
        self.jobs[jobid] = (end, assignment)

    def free(self, jobid: int, assignment: rv1.Assignment | None = None) -> None:
        """Release `assignment` (default: all the job holds)."""
        end, held = self.jobs.pop(jobid, (0.0, {}))
        for rank, cores in (assignment or held).items():
            if rank in self.allocated:
                self.allocated[rank].difference_update(cores)
                self.nfree[rank] = len(self.cores[rank]) - len(self.allocated[rank])

    def update_expiration(self, jobid: int, end: float) -> None:
        if jobid in self.jobs:
            self.jobs[jobid] = (end, self.jobs[jobid][1])

    def job_end_times(self) -> list[tuple[int, float]]:
        return [(j, end) for j, (end, _) in self.jobs.items()]

    def copy(self) -> ResourcePool:
        """An independent copy of the allocation state (the inventory is shared: it never
        changes), cheap enough for a forecast per scheduling pass."""
        other = copy.copy(self)
        other.allocated = {r: set(c) for r, c in self.allocated.items()}
        other.nfree = dict(self.nfree)
        other.up = dict(self.up)
        other.jobs = dict(self.jobs)
        return other

    def free_cores(self, rank: int) -> list[int]:
        held = self.allocated[rank]
        return [c for c in self.cores[rank] if c not in held]

    # --------------------------------------------------------------- alloc
    def alloc(self, jobid: int, request: Request, end: float = 0.0) -> rv1.Assignment:
        """Allocate `request` to `jobid` (worst-fit) or raise why not."""
        candidates = []
        for rank, nfree in self.nfree.items():  # (in rank order)
            if not self.up[rank]:
                continue
            if nfree >= (len(self.cores[rank]) if request.exclusive else request.cores):
                candidates.append((rank, nfree))
        candidates.sort(key=lambda c: c[1], reverse=True)  # stable: ties in rank order
        selected: rv1.Assignment = {}
        if request.nnodes:
            per_node = request.nslots * request.cores
            for rank, nfree in candidates:
                if len(selected) == request.nnodes:
                    break
                if request.exclusive:
                    if nfree < len(self.cores[rank]) or nfree < per_node:
                        continue
                    selected[rank] = self.cores[rank]
                elif nfree >= per_node:
                    selected[rank] = tuple(self.free_cores(rank)[:per_node])
            if len(selected) < request.nnodes:
                self.check_feasibility(request)
                raise InsufficientResources("insufficient resources")
        else:
            slots = 0
            for rank, nfree in candidates:
                if slots == request.nslots:
                    break
                take = min(nfree // request.cores, request.nslots - slots)
                if take:
                    selected[rank] = tuple(self.free_cores(rank)[:take * request.cores])
                    slots += take
            if slots < request.nslots:
                self.check_feasibility(request)
                raise InsufficientResources("insufficient resources")
        selected = dict(sorted(selected.items()))
        self.register_alloc(jobid, selected, end)
        return selected

    def check_feasibility(self, request: Request) -> None:
        """Raise `InfeasibleRequest` if no state of this pool could satisfy `request`."""
        if request in self._feasible:
            return
        if request.gpus:
            raise InfeasibleRequest(f"unsatisfiable request: need {request.gpus} GPU(s) per "
                                    "slot, the pool has none")
        sizes = [len(c) for c in self.cores.values()]
        if request.nnodes:
            per_node = request.nslots * request.cores
            eligible = sum(1 for s in sizes if s >= per_node)
            if eligible < request.nnodes:
                raise InfeasibleRequest(
                    f"unsatisfiable request: need {request.nnodes} node(s) with {per_node} "
                    f"cores each, only {eligible} eligible")
            self._feasible.add(request)
            return
        slots = sum(s // request.cores for s in sizes)
        if slots < request.nslots:
            raise InfeasibleRequest(
                f"unsatisfiable request: need {request.nslots} slot(s) of {request.cores} "
                f"core(s), only {slots} such slot(s) available (total cores: {sum(sizes)})")
        self._feasible.add(request)

    def status(self) -> dict[str, dict[str, Any]]:
        """`{all, allocated, down}` as R objects: the answer to `sched.resource-status`
        (down ranks with all their cores, as flux-core's pool copies them)."""
        allocated = {r: tuple(sorted(c)) for r, c in self.allocated.items() if c}
        down = {r: self.cores[r] for r, up in self.up.items() if not up}
        return {"all": self.to_R(self.cores), "allocated": self.to_R(allocated),
                "down": self.to_R(down)}

    def to_R(self, assignment: rv1.Assignment, starttime: float = 0.0,
             expiration: float = 0.0) -> dict[str, Any]:
        ranks = sorted(self.cores)
        names = [self.hostnames[r] for r in ranks]
        # rv1.build indexes host names by rank
        by_rank = {r: names[i] for i, r in enumerate(ranks)}
        hosts = [by_rank.get(r, f"rank{r}") for r in range(max(ranks) + 1)]
        return rv1.build(assignment, hosts, starttime, expiration)
