"""Parallel tasks on a platform with profiles (<trace>/<trace_connect>), in real SimGrid.

Run by Debian's /usr/bin/python3 with python3-simgrid (SimGrid 3.32):

    /usr/bin/python3 simgrid_trace_oracle.py case.json

A case: {"platform": "<platform XML text>", "tasks": [{"start": s, "hosts": [name, ...],
"flops": [...], "bytes": [... n*n ...]}, ...]}. Each task runs in its own actor on its first
host: it sleeps until `start`, then runs exec_init(hosts, flops, bytes) to its end. Prints
{"ends": [date, ...]} in the order of "tasks".
"""

from __future__ import annotations

import json
import os
import sys
import tempfile


def main(path: str) -> None:
    import simgrid

    with open(path) as f:
        case = json.load(f)
    with tempfile.TemporaryDirectory() as tmp:
        xml = os.path.join(tmp, "platform.xml")
        with open(xml, "w") as f:
            f.write(case["platform"])
        for name, text in case.get("files", {}).items():
            with open(os.path.join(tmp, name), "w") as f:
                f.write(text)
        os.chdir(tmp)
        engine = simgrid.Engine(["oracle", "--cfg=host/model:ptask_L07",
                                 "--log=root.thres:critical"])
        engine.load_platform(xml)
        ends = [None] * len(case["tasks"])

        def runner(k: int) -> None:
            task = case["tasks"][k]
            if task["start"] > 0:
                simgrid.this_actor.sleep_for(task["start"])
            hosts = [simgrid.Host.by_name(h) for h in task["hosts"]]
            ex = simgrid.this_actor.exec_init(hosts, task["flops"], task["bytes"])
            ex.start()
            ex.wait()
            ends[k] = simgrid.Engine.clock

        for k, task in enumerate(case["tasks"]):
            simgrid.Actor.create(f"t{k}", simgrid.Host.by_name(task["hosts"][0]), runner, k)
        engine.run()
    json.dump({"ends": ends}, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
