"""What a grid operator or researcher reads from a grid run (research §3.6 "Outputs and
metrics"): harvested utilisation, campaign makespans, damage to local jobs, wasted work.

Utilisations are shares of the machine-seconds of the whole grid over a horizon, by default
[0, end of the last local job]: the horizon of the same grid without CiGri, so that a run
with CiGri and its baseline are compared over the same window (CiGri's work after the local
load is over would otherwise inflate it). Work is machine-seconds (`res` × run time): one
machine is one OAR resource.
"""

from __future__ import annotations

from typing import Any

from batsim_py.grid.oar import OarJob


def _clipped(job: OarJob, horizon: float) -> float:
    if job.start < 0:
        return 0.0
    stop = job.stop if job.stop >= 0 else horizon
    return max(0.0, min(stop, horizon) - min(job.start, horizon)) * job.res


def local_horizon(run: Any) -> float:
    ends = [j.stop for _, j in run.rjms.local_jobs if j.stop >= 0]
    return max(ends) if ends else run.end_time


def campaign_rows(run: Any) -> list[dict[str, Any]]:
    """One row per campaign (cigri_campaigns.csv)."""
    cigri = run.cigri
    if cigri is None:
        return []
    rows = []
    for camp in cigri.campaigns:
        cid = camp.spec.id
        jobs = [j for j in cigri.jobs if j.task.campaign == cid]
        starts, useful, wasted = [], 0.0, 0.0
        causes = {"BESTEFFORT_KILL": 0, "WALLTIME": 0, "REMOTE_WAITING_FRAG": 0, "EXIT_66": 0,
                  "EXIT_67": 0}
        for j in jobs:
            o = run.rjms.job(j.oar_id)
            if o is None:
                continue
            if o.start >= 0:
                starts.append(o.start)
            work = (o.stop - o.start) * o.res if o.start >= 0 and o.stop >= 0 else 0.0
            if j.state == "terminated" and not j.event:
                useful += work
            else:
                wasted += work
            if j.resubmitted and j.event in causes:
                causes[j.event] += 1
        done = sum(1 for t in cigri.tasks if t.campaign == cid and t.state == "done")
        failed = sum(1 for t in cigri.tasks if t.campaign == cid and t.state == "failed")
        sub = camp.spec.submission_time
        end = camp.last_end if camp.state == "terminated" else -1.0
        rows.append({
            "campaign": camp.spec.name, "user": camp.spec.user, "submission_time": sub,
            "first_start": min(starts) if starts else -1.0, "completion_time": end,
            "makespan": end - sub if end >= 0 else -1.0, "seen_over_by_cigri": camp.end_seen,
            "state": camp.state, "nb_tasks": camp.spec.nb_tasks, "tasks_done": done,
            "tasks_failed": failed, "nb_jobs": len(jobs),
            "resubmissions": sum(1 for j in jobs if j.resubmitted),
            "besteffort_kills": causes["BESTEFFORT_KILL"], "walltime_kills": causes["WALLTIME"],
            "remote_waiting_frags": causes["REMOTE_WAITING_FRAG"],
            "exit_66": causes["EXIT_66"], "exit_67": causes["EXIT_67"],
            "useful_work": useful, "wasted_work": wasted,
            "throughput": done / (end - sub) if end > sub else 0.0,
        })
    return rows


def campaign_window(run: Any) -> tuple[float, float] | None:
    """[first campaign submission, last campaign completion]: when CiGri had work."""
    rows = [r for r in campaign_rows(run) if r["completion_time"] >= 0]
    if not rows:
        return None
    return (min(r["submission_time"] for r in rows), max(r["completion_time"] for r in rows))


def _window_work(jobs: list[OarJob], t0: float, t1: float) -> float:
    total = 0.0
    for j in jobs:
        if j.start < 0:
            continue
        stop = j.stop if j.stop >= 0 else t1
        total += max(0.0, min(stop, t1) - max(j.start, t0)) * j.res
    return total


def grid_metrics(run: Any, horizon: float | None = None,
                 window: tuple[float, float] | None = None) -> dict[str, Any]:
    """The run's figures (see the module docstring); `horizon` defaults to the local one,
    `window` (utilisations over it too) to the campaigns' (`campaign_window`)."""
    if horizon is None:
        horizon = local_horizon(run)
    if window is None:
        window = campaign_window(run)
    capacity = sum(len(c.machines) for c in run.clusters.values()) * horizon
    local = [j for _, j in run.rjms.local_jobs]
    cigri_ids = set().union(*(c.cigri_jobs for c in run.rjms.clusters.values()))
    cigri_jobs = [run.rjms.job(i) for i in sorted(cigri_ids)]
    local_work = sum(_clipped(j, horizon) for j in local)
    cigri_work = sum(_clipped(j, horizon) for j in cigri_jobs if j is not None)
    started = [j for j in local if j.start >= 0]
    waits = [j.start - j.submit for j in started]
    kill_waits = [j.start - j.released for j in started]
    out: dict[str, Any] = {
        "horizon": horizon,
        "end_time": run.end_time,
        "machines": sum(len(c.machines) for c in run.clusters.values()),
        "utilisation": (local_work + cigri_work) / capacity if capacity else 0.0,
        "local_utilisation": local_work / capacity if capacity else 0.0,
        "cigri_utilisation": cigri_work / capacity if capacity else 0.0,
        "local_jobs": len(local),
        "local_jobs_rejected": sum(1 for j in local if j.event == "TOO_BIG_FOR_CLUSTER"),
        "local_mean_waiting_time": sum(waits) / len(waits) if waits else 0.0,
        "local_max_kill_wait": max(kill_waits, default=0.0),
        "local_jobs_that_killed": sum(1 for j in started if j.nb_killed),
        "cigri_jobs": len(cigri_jobs),
        "wall_seconds": run.wall,
    }
    if window is not None and window[1] > window[0]:
        t0, t1 = window
        cap = out["machines"] * (t1 - t0)
        lw = _window_work(local, t0, t1)
        cw = _window_work([j for j in cigri_jobs if j is not None], t0, t1)
        out.update({"window_start": t0, "window_end": t1,
                    "window_utilisation": (lw + cw) / cap,
                    "window_local_utilisation": lw / cap,
                    "window_cigri_utilisation": cw / cap})
    rows = campaign_rows(run)
    if rows:
        out["campaign_makespans"] = {r["campaign"]: r["makespan"] for r in rows}
        out["besteffort_kills"] = sum(r["besteffort_kills"] for r in rows)
        out["remote_waiting_frags"] = sum(r["remote_waiting_frags"] for r in rows)
        out["useful_work"] = sum(r["useful_work"] for r in rows)
        out["wasted_work"] = sum(r["wasted_work"] for r in rows)
    return out
