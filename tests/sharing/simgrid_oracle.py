"""Run concurrent ptasks in real SimGrid (ptask_L07) and print their completion dates.

Run by Debian's /usr/bin/python3 with python3-simgrid installed (not by the project's Python):

    /usr/bin/python3 simgrid_oracle.py case.json

One case per process (SimGrid allows one engine per process). The case is plain numbers:

    {"hosts": [{"speed": 1e9, "cores": 2}, ...],                         # named h0, h1, ...
     "links": [{"bandwidth": 1.25e8, "latency": 1e-4, "fatpipe": false}, ...],  # l0, l1, ...
     "routes": [[src, dst, [link, ...]], ...],                   # one-way, Full zone
     "ptasks": [{"start": 0.0, "hosts": [0, 1], "flops": [...], "bytes": [... n*n ...]}, ...]}

Hosts without a declared self route use SimGrid's `__loopback__`. Prints
{"ends": [date, ...]} on stdout, dates in the order of "ptasks".
"""

from __future__ import annotations

import json
import os
import sys
import tempfile

# The shared platform writer lives beside the tests (this script runs outside pytest).
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from simgrid_oracle_support import full_zone_xml  # noqa: E402


def platform_xml(case: dict) -> str:
    hosts = [f'<host id="h{h}" speed="{host["speed"]!r}f" core="{host["cores"]}"/>'
             for h, host in enumerate(case["hosts"])]
    return full_zone_xml(hosts, case["links"], case["routes"])


def main(path: str) -> None:
    import simgrid

    with open(path) as f:
        case = json.load(f)
    with tempfile.TemporaryDirectory() as tmp:
        xml = os.path.join(tmp, "platform.xml")
        with open(xml, "w") as f:
            f.write(platform_xml(case))
        engine = simgrid.Engine(["oracle", "--cfg=host/model:ptask_L07",
                                 "--log=root.thres:critical"])
        engine.load_platform(xml)
        hosts = [simgrid.Host.by_name(f"h{h}") for h in range(len(case["hosts"]))]
        ends = [None] * len(case["ptasks"])

        def runner(k: int) -> None:
            task = case["ptasks"][k]
            if task["start"] > 0:
                simgrid.this_actor.sleep_for(task["start"])
            ex = simgrid.this_actor.exec_init([hosts[h] for h in task["hosts"]],
                                              task["flops"], task["bytes"])
            ex.start()
            ex.wait()
            ends[k] = simgrid.Engine.clock

        for k, task in enumerate(case["ptasks"]):
            simgrid.Actor.create(f"p{k}", hosts[task["hosts"][0]], runner, k)
        engine.run()
    json.dump({"ends": ends}, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
