"""`send` and `recv` profiles: jobs that talk with the scheduler (Batsim 4.2.1,
src/jobs_execution.cpp, `SCHEDULER_SEND` / `SCHEDULER_RECV`).

- `send`: the job's actor sends its `msg` object to the server (one 1-byte internal message,
  like every other), which forwards it to the scheduler as a FROM_JOB_MSG event; then the job
  sleeps `sleeptime` seconds (default 1e-7), racing its walltime.
- `recv`: reads the first TO_JOB_MSG string the scheduler sent to this job (the server keeps
  them in the job's inbox, from whatever time they arrive, even before the recv starts). If the
  inbox is empty: with a `timeout` profile, that profile runs at once (no waiting: it is a
  profile name, not a duration); without one, the job sleeps `polltime` seconds (default
  0.005) and looks again, until a message comes or the walltime is reached. A message that
  matches `regex` (a whole-string match, like C++'s `std::regex_match`) runs the `success`
  profile, any other the `failure` profile; an empty name runs nothing. The recv returns the
  sub-profile's code if it is not 0, else its own `ret`.

What it needs from the scheduler: TO_JOB_MSG `{"job_id", "msg": string}` decisions (pybatsim's
`send_message_to_job`), and to read FROM_JOB_MSG events (pybatsim's `onFromJobMessage`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Generator, Mapping
from typing import Any

from batsim_py.errors import WorkloadError
from batsim_py.sim.engine import PUT, SLEEP
from batsim_py.workload.model import Profile, RecvProfile, SendProfile


def delay(seconds: float, wall: Any) -> Generator[tuple, Any, bool]:
    """Batsim's do_delay_task: sleep, or only until the walltime; False if it was reached."""
    remaining = wall.remaining
    if remaining < 0 or seconds < remaining:
        yield (SLEEP, seconds)
        if remaining > 0:
            wall.remaining = remaining - seconds
        return True
    yield (SLEEP, remaining)
    wall.remaining = 0.0
    return False


def execute(sim: Any, run: Any, profile: Profile, profiles: Mapping[str, Profile], wall: Any,
            execute_profile: Callable[..., Generator[tuple, Any, int]]
            ) -> Generator[tuple, Any, int]:
    """Run a send or recv profile; return its Batsim return code."""
    if isinstance(profile, SendProfile):
        yield (PUT, ("FROM_JOB_MSG", run, profile.msg), sim.cost(run.host))
        if not (yield from delay(profile.sleeptime, wall)):
            return -1
        return profile.ret
    assert isinstance(profile, RecvProfile)
    to_run = ""
    if not run.inbox:
        if profile.on_timeout:
            to_run = profile.on_timeout
        else:
            while not run.inbox:
                if not (yield from delay(profile.polltime, wall)):
                    return -1
    if run.inbox:
        message = run.inbox.popleft()
        try:
            matched = re.fullmatch(profile.regex, message) is not None
        except re.error as exc:
            raise WorkloadError(f"job {run.job.id}: recv profile '{profile.name}': regex "
                                f"'{profile.regex}' is not a valid regular expression ({exc})"
                                ) from None
        to_run = profile.on_success if matched else profile.on_failure
    if to_run:
        run.frames[-1][1] = 0  # Batsim's current_task_index: the sub-task runs
        ret = yield from execute_profile(sim, run, profiles[to_run], profiles, wall)
        if ret != 0:
            return ret
    return profile.ret
