"""Seeded generator of issue 21's family, and a filler scheduler that places jobs with a mapping.

The family (found by a seeded search where real Batsim 4.2.1 spins inside SimGrid's
fair-bottleneck solver): multicore hosts in a Full zone without declared self routes, so that
every host and the master reach themselves through SimGrid's default `__loopback__` (one
FATPIPE link shared by the whole zone); `parallel` jobs whose EXECUTE_JOB `mapping` puts more
executors than cores on one host, with unequal cpu amounts and one transfer between two
executors; Batsim's own 1-byte master messages (submissions, CALL_ME_LATER wake-ups) crossing
the same loopback while the jobs run.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from batsim_py.decision import decisions as d
from batsim_py.decision import events as ev
from batsim_py.decision.interface import DecisionProcess


@dataclass(frozen=True)
class Case:
    seed: int
    platform: str  # XML text
    workload: dict  # Batsim JSON workload
    cores: tuple[int, ...]  # cores of each compute host, by machine id
    machines: dict[str, int]  # how many machines the scheduler gives each job (by job name)

    def write(self, folder: Path) -> tuple[Path, Path]:
        folder.mkdir(parents=True, exist_ok=True)
        platform = folder / "platform.xml"
        workload = folder / "workload.json"
        platform.write_text(self.platform)
        workload.write_text(json.dumps(self.workload, indent=1))
        return platform, workload


def _speed(rng: random.Random) -> str:
    return f"{rng.choice([50, 100, 200, 250, 400, 1000])}Mf"


def generate(seed: int) -> Case:
    """One case of the family: 2-3 multicore compute hosts, 2-6 mapped parallel jobs."""
    rng = random.Random(seed)
    n_hosts = rng.randint(2, 3)
    cores = tuple(rng.choice([1, 2, 2, 2]) for _ in range(n_hosts))  # < 3 executors
    names = [f"h{i}" for i in range(n_hosts)]
    lines = ['<?xml version="1.0"?>',
             '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
             '<platform version="4.1">', '  <zone id="z" routing="Full">',
             f'    <host id="master_host" speed="{_speed(rng)}"/>']
    for name, c in zip(names, cores, strict=True):
        watts = f"{rng.choice([10, 95])}:{rng.choice([100, 190.5])}"
        lines.append(f'    <host id="{name}" speed="{_speed(rng)}" core="{c}">'
                     f'<prop id="wattage_per_state" value="{watts}"/></host>')
    for i in range(n_hosts + 1):
        bw = rng.choice(["10MBps", "125MBps", "1GBps"])
        lat = rng.choice(["0us", "10us", "50us", "1ms"])
        policy = rng.choice(["SHARED", "SHARED", "FATPIPE"])
        lines.append(f'    <link id="l{i}" bandwidth="{bw}" latency="{lat}" '
                     f'sharing_policy="{policy}"/>')
    ends = ["master_host", *names]
    for a in range(len(ends)):
        for b in range(a + 1, len(ends)):
            lines.append(f'    <route src="{ends[a]}" dst="{ends[b]}">'
                         f'<link_ctn id="l{a}"/><link_ctn id="l{b}"/></route>')
    lines += ["  </zone>", "</platform>", ""]

    jobs = []
    profiles = {}
    machines = {}
    t = 0.0
    for j in range(rng.randint(2, 6)):
        n_exec = rng.randint(3, 6)
        cpu = [float(rng.choice([0, 1e6, 5e6, 1e7, 3e7, 1e8]) * rng.uniform(0.5, 2.0))
               for _ in range(n_exec)]
        cpu[0] = cpu[0] or 1e7
        while len(set(cpu)) == 1:  # unequal amounts
            cpu[-1] *= 1.5
        com = [0.0] * (n_exec * n_exec)
        src, dst = rng.sample(range(n_exec), 2)
        com[src * n_exec + dst] = float(rng.choice([1, 1e3, 1e6, 5e7]))
        profiles[f"p{j}"] = {"type": "parallel", "cpu": cpu, "com": com}
        machines[f"j{j}"] = rng.randint(1, n_hosts)
        jobs.append({"id": f"j{j}", "subtime": round(t, 3), "res": n_exec,
                     "profile": f"p{j}", "walltime": rng.choice([-1, 5, 50, 1000])})
        t += rng.choice([0.0, 0.0, 0.001, 0.1, 1.0, 7.0])
    workload = {"nb_res": n_hosts, "jobs": jobs, "profiles": profiles}
    return Case(seed, "\n".join(lines), workload, cores, machines)


def crowded_mapping(n_exec: int, alloc: Sequence[int], cores: Sequence[int]) -> tuple[int, ...]:
    """Executor -> allocation index, with more executors than cores on the first host."""
    first = min(n_exec, cores[alloc[0]] + 1)
    out = [0] * first
    for i in range(n_exec - first):
        out.append((i + 1) % len(alloc))
    return tuple(out)


class FillerWithMapping(DecisionProcess):
    """First-fit filler: runs every waiting job that fits, crowding its executors (see
    `crowded_mapping`), and asks to be called back a little later (master messages on the
    loopback while the jobs run)."""

    def __init__(self, case: Case) -> None:
        self.case = case
        self.free: set[int] = set(range(len(case.cores)))
        self.queue: list[tuple[str, int, int]] = []  # (job id, res, executors)
        self.running: dict[str, tuple[int, ...]] = {}
        self.calls = 0

    def exchange(self, now: float, events: Sequence[ev.Event]) -> d.Reply:
        out: list = []
        for e in events:
            if isinstance(e, ev.JobSubmitted):
                name = e.job_id.split("!", 1)[1]
                job = next(j for j in self.case.workload["jobs"] if j["id"] == name)
                self.queue.append((e.job_id, self.case.machines[name], job["res"]))
            elif isinstance(e, ev.JobCompleted):
                self.free |= set(self.running.pop(e.job_id))
        for item in list(self.queue):
            job_id, res, n_exec = item
            if res <= len(self.free):
                alloc = tuple(sorted(self.free)[:res])
                self.free -= set(alloc)
                self.running[job_id] = alloc
                self.queue.remove(item)
                out.append(d.ExecuteJob(now, job_id, alloc,
                                        mapping=crowded_mapping(n_exec, alloc, self.case.cores)))
        if self.running and self.calls < 3:
            self.calls += 1
            out.append(d.CallMeLater(now, now + 0.5))
        return d.Reply(now, tuple(out))
