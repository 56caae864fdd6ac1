"""The files of a grid run, beside Batsim's usual ones (`PREFIX_jobs.csv`, ...):

- `PREFIX_cigri_campaigns.csv`: one row per campaign (makespan, jobs, resubmissions by
  cause, useful and wasted work);
- `PREFIX_cigri_jobs.csv`: one row per OAR submission of a CiGri task, with OAR's dates and
  final state, the event that ended it and whether the task was resubmitted;
- `PREFIX_cigri_taps.csv`: every change of a tap (or each cycle's job count of the ratio and
  PI controls);
- `PREFIX_grid_usage.csv`: updator.rb's `grid_usage`: every 60 s, per cluster, max, used,
  used_by_cigri and unavailable resources;
- `PREFIX_grid_local_jobs.csv`: the local jobs per cluster: submission, when OAR's planner
  released them, start (later than the release only by best-effort kills), end;
- `PREFIX_grid_metrics.json`: `metrics.grid_metrics`.

Times are printed with `repr` of floats (exact), CSV through the standard `csv` module.
"""

from __future__ import annotations

import csv
import json
from typing import Any

from batsim_py.errors import OutputError
from batsim_py.grid.metrics import campaign_rows, grid_metrics


def _write(path: str, header: list[str], rows: list[list[Any]] | list[tuple]) -> None:
    try:
        with open(path, "w", encoding="utf-8", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(header)
            w.writerows(rows)
    except OSError as e:
        raise OutputError(f"{path}: cannot write: {e.strerror or e}") from None


def write_outputs(run: Any, prefix: str, metrics: dict[str, Any] | None = None) -> list[str]:
    paths = []
    cigri = run.cigri
    local = [[j.id, c, j.queue, j.res, j.submit, j.released, j.start, j.stop,
              j.start - j.submit if j.start >= 0 else -1.0,
              j.start - j.released if j.start >= 0 else -1.0, j.nb_killed, j.state, j.event]
             for c, j in run.rjms.local_jobs]
    path = f"{prefix}_grid_local_jobs.csv"
    _write(path, ["job_id", "cluster", "queue", "res", "submission_time", "released_time",
                  "starting_time", "finish_time", "waiting_time", "kill_wait",
                  "besteffort_jobs_killed", "oar_state", "event"], local)
    paths.append(path)
    if cigri is not None:
        rows = campaign_rows(run)
        path = f"{prefix}_cigri_campaigns.csv"
        header = list(rows[0]) if rows else ["campaign"]
        _write(path, header, [list(r.values()) for r in rows])
        paths.append(path)
        jobs = []
        for j in cigri.jobs:
            o = run.rjms.job(j.oar_id)
            camp = cigri.campaign(j.task.campaign).spec.name
            start = o.start if o is not None else -1.0
            stop = o.stop if o is not None else -1.0
            work = (stop - start) * o.res if o is not None and start >= 0 and stop >= 0 else 0.0
            jobs.append([j.id, j.oar_id, camp, j.task.index, j.cluster,
                         "besteffort" if j.besteffort else "default", j.priority,
                         j.queuing_date, j.submission_time, start, stop, o.state if o else "",
                         j.event or (o.event if o else ""), j.state, int(j.resubmitted), work])
        path = f"{prefix}_cigri_jobs.csv"
        _write(path, ["job_id", "oar_job_id", "campaign", "task", "cluster", "queue",
                      "priority", "queuing_date", "submission_time", "start_time",
                      "stop_time", "oar_state",
                      "event", "cigri_state", "resubmitted", "work"], jobs)
        paths.append(path)
        path = f"{prefix}_cigri_taps.csv"
        _write(path, ["time", "cluster", "campaign", "rate", "state", "why"], cigri.tap_rows)
        paths.append(path)
        path = f"{prefix}_grid_usage.csv"
        _write(path, ["time", "cluster", "max", "used", "used_by_cigri", "unavailable"],
               cigri.usage_rows)
        paths.append(path)
    path = f"{prefix}_grid_metrics.json"
    try:
        with open(path, "w", encoding="utf-8") as f:
            figures = dict(metrics or grid_metrics(run))
            figures.pop("wall_seconds", None)  # the file stays byte-identical between runs
            json.dump(figures, f, indent=1, sort_keys=True)
            f.write("\n")
    except OSError as e:
        raise OutputError(f"{path}: cannot write: {e.strerror or e}") from None
    paths.append(path)
    return paths
