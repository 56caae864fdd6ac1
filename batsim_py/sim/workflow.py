"""Workflow submitters (`-W`, `--WS`): Batsim 4.2.1's `workflow_submitter_process`.

One actor per workflow on the master host, created after the workloads' submitters and
before the event submitters. It says hello, sleeps until the workflow's start time, then
submits each ready task as a job of its own (one JOB_SUBMITTED message per task, at most
`--workflow-jobs-limit` of them unfinished at a time) and waits on its mailbox
`<workflow>_submitter` for the server's callback of each completion; a task is ready once
every parent completed. When nothing is ready or running it says goodbye.

What the jobs look like follows from how Batsim makes them: it writes a JSON text with
`std::to_string` (six decimals) and parses it back, so a job's subtime and walltime are the
clock and `runtime + 10` rounded to the microsecond (then read as RapidJSON reads them),
while its `delay` profile `<workflow>_<task id>` keeps the full-precision runtime. Ids are
`<workflow>!<n>`, `n` counting the workflow's submissions from 0.

The server's side (sim/simulation.py): it remembers which jobs came from a workflow and, on
each one's JOB_COMPLETED, first sends the callback to the submitter's mailbox (a blocking
1-byte message: the server waits for the submitter to receive it, and only then stamps the
completion), as `server_on_job_completed` does.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

from batsim_py.errors import WorkloadError
from batsim_py.rapidjson_number import rapidjson_double
from batsim_py.sim.engine import GET_FROM, PUT, SLEEP
from batsim_py.workload.dax import Task, Workflow
from batsim_py.workload.jobs import parse_job
from batsim_py.workload.model import DelayProfile, Job, Workload

if TYPE_CHECKING:
    from batsim_py.sim.simulation import Simulation


def workflow_workload(workflow: Workflow) -> Workload:
    """The workload Batsim creates for a workflow: its name, the DAX's path, no jobs yet (its
    jobs and profiles appear as tasks are submitted; SIMULATION_BEGINS lists it empty)."""
    return Workload(workflow.name, workflow.path, 0, (), {})


def mailbox_of(workflow: Workflow) -> str:
    return f"{workflow.name}_submitter"


def task_job(workflow: Workflow, number: int, task: Task, now: float) -> tuple[Job, DelayProfile]:
    """The job and profile Batsim's `submit_workflow_task_as_job` makes for `task` at `now`."""
    profile_name = f"{workflow.name}_{task.id}"
    delay_text = f"{task.runtime:f}"  # std::to_string
    profile = DelayProfile(profile_name, 0, {"type": "delay", "delay": rapidjson_double(
        delay_text)}, task.runtime)
    walltime_text = f"{task.runtime + 10.0:f}"
    subtime_text = f"{now:f}"
    job_id = f"{workflow.name}!{number}"
    walltime = rapidjson_double(walltime_text)
    if not walltime > 0:  # (load_workflow refuses negative runtimes; kept for the message)
        raise WorkloadError(f"{workflow.source}: task '{task.id}': walltime {walltime_text} "
                            "is not > 0")
    job = parse_job({"id": job_id, "subtime": rapidjson_double(subtime_text),
                     "walltime": walltime, "res": task.num_procs, "profile": profile_name},
                    workload=workflow.name, source=workflow.source)
    return job, profile


def workflow_submitter(sim: Simulation, workflow: Workflow) -> Generator[tuple, Any, None]:
    """The submitter of one workflow (see the module's docstring)."""
    engine = sim.engine
    cost = sim.cost(sim.master_host)
    mailbox = mailbox_of(workflow)
    profiles = sim.profiles_of[workflow.name]
    limit = sim.workflow_jobs_limit
    yield (PUT, ("HELLO",), cost)
    # (SimGrid's sleep_for does nothing for a duration <= 0: no request then)
    if workflow.start_time > engine.now:
        yield (SLEEP, workflow.start_time - engine.now)
    ready = workflow.source_tasks()
    completed_parents: dict[int, int] = {}
    submitted: dict[str, Task] = {}
    number = 0
    while ready or submitted:
        while ready and (limit == 0 or limit > len(submitted)):
            task = ready.pop(0)
            job, profile = task_job(workflow, number, task, engine.now)
            number += 1
            if profile.name in profiles:
                # (a task submitted twice: an edge listed twice, see batsim_py.workload.dax)
                raise WorkloadError(
                    f"{workflow.source}: task '{task.id}' is submitted a second time (an edge "
                    f"listed twice?): Batsim aborts, profile '{profile.name}' already exists"
                )
            profiles[profile.name] = profile
            yield (PUT, ("JOBS", [job], mailbox), cost)
            submitted[job.id] = task
        if submitted:
            msg = yield (GET_FROM, mailbox, -1.0)
            done = submitted.pop(msg[1])
            kids = done.children
            for kid in kids:
                completed_parents[id(kid)] = completed_parents.get(id(kid), 0) + 1
            for kid in kids:
                if completed_parents[id(kid)] == len(kid.parents):
                    ready.append(kid)
    yield (PUT, ("BYE", True), cost)


def workflow_stall(sim: Simulation) -> str | None:
    """Why a run with workflows stopped before its end, if a workflow is the cause: what
    SimGrid reports as a deadlock in Batsim ("Oops! Deadlock or code not perfectly clean"),
    after which Batsim kills every actor and writes what it has. batsim-py stops with this
    error instead (its outputs are written as after any error).

    Three ways: the server blocks sending a completion's callback while that workflow's
    submitter blocks submitting its next task to the server (two tasks of one workflow end
    together and the first one's end readies a task); a submitter waits for the callback of a
    job that will never complete normally (the scheduler rejected or killed it: Batsim calls
    a submitter back only from a JOB_COMPLETED); or the -k rule dropped its task. All three
    were checked against Batsim 4.2.1 (tests/conformance/workflows)."""
    engine = sim.engine
    now = engine.now
    for name, actor in sim.workflow_actors.items():
        if actor.dead:
            continue
        box = engine._mailboxes.get(f"{name}_submitter")
        if box is not None and box.queue:
            job_id = box.queue[0][1][1]
            return (
                f"deadlock at t={now:f}: the server waits for workflow {name}'s submitter to "
                f"take the completion of job {job_id}, while that submitter waits for the "
                "server to take its next task (two of its tasks ended together); Batsim "
                "4.2.1 deadlocks there too (SimGrid: 'Oops! Deadlock'); try "
                "--workflow-jobs-limit 1 or distinct task runtimes"
            )
        ignored = [j for j in sim.ignored_tasks if j.startswith(f"{name}!")]
        if ignored:
            return (
                f"deadlock at t={now:f}: workflow {name}'s submitter waits for the end of "
                f"{', '.join(ignored)}, which --ignore-beyond-last-workflow dropped (Batsim "
                "ignores every submission while exactly one workflow has ended, this "
                "workflow's too); Batsim 4.2.1 deadlocks there too (SimGrid: 'Oops! Deadlock')"
            )
        pending = sorted(j for j, box_name in sim.callbacks.items()
                         if box_name == f"{name}_submitter")
        return (
            f"deadlock at t={now:f}: workflow {name}'s submitter waits for the end of "
            f"{', '.join(pending) or 'a job'} that will never be reported to it (Batsim calls "
            "a workflow back only when its job completes: a rejected or killed workflow job "
            "makes Batsim 4.2.1 deadlock too)"
        )
    return None
