"""Machine states over time: who is idle or computing, the time spent in each state, and the
rows of `machine_states.csv`.

Batsim's quirks are kept on purpose (§7.2-7.3): the counters start with every compute machine
idle (storage machines are not counted but do move between columns), and time spent in a state
is only accumulated when a machine changes state, so the last interval is never counted.
"""

from __future__ import annotations

from batsim_py.output import machine_states_csv

COUNTED = ("sleeping", "switching_on", "switching_off", "idle", "computing")


class MachineStates:
    __slots__ = ("state", "last_change", "nb_jobs", "counts", "time_in", "rows", "tracing")

    def __init__(self, nb_machines: int, nb_compute: int, tracing: bool = True) -> None:
        self.state = ["idle"] * nb_machines
        self.last_change = [0.0] * nb_machines
        self.nb_jobs = [0] * nb_machines
        self.counts = dict.fromkeys(COUNTED, 0)
        self.counts["idle"] = nb_compute
        self.time_in = dict.fromkeys(
            ("computing", "idle", "sleeping", "switching_off", "switching_on", "unavailable"), 0.0
        )
        self.rows: list[str] = []
        self.tracing = tracing

    def set(self, machine: int, new: str, now: float) -> None:
        old = self.state[machine]
        if old == new:
            return
        self.time_in[old] += now - self.last_change[machine]
        self.last_change[machine] = now
        self.state[machine] = new
        counts = self.counts
        if old in counts:
            counts[old] -= 1
        if new in counts:
            counts[new] += 1

    def job_starts(self, alloc: tuple[int, ...], now: float) -> None:
        nb_jobs = self.nb_jobs
        for m in alloc:
            nb_jobs[m] += 1
            if self.state[m] == "idle":
                self.set(m, "computing", now)
        self.write_row(now)

    def job_ends(self, alloc: tuple[int, ...], now: float) -> None:
        nb_jobs = self.nb_jobs
        for m in alloc:
            nb_jobs[m] -= 1
            if nb_jobs[m] == 0 and self.state[m] == "computing":
                self.set(m, "idle", now)
        self.write_row(now)

    def write_row(self, now: float) -> None:
        if self.tracing:
            c = self.counts
            self.rows.append(
                machine_states_csv.format_row(
                    now, c["sleeping"], c["switching_on"], c["switching_off"], c["idle"],
                    c["computing"],
                )
            )
