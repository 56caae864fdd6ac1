"""Every invalid decision of batsim-semantics §5.8 that applies without energy or external
events: one clear error naming the decision and why, and the outputs so far still written."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from batsim_py.decision import decisions as d
from batsim_py.decision import events as ev
from batsim_py.decision.interface import DecisionProcess
from batsim_py.errors import SchedulerError
from batsim_py.run import RunSpec, run_simulation
from batsim_py.sim.options import Options

PROJECT = Path(__file__).resolve().parents[2]
SMALL4 = str(PROJECT / "platforms" / "small4.xml")
JOBS = [
    {"id": "a", "subtime": 0, "res": 1, "profile": "d10"},
    {"id": "b", "subtime": 1, "res": 1, "profile": "d10"},
]
PROFILES = {"d10": {"type": "delay", "delay": 10}}


class OneShot(DecisionProcess):
    """Starts w0!a on machine 0 when it arrives; on the first event of `trigger` type,
    answers with the decisions given (built from the request's `now`)."""

    def __init__(self, trigger: type | Callable[[ev.Event], bool],
                 bad: Callable[[float], list]) -> None:
        self.trigger = trigger
        self.bad = bad
        self.fired = False

    def exchange(self, now: float, events: Sequence[ev.Event]) -> d.Reply:
        out: list = []
        for e in events:
            if isinstance(e, ev.JobSubmitted) and e.job_id == "w0!a":
                out.append(d.ExecuteJob(now, "w0!a", (0,)))
            hit = (isinstance(e, self.trigger) if isinstance(self.trigger, type)
                   else self.trigger(e))
            if hit and not self.fired:
                self.fired = True
                out += self.bad(now)
        return d.Reply(now, tuple(out))


CASES = [
    ("execute unknown job", ev.JobSubmitted, lambda t: [d.ExecuteJob(t, "w0!zz", (1,))],
     r"EXECUTE_JOB at t=.*: job 'w0!zz' does not exist"),
    ("execute twice", ev.JobCompleted, lambda t: [d.ExecuteJob(t, "w0!b", (1,)),
                                                 d.ExecuteJob(t, "w0!b", (2,))],
     r"EXECUTE_JOB of job 'w0!b' .*: the job is RUNNING, only a SUBMITTED job"),
    ("machine out of range", ev.JobCompleted, lambda t: [d.ExecuteJob(t, "w0!b", (7,))],
     r"machine 7 does not exist \(machines are 0-3\)"),
    ("busy machine", lambda e: getattr(e, "job_id", "") == "w0!b",
     lambda t: [d.ExecuteJob(t, "w0!b", (0,))],
     r"machine 0 \(node0\) is already running a job and compute sharing is disabled"),
    ("empty allocation", ev.JobCompleted, lambda t: [d.ExecuteJob(t, "w0!b", ())],
     r"EXECUTE_JOB of job 'w0!b' .*: the allocation is empty"),
    ("empty range allocation", ev.JobCompleted, lambda t: [d.ExecuteJob(t, "w0!b", range(2, 2))],
     r"EXECUTE_JOB of job 'w0!b' .*: the allocation is empty"),
    ("wrong resource count", ev.JobCompleted, lambda t: [d.ExecuteJob(t, "w0!b", (1, 2))],
     r"the job requests 1 machines but 2 were given"),
    ("bad mapping", ev.JobCompleted, lambda t: [d.ExecuteJob(t, "w0!b", (1,), mapping=(3,))],
     r"mapping value 3 is not in \[0, 1\)"),
    ("reject a running job", ev.JobSubmitted, lambda t: [d.RejectJob(t, "w0!a")],
     r"REJECT_JOB of job 'w0!a' .*: the job is RUNNING"),
    ("kill a waiting job", ev.JobCompleted, lambda t: [d.KillJob(t, ("w0!b",))],
     r"KILL_JOB at t=.*: job 'w0!b' is SUBMITTED"),
    ("kill a reported job", ev.JobCompleted, lambda t: [d.KillJob(t, ("w0!a",))],
     r"KILL_JOB at t=.*: job 'w0!a' is over \(COMPLETED_SUCCESSFULLY\) and was already "
     r"reported"),
    ("call me in the past", ev.JobSubmitted, lambda t: [d.CallMeLater(t, t)],
     r"CALL_ME_LATER at t=.*: you asked to be awaken in the past or now"),
    ("pstate without energy", ev.JobSubmitted, lambda t: [d.SetResourceState(t, (1,), 0)],
     r"SET_RESOURCE_STATE at t=.* needs the energy model: run with -E/--energy"),
    ("energy query without energy", ev.JobSubmitted,
     lambda t: [d.Query(t, {"consumed_energy": {}})],
     r"QUERY at t=.* needs the energy model: run with -E/--energy"),
    ("registration disabled", ev.JobSubmitted,
     lambda t: [d.RegisterProfile(t, "dyn", "p", {"type": "delay", "delay": 1})],
     r"REGISTER_PROFILE: dynamic registration is disabled \(run with --enable-dynamic-jobs\)"),
    ("bad job state change", ev.JobSubmitted,
     lambda t: [d.ChangeJobState(t, "w0!a", "REJECTED")],
     r"CHANGE_JOB_STATE of job 'w0!a' .*: a RUNNING job cannot become REJECTED"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_invalid_decision(case, tmp_path: Path) -> None:
    _, trigger, bad, pattern = case
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({"nb_res": 4, "jobs": JOBS, "profiles": PROFILES}))
    with pytest.raises(SchedulerError, match=pattern):
        run_simulation(
            RunSpec(SMALL4, [str(workload)], Options(export_prefix=str(tmp_path / "out"))),
            OneShot(trigger, bad),
        )
    text = (tmp_path / "out_jobs.csv").read_text()
    assert text.startswith("job_id,")  # a valid, parsable file with what was simulated
    assert (tmp_path / "out_schedule.csv").read_text().count("\n") == 2


def test_dynamic_registration_errors(tmp_path: Path) -> None:
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({"nb_res": 4, "jobs": JOBS, "profiles": PROFILES}))

    def twice(t: float) -> list:
        p = {"type": "delay", "delay": 1}
        return [d.RegisterProfile(t, "dyn", "p", p), d.RegisterProfile(t, "dyn", "p", p)]

    with pytest.raises(SchedulerError, match=r"REGISTER_PROFILE dyn!p: this profile already"):
        run_simulation(
            RunSpec(SMALL4, [str(workload)], Options(export_prefix=str(tmp_path / "out"),
                                                     dynamic_jobs=True)),
            OneShot(ev.JobSubmitted, twice),
        )

    def unknown_profile(t: float) -> list:
        job = {"id": "j", "subtime": 0, "res": 1, "profile": "nope"}
        return [d.RegisterJob(t, "w0!j", job)]

    with pytest.raises(SchedulerError, match=r"profile 'nope' does not exist in workload 'w0'"):
        run_simulation(
            RunSpec(SMALL4, [str(workload)], Options(export_prefix=str(tmp_path / "out"),
                                                     dynamic_jobs=True)),
            OneShot(ev.JobSubmitted, unknown_profile),
        )


def test_registering_a_static_job_not_yet_submitted_is_refused(tmp_path: Path) -> None:
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({"nb_res": 4, "jobs": JOBS, "profiles": PROFILES}))

    def again(t: float) -> list:
        return [d.RegisterJob(t, "w0!b", {"id": "b", "subtime": 0, "res": 1,
                                          "profile": "d10"})]

    with pytest.raises(SchedulerError, match=r"REGISTER_JOB w0!b: job 'w0!b' already exists"):
        run_simulation(
            RunSpec(SMALL4, [str(workload)], Options(export_prefix=str(tmp_path / "out"),
                                                     dynamic_jobs=True)),
            OneShot(ev.JobSubmitted, again),
        )


def test_a_composed_profile_containing_itself_is_a_clear_error(tmp_path: Path) -> None:
    from batsim_py.errors import WorkloadError

    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({
        "nb_res": 4, "jobs": [{"id": "a", "subtime": 0, "res": 1, "profile": "s"}],
        "profiles": {"s": {"type": "composed", "seq": ["d1", "s"]},
                     "d1": {"type": "delay", "delay": 1}},
    }))
    with pytest.raises(WorkloadError, match=r"job w0!a: composed profile 's' contains itself"):
        run_simulation(
            RunSpec(SMALL4, [str(workload)], Options(export_prefix=str(tmp_path / "out"))),
            OneShot(ev.JobSubmitted, lambda t: []),
        )


ENERGY8 = str(PROJECT / "platforms" / "energy8.xml")


@pytest.mark.parametrize(
    "bad, pattern",
    [
        (lambda t: [d.SetResourceState(t, (1,), 9)],
         r"SET_RESOURCE_STATE at t=.*: machine 1 \(node1\) has no pstate 9 \(pstates 0-4\)"),
        (lambda t: [d.SetResourceState(t, (0,), 2)],
         r"machine 0 \(node0\) cannot sleep: it is running a job"),
        (lambda t: [d.SetResourceState(t, (1,), 2), d.SetResourceState(t, (1,), 0)],
         r"machine 1 \(node1\) is already switching"),
        (lambda t: [d.SetResourceState(t, (9,), 0)], r"machine 9 does not exist"),
    ],
    ids=["no such pstate", "sleep a busy machine", "already switching", "no such machine"],
)
def test_invalid_pstate_requests(bad, pattern, tmp_path: Path) -> None:
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({"nb_res": 4, "jobs": JOBS, "profiles": PROFILES}))
    with pytest.raises(SchedulerError, match=pattern):
        run_simulation(
            RunSpec(ENERGY8, [str(workload)], Options(export_prefix=str(tmp_path / "out"),
                                                      energy=True)),
            OneShot(lambda e: getattr(e, "job_id", "") == "w0!b", bad),
        )
    assert (tmp_path / "out_pstate_changes.csv").exists()


def test_waking_to_a_sleep_pstate_is_refused(tmp_path: Path) -> None:
    """A sleeping machine can only be woken to a computation pstate."""
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({"nb_res": 4, "jobs": JOBS, "profiles": PROFILES}))

    class SleepThenBadWake(DecisionProcess):
        def exchange(self, now: float, events: Sequence[ev.Event]) -> d.Reply:
            out: list = []
            for e in events:
                if isinstance(e, ev.SimulationBegins):
                    out.append(d.SetResourceState(now, (3,), 2))
                if isinstance(e, ev.JobSubmitted):
                    out.append(d.RejectJob(now, e.job_id))
                if isinstance(e, ev.ResourceStateChanged) and e.state == "2":
                    out.append(d.SetResourceState(now, (3,), 4))
            return d.Reply(now, tuple(out))

    with pytest.raises(SchedulerError, match=r"machine 3 \(node3\) sleeps in pstate 2; it can "
                                             r"only be woken to a computation pstate, not 4"):
        run_simulation(
            RunSpec(ENERGY8, [str(workload)], Options(export_prefix=str(tmp_path / "out"),
                                                      energy=True)),
            SleepThenBadWake(),
        )
