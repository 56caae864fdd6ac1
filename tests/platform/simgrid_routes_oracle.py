"""Every route between the hosts of a platform, as real SimGrid computes it.

Run by Debian's /usr/bin/python3 with python3-simgrid (SimGrid 3.32, what Batsim 4.2.1 used):

    /usr/bin/python3 simgrid_routes_oracle.py platform.xml

Prints {"src|dst": [[link names], latency, [link bandwidths]], ...} (pairs without a route are
left out). Routes are asked from inside an actor: before the run, zones are not sealed yet.
"""

from __future__ import annotations

import json
import sys


def main(path: str) -> None:
    import simgrid

    engine = simgrid.Engine(["oracle", "--cfg=host/model:ptask_L07", "--log=root.thres:critical"])
    engine.load_platform(path)
    hosts = sorted(engine.all_hosts, key=lambda h: h.name)
    out = {}

    def dump() -> None:
        for a in hosts:
            for b in hosts:
                try:
                    links, latency = a.route_to(b)
                except Exception:  # no route between these two (e.g. no zoneRoute)
                    continue
                out[f"{a.name}|{b.name}"] = [[link.name for link in links], latency,
                                             [link.bandwidth for link in links]]

    simgrid.Actor.create("dump", hosts[0], dump)
    engine.run()
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
