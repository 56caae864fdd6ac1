"""One grid simulation: the platform's clusters, one OAR each, their local workloads, CiGri.

It is an ordinary batsim-py simulation (`batsim_py.Simulator`, the engine unchanged): the
decision process is `GridRjms` (every cluster's OAR), the local workloads are its workloads
(`w0`, `w1`, ... in the grid file's cluster order), and CiGri is a set of SimPy processes with
a job source named `cigri` (its jobs are `cigri!1`, `cigri!2`, ...) and an event source for
its `oardel` requests. `run_grid(..., with_cigri=False)` is the same grid without CiGri:
the baseline of the harvesting metrics.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from batsim_py.errors import GridError
from batsim_py.grid.cigri import Cigri
from batsim_py.grid.inputs import GridSpec, check_clusters, load_grid
from batsim_py.grid.oar import OarCluster
from batsim_py.grid.platform import GridCluster, grid_clusters
from batsim_py.grid.rjms import GridRjms
from batsim_py.workload.model import Workload


@dataclass
class GridRun:
    spec: GridSpec
    clusters: dict[str, GridCluster]
    rjms: GridRjms
    cigri: Cigri | None
    results: Any  # batsim_py.api.Results
    wall: float  # seconds of wall-clock time

    @property
    def end_time(self) -> float:
        return float(self.results.end_time)


def _local_workload(path: str, name: str) -> Workload:
    if path.lower().endswith(".swf"):
        from batsim_py.workload.reader import absolute_path, parse_workload
        from batsim_py.workload.swf import swf_to_json

        conv = swf_to_json(path, shift_subtimes=False)
        return parse_workload(conv.data, name=name, path=absolute_path(path), source=path,
                              owned=True)
    from batsim_py.workload.reader import load_workload

    return load_workload(path, name)


def run_grid(spec: GridSpec | str, *, with_cigri: bool = True, export: str | None = None,
             until: float | None = None) -> GridRun:
    """Simulate the grid of `spec` (a grid description or its path)."""
    from batsim_py.api import Simulator

    t0 = time.perf_counter()
    if isinstance(spec, str):
        spec = load_grid(spec)
    workloads: list[Workload] = []
    local: dict[str, str] = {}
    queues: dict[str, str] = {}
    for c in spec.clusters:
        if c.workload is None:
            continue
        name = f"w{len(workloads)}"
        workloads.append(_local_workload(c.workload, name))
        local[name] = c.name
        queues[name] = c.queue
    rjms = GridRjms({}, local, queues)
    sim = Simulator(spec.platform, workloads, scheduler=rjms, timing=spec.timing,
                    export=export, master_host=spec.master_host)
    clusters = grid_clusters(sim.sim.machines, spec.platform)
    described = {c.name: c for c in spec.clusters}
    missing = [n for n in described if n not in clusters]
    if missing:
        raise GridError(f"{spec.path}: cluster(s) {', '.join(missing)} not in the platform "
                        f"{spec.platform} (its clusters: {', '.join(clusters)})")
    check_clusters(spec, list(clusters))
    for name, gc in clusters.items():
        setting = described.get(name)
        rjms.clusters[name] = OarCluster(name, gc.machines,
                                         setting.policy if setting else "easy",
                                         setting.kill_delay if setting else 0.0)
    for camp in spec.campaigns:
        for cname, settings in camp.clusters.items():
            if settings.resources > len(clusters[cname].machines):
                raise GridError(
                    f"{spec.path}: campaign '{camp.name}': {settings.resources} resources per "
                    f"job on cluster '{cname}', which has {len(clusters[cname].machines)}; "
                    f"give it 'resources' of at most {len(clusters[cname].machines)}")
    cigri = None
    if with_cigri and spec.campaigns:
        cigri = Cigri(spec, rjms, sim)
        cigri.start()
    results = sim.run(until=until)
    run = GridRun(spec, clusters, rjms, cigri, results, time.perf_counter() - t0)
    if export is not None:
        from batsim_py.grid.outputs import write_outputs

        write_outputs(run, export)
    return run
