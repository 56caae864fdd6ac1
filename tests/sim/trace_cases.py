"""Random platforms with profiles and random parallel tasks, run by batsim-py's engine and by
real SimGrid (tests/sim/simgrid_trace_oracle.py); shared by test_availability_traces.py."""

from __future__ import annotations

import json
import os
import random
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from batsim_py.platform.reader import load_platform
from batsim_py.sim.availability import Availability
from batsim_py.sim.engine import EXEC, SLEEP, Engine
from batsim_py.sim.network import Network

ORACLE = Path(__file__).with_name("simgrid_trace_oracle.py")


def platform_xml(hosts: list, links: list, routes: list, traces: list, files: dict) -> str:
    """hosts (name, speed, cores); links (name, bw, lat, policy); routes (src, dst, [links]);
    traces (id, text, periodicity, kind, element). Host profiles are <trace>/<trace_connect>;
    link profiles are bandwidth_file/latency_file (SimGrid 3.32 refuses <trace_connect> on
    links), written into `files`."""
    out = ['<?xml version="1.0"?>', '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
           '<platform version="4.1">']
    link_attrs: dict[str, list[str]] = {}
    for tid, text, periodicity, kind, element in traces:
        if kind == "SPEED":
            out.append(f'<trace id="{tid}" periodicity="{periodicity!r}">\n{text}\n</trace>')
        else:
            if periodicity > 0:
                text += f"\nPERIODICITY {periodicity!r}"
            files[f"{tid}.txt"] = text
            attr = "bandwidth_file" if kind == "BANDWIDTH" else "latency_file"
            link_attrs.setdefault(element, []).append(f'{attr}="{tid}.txt"')
    out.append('<zone id="world" routing="Full">')
    for name, speed, cores in hosts:
        out.append(f'<host id="{name}" speed="{speed!r}f" core="{cores}"/>')
    for name, bw, lat, policy in links:
        extra = " ".join(link_attrs.get(name, []))
        out.append(f'<link id="{name}" bandwidth="{bw!r}Bps" latency="{lat!r}s" '
                   f'sharing_policy="{policy}" {extra}/>')
    for src, dst, hops in routes:
        out.append(f'<route src="{src}" dst="{dst}" symmetrical="NO">'
                   + "".join(f'<link_ctn id="{h}"/>' for h in hops) + "</route>")
    out.append("</zone>")
    for tid, _, _, kind, element in traces:
        if kind == "SPEED":
            out.append(f'<trace_connect kind="SPEED" trace="{tid}" element="{element}"/>')
    out.append("</platform>")
    return "\n".join(out)


def _profile(rng: random.Random, kind: str) -> tuple[str, float]:
    t = 0.0
    lines = []
    for i in range(rng.randint(1, 4)):
        if i or rng.random() < 0.5:
            t = t + round(rng.uniform(0.1, 3.0), 3)
        value = (round(rng.uniform(0.1, 1.5), 3) if kind == "SPEED"
                 else round(rng.uniform(2e7, 2e8)) if kind == "BANDWIDTH"
                 else round(rng.uniform(0, 5e-3), 6))
        lines.append(f"{t!r} {value!r}")
    periodicity = -1.0
    if rng.random() < 0.3:
        lines.append(f"LOOPAFTER {round(rng.uniform(0.5, 3), 3)!r}")
    elif rng.random() < 0.3:
        periodicity = round(t + rng.uniform(0.5, 3), 3)
    return "\n".join(lines), periodicity


def random_case(seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    hosts = [(f"h{i}", rng.choice([1e8, 2e8, 5e8]), rng.choice([1, 2])) for i in range(3)]
    links = [(f"l{i}", rng.choice([5e7, 1e8, 2e8]), rng.choice([0.0, 1e-4, 2e-3]),
              rng.choice(["SHARED", "FATPIPE"])) for i in range(3)]
    routes = [(f"h{a}", f"h{b}", rng.sample([link[0] for link in links], rng.randint(1, 2)))
              for a in range(3) for b in range(3) if a != b]
    traces: list = []
    seen = set()
    for k in range(rng.randint(1, 4)):
        kind = rng.choice(["SPEED", "BANDWIDTH", "LATENCY"])
        element = rng.choice(hosts)[0] if kind == "SPEED" else rng.choice(links)[0]
        text, periodicity = _profile(rng, kind)
        if (kind, element) not in seen:  # one profile of a kind per resource
            seen.add((kind, element))
            traces.append((f"tr{k}", text, periodicity, kind, element))
    tasks = []
    for _ in range(rng.randint(1, 5)):
        n = rng.randint(1, 3)
        names = [f"h{rng.randrange(3)}" for _ in range(n)]
        flops = [float(rng.choice([0, 1e8, 5e8, 1e9])) for _ in range(n)]
        nbytes = [0.0] * (n * n)
        for i in range(n):
            for j in range(n):
                if names[i] != names[j] and rng.random() < 0.5:
                    nbytes[i * n + j] = float(rng.choice([1e7, 1e8, 3e8]))
        tasks.append({"start": round(rng.uniform(0, 4), 3) if rng.random() < 0.6 else 0.0,
                      "hosts": names, "flops": flops, "bytes": nbytes})
    files: dict[str, str] = {}
    return {"platform": platform_xml(hosts, links, routes, traces, files), "files": files,
            "tasks": tasks}


class _Sim:
    """What Availability reads of a simulation, for an engine without Batsim around it."""

    def __init__(self, platform: Any, engine: Engine) -> None:
        self.platform, self.engine = platform, engine
        self.energy_trace = None
        self._costs: dict = {}
        self.master_host = engine.master_host
        self.master_cost = None

    def cost(self, host: str) -> None:
        return None

    def cost_between(self, src: str, dst: str, nbytes: float) -> tuple:
        return (0.0, 1.0, False, src, dst, nbytes)


def our_ends(case: dict[str, Any]) -> list[float]:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "p.xml")
        Path(path).write_text(case["platform"])
        for name, text in case["files"].items():
            Path(tmp, name).write_text(text)
        platform = load_platform(path)
    engine = Engine()
    network = Network(platform)
    engine.network = network
    engine.master_host = next(iter(platform.hosts))
    engine.availability = Availability(_Sim(platform, engine))
    ends: list[float] = [0.0] * len(case["tasks"])

    def actor(k: int, task: dict):
        if task["start"] > 0:
            yield (SLEEP, task["start"])
        n = len(task["hosts"])
        matrix = np.array(task["bytes"], dtype=float).reshape(n, n)
        matrix = matrix if (matrix > 0).any() else None
        yield (EXEC, lambda: network.row(task["hosts"], task["flops"], matrix), -1)
        ends[k] = engine.now

    for k, task in enumerate(case["tasks"]):
        engine.spawn(actor(k, task), f"t{k}", task["hosts"][0])
    engine.run()
    return ends


def simgrid_ends(case: dict[str, Any], python: str) -> list[float]:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(case, f)
    try:
        res = subprocess.run([python, str(ORACLE), f.name], capture_output=True, text=True,
                             timeout=120)
    finally:
        os.unlink(f.name)
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads(res.stdout)["ends"]
