"""Run an energy scenario in real SimGrid (ptask_L07 + host_energy plugin); print the joules read.

Run by Debian's /usr/bin/python3 with python3-simgrid installed (not by the project's Python):

    /usr/bin/python3 energy_oracle_sim.py case.json

One case per process (SimGrid allows one engine per process). The test suite imports this
module too (for `platform_xml`), so nothing at module level needs simgrid. A case is plain
numbers:

    {"hosts": [{"speeds": [1e8, 2e7], "cores": 4, "pstate": 0,           # named h0, h1, ...
                "watts": "100:120:200, 90:150"}, ...],
     "links": [{"bandwidth": 1.25e8, "latency": 1e-4}, ...],            # l0, l1, ...
     "routes": [[src, dst, [link, ...]], ...],                           # one-way, Full zone
     "actors": [{"host": 0, "ops": [op, ...]}, ...],
     "end": 50.0}                                                        # optional

Each actor runs its ops in order, on its host:

    ["sleep", seconds]
    ["exec", flops]                                   this_actor.execute on the actor's host
    ["ptask", [h, ...], [flops, ...], [bytes, ... n*n]]   exec_init(...).start().wait()
    ["pstate", host, pstate]                          Host.pstate = pstate
    ["read", host]                                    sg_host_get_consumed_energy(host)

With "end", one more actor sleeps until that date and reads every host. Prints
{"reads": [[actor, date, host, joules], ...], "final": [joules per host] or null} in the order
the reads happened.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
import tempfile

# The shared platform writer lives beside the tests (this script runs outside pytest).
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from simgrid_oracle_support import full_zone_xml  # noqa: E402


def platform_xml(case: dict) -> str:
    hosts = []
    for h, host in enumerate(case["hosts"]):
        speeds = ", ".join(f"{s!r}f" for s in host["speeds"])
        pstate = f' pstate="{host["pstate"]}"' if host.get("pstate") else ""
        hosts.append(f'<host id="h{h}" speed="{speeds}" core="{host["cores"]}"{pstate}>')
        hosts.append(f'  <prop id="wattage_per_state" value="{host["watts"]}"/>')
        hosts.append("</host>")
    return full_zone_xml(hosts, case["links"], case["routes"])


def main(path: str) -> None:
    import simgrid

    with open(path) as f:
        case = json.load(f)
    lib = ctypes.CDLL("libsimgrid.so.3.32")
    lib.sg_host_by_name.restype = ctypes.c_void_p
    lib.sg_host_by_name.argtypes = [ctypes.c_char_p]
    lib.sg_host_get_consumed_energy.restype = ctypes.c_double
    lib.sg_host_get_consumed_energy.argtypes = [ctypes.c_void_p]
    n = len(case["hosts"])
    reads: list[list] = []
    final: list[float] | None = None

    with tempfile.TemporaryDirectory() as tmp:
        xml = os.path.join(tmp, "platform.xml")
        with open(xml, "w") as f:
            f.write(platform_xml(case))
        engine = simgrid.Engine(["energy_oracle", "--cfg=host/model:ptask_L07",
                                 "--cfg=plugin:host_energy", "--log=root.thres:critical"])
        engine.load_platform(xml)
        hosts = [simgrid.Host.by_name(f"h{h}") for h in range(n)]
        handles = [lib.sg_host_by_name(f"h{h}".encode()) for h in range(n)]

        def energy(h: int) -> float:
            return lib.sg_host_get_consumed_energy(handles[h])

        def runner(k: int) -> None:
            for op in case["actors"][k]["ops"]:
                kind = op[0]
                if kind == "sleep":
                    simgrid.this_actor.sleep_for(op[1])
                elif kind == "exec":
                    simgrid.this_actor.execute(op[1])
                elif kind == "ptask":
                    ex = simgrid.this_actor.exec_init([hosts[h] for h in op[1]], op[2], op[3])
                    ex.start()
                    ex.wait()
                elif kind == "pstate":
                    hosts[op[1]].pstate = op[2]
                elif kind == "read":
                    reads.append([k, simgrid.Engine.clock, op[1], energy(op[1])])
                else:
                    raise ValueError(f"unknown op {op!r}")

        def finisher() -> None:
            nonlocal final
            simgrid.this_actor.sleep_for(case["end"])
            final = [energy(h) for h in range(n)]

        for k, actor in enumerate(case["actors"]):
            simgrid.Actor.create(f"a{k}", hosts[actor["host"]], runner, k)
        if case.get("end") is not None:
            simgrid.Actor.create("end", hosts[0], finisher)
        engine.run()
    json.dump({"reads": reads, "final": final}, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
