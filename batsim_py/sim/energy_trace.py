"""Batsim's energy bookkeeping on top of the hosts' joules: job energies, the energy and pstate
traces (`PREFIX_consumed_energy.csv`, `PREFIX_pstate_changes.csv`), and the totals of
schedule.csv (§7.4-7.5). Sums are long double, as in Batsim."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from batsim_py import intervalset
from batsim_py.output.jobs_csv import ld_text
from batsim_py.sim.energy import HostEnergy

LD = np.longdouble


class EnergyTrace:
    def __init__(self, hosts: HostEnergy, machine_hosts: Sequence[int]) -> None:
        self.hosts = hosts
        self.machine_hosts = tuple(machine_hosts)  # host index of each machine id
        self.rows: list[str] = []
        self.pstate_rows: list[str] = []
        self._last_date = LD(0)
        self._last_energy = LD(0)
        self.first_submission: LD | None = None
        self.last_completion = LD(-1)

    def on_machines(self, machines: Sequence[int]) -> LD:
        return self.hosts.total(self.machine_hosts[m] for m in machines)

    def total(self) -> LD:
        return self.hosts.total(self.machine_hosts)

    def entry(self, date: float, kind: str) -> LD:
        """One row of the energy trace ('s' job start, 'e' job end, 'p' pstate)."""
        energy = self.total()
        wattmin = self.hosts.wattmin(self.machine_hosts)
        time_diff = LD(date) - self._last_date
        epower = "NA"
        if time_diff > 0:
            epower = "%f" % float((energy - self._last_energy) / time_diff)
        self.rows.append(f"{date:f},{ld_text(energy)},{kind},{ld_text(wattmin)},{epower}")
        self._last_date = LD(date)
        self._last_energy = energy
        return energy

    def pstate_change(self, date: float, machines: Sequence[int], pstate: int) -> None:
        self.pstate_rows.append("%g,%s,%d" % (date, intervalset.format(machines), pstate))

    def initial_pstates(self, pstates: Sequence[int]) -> None:
        """At time 0, one row per initial pstate listing its machines."""
        by_pstate: dict[int, list[int]] = {}
        for machine, p in enumerate(pstates):
            by_pstate.setdefault(p, []).append(machine)
        for p in sorted(by_pstate):
            self.pstate_change(0.0, by_pstate[p], p)

    def consumed_joules(self) -> float:
        first = self.first_submission if self.first_submission is not None else LD(-1)
        return float(self.last_completion - first)
