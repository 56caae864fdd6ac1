"""Regenerate this folder's cases with a real Batsim 4.2.1 (README.md): random small workloads,
run by Batsim and an unchanged pybatsim 3.2.1 scheduler over ZeroMQ; Batsim's outputs become
each case's expected/. Not a test: it needs the oracle (BATSIM: the batsim command, PYBATSIM:
pybatsim's), which CI does not have.

    BATSIM=/opt/batsim-oracle/bin/batsim PYBATSIM=/opt/batsim-oracle/venv/bin/pybatsim \\
        python tests/conformance/oracle/make_cases.py
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

DEST = Path(__file__).resolve().parent
BATSIM = os.environ.get("BATSIM", "batsim")
PYBATSIM = os.environ.get("PYBATSIM", "pybatsim")
# kind: (platform file in platforms/, Batsim flags, number of machines (None: drawn))
PLATS: dict[str, tuple[str, list[str], int | None]] = {
    "small": ("small_platform.xml", [], 4),
    "c512": ("cluster512.xml", ["--mmax-workload"], None),
    "nonet": ("energy_platform_homogeneous_no_net_128.xml", [], 128),
}


def _profile(rng: random.Random, kind: str, res: int, i: int,
             profiles: dict[str, Any]) -> str:
    """Draw job i's profile (and a composed profile's part) into `profiles`; its name.
    The platform without a network (`nonet`) gets no profile that communicates by matrix."""
    if kind != "nonet":
        ptype = rng.choice(["delay", "delay", "ph", "pht", "par", "comp"])
    else:
        ptype = rng.choice(["delay", "ph", "pht"])
    name = f"p{i}"
    if ptype == "delay":
        delay = rng.choice([rng.randint(1, 100), round(rng.random() * 50, rng.randint(0, 8))])
        profiles[name] = {"type": "delay", "delay": delay}
    elif ptype == "ph":
        cpu = rng.choice([0, rng.randint(1, 10) * 1e7, rng.random() * 1e8])
        com = rng.choice([0, rng.randint(1, 10) * 1e6, rng.random() * 1e7])
        profiles[name] = {"type": "parallel_homogeneous", "cpu": cpu, "com": com}
    elif ptype == "pht":
        cpu = rng.choice([rng.randint(1, 10) * 1e8, rng.random() * 1e9])
        com = rng.choice([0, rng.random() * 1e7])
        profiles[name] = {"type": "parallel_homogeneous_total", "cpu": cpu, "com": com}
    elif ptype == "par":
        cpus = [rng.choice([0, rng.random() * 1e8]) for _ in range(res)]
        coms = [rng.choice([0, 0, rng.random() * 1e7]) if a != b else 0
                for a in range(res) for b in range(res)]
        profiles[name] = {"type": "parallel", "cpu": cpus, "com": coms}
    else:
        part = f"s{i}"
        profiles[part] = {"type": "delay", "delay": rng.randint(1, 20)}
        profiles[name] = {"type": "composed", "repeat": rng.randint(1, 4), "seq": [part, part]}
    return name


def workload(rng: random.Random, nb_res: int, kind: str) -> dict[str, Any]:
    """5 to 60 jobs: submission ties and fractional dates, widths up to the whole platform,
    walltimes (hit or not, -1, or none), string and integer ids."""
    profiles: dict[str, Any] = {}
    jobs = []
    t = 0.0
    for i in range(rng.randint(5, 60)):
        if rng.random() < 0.7:
            t += rng.choice([0, 0, rng.random() * 20, rng.randint(0, 30), rng.random()])
        if rng.random() < 0.5:
            res = rng.randint(1, nb_res)
        else:
            res = rng.randint(1, max(1, nb_res // 4))
        name = _profile(rng, kind, res, i, profiles)
        job: dict[str, Any] = {"id": str(i) if rng.random() < 0.3 else f"j{i}", "subtime": t,
                               "res": res, "profile": name}
        if rng.random() < 0.6:
            job["walltime"] = rng.choice([rng.randint(1, 200), round(rng.random() * 100, 3), -1])
        jobs.append(job)
    return {"nb_res": nb_res, "jobs": jobs, "profiles": profiles}


def make(seed: int, kind: str, sched: str, energy: bool, port: int) -> None:
    """Case r<seed>: its workload, Batsim's outputs under expected/, its case.json."""
    rng = random.Random(1000 + seed)
    platform, flags, nb = PLATS[kind]
    if nb is None:
        nb = rng.choice([4, 8, 16, 32])
    w = workload(rng, nb, kind)
    for p in w["profiles"].values():
        if p["type"] == "delay" and p["delay"] <= 0:
            p["delay"] = 1  # (Batsim refuses a delay of 0)
    if sched == "schedFcfs":  # its scheduling layer wants integer ids and start times > 0
        for i, j in enumerate(w["jobs"]):
            j["id"] = str(i)
            j["subtime"] += 1
    policy = "easy" if sched == "easyBackfill" else "fcfs"
    name = f"r{seed:02d}_{kind}_{policy}{'_energy' if energy else ''}"
    d = DEST / name
    shutil.rmtree(d, ignore_errors=True)
    (d / "expected").mkdir(parents=True)
    with open(d / "workload.json", "w") as f:
        json.dump(w, f, indent=1)
        f.write("\n")
    args = flags + (["--energy"] if energy else [])
    endpoint = f"tcp://localhost:{port}"
    batsim = subprocess.Popen(
        [BATSIM, "-p", f"../platforms/{platform}", "-w", "workload.json", "-e", "expected/out",
         "-s", endpoint, *args], cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.2)
    scheduler = subprocess.Popen([PYBATSIM, sched, "-s", endpoint, "-t", "0", "-o", "{}"],
                                 cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    codes = batsim.wait(timeout=120), scheduler.wait(timeout=30)
    assert codes == (0, 0), (name, codes)
    (d / "expected" / "out_schedule.trace").unlink(missing_ok=True)  # (not compared)
    (d / "out_events.csv").unlink(missing_ok=True)  # (schedFcfs's own log)
    case = {"platform": f"../platforms/{platform}", "workloads": ["workload.json"],
            "events": [], "scheduler": {"kind": "pybatsim", "name": sched, "options": {}},
            "batsim_args": args, "transcript": False, "seed": 1000 + seed}
    with open(d / "case.json", "w") as f:
        json.dump(case, f, indent=2)
        f.write("\n")
    print(name, len(w["jobs"]), "jobs", flush=True)


def main() -> None:
    seed = 0
    for kind in ("small", "c512", "nonet"):
        for sched in ("easyBackfill", "schedFcfs"):
            for energy in (False, True) if kind == "nonet" else (False,):
                for _ in range(3 if kind != "nonet" else 2):
                    make(seed, kind, sched, energy, 32500 + seed)
                    seed += 1


if __name__ == "__main__":
    main()
