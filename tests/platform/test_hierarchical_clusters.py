"""TORUS, FAT_TREE and DRAGONFLY clusters: every route (link names, bandwidths, latency) of
small instances against real SimGrid 3.32 (Debian python3-simgrid), plus facts that need no
oracle and a whole simulation on each topology."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from batsim_py.errors import PlatformError
from batsim_py.platform.reader import load_platform

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from simgrid_oracle_support import SYSTEM_PYTHON, simgrid_available  # noqa: E402

ORACLE = Path(__file__).with_name("simgrid_routes_oracle.py")


def platform(*clusters: str, extra: str = "") -> str:
    return ('<?xml version="1.0"?>\n<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">'
            '\n<platform version="4.1">\n<zone id="world" routing="Full">\n'
            + "\n".join(clusters) + extra + "\n</zone>\n</platform>\n")


def cluster(cid: str, prefix: str, radical: str, topology: str, params: str, more: str = "") -> str:
    return (f'<cluster id="{cid}" prefix="{prefix}" radical="{radical}" suffix="" speed="1Gf" '
            f'bw="125MBps" lat="50us" topology="{topology}" topo_parameters="{params}" {more}/>')


# The master in its own zone, each cluster reached through one of its hosts (no routers).
GATEWAYS = (("a", "a3", 100), ("b", "b5", 200), ("t", "t4", 300), ("d1", "x1", 400),
            ("d2", "y6", 500))
MULTI = platform(
    '<zone id="m" routing="Full"><host id="master_host" speed="1Gf"/></zone>',
    cluster("a", "a", "0-7", "FAT_TREE", "2;2,4;2,2;2,1"),
    cluster("b", "b", "0-7", "FAT_TREE", "2;2,4;2,2;2,1"),
    cluster("t", "t", "0-5", "TORUS", "3,2"),
    cluster("d1", "x", "0-7", "DRAGONFLY", "2,1;1,1;2,1;2"),
    cluster("d2", "y", "0-7", "DRAGONFLY", "2,1;1,1;2,1;2"),
    extra="".join(f'<link id="m{z}" bandwidth="10GBps" latency="{lat}us"/>'
                  for z, _, lat in GATEWAYS) + "".join(
        f'<zoneRoute src="m" dst="{z}" gw_src="master_host" gw_dst="{gw}">'
        f'<link_ctn id="m{z}"/></zoneRoute>' for z, gw, _ in GATEWAYS),
)

CASES = {
    "torus_3x2x2": platform(cluster("bob_cluster", "node-", "0-11", "TORUS", "3,2,2")),
    "torus_shared_loopback_limiter": platform(cluster(
        "t", "n", "0-29", "TORUS", "5,3,2",
        'sharing_policy="SHARED" loopback_bw="10GBps" loopback_lat="1us" limiter_link="2GBps"')),
    "torus_radicals_out_of_order": platform(cluster("t", "n", "3,7,1-2,4-6,8-9", "TORUS", "4,2")),
    "fat_tree_2_levels": platform(cluster("bob", "node-", "0-15", "FAT_TREE", "2;4,4;1,2;1,2")),
    "fat_tree_3_levels_limiters": platform(cluster(
        "f", "h", "0-26", "FAT_TREE", "3;3,3,3;1,2,3;1,1,2",
        'limiter_link="3GBps" loopback_bw="9GBps"')),
    "fat_tree_parallel_cables": platform(cluster("f", "h", "0-7", "FAT_TREE", "2;2,4;2,2;2,1",
                                                 'sharing_policy="SHARED"')),
    "dragonfly_3_groups": platform(cluster("d", "d", "0-35", "DRAGONFLY", "3,1;2,2;3,1;2")),
    "dragonfly_limiters": platform(cluster(
        "d", "d", "0-47", "DRAGONFLY", "2,2;3,1;4,3;2",
        'sharing_policy="SHARED" limiter_link="5GBps" loopback_bw="1GBps"')),
    "several_clusters_and_gateways": MULTI,
}
SLOW = {"torus_shared_loopback_limiter", "fat_tree_3_levels_limiters", "dragonfly_limiters"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n
                                  for n in CASES])
def test_routes_match_simgrid(name: str, tmp_path: Path) -> None:
    if not simgrid_available():
        pytest.skip("Debian python3-simgrid is not installed (apt-get install python3-simgrid)")
    path = tmp_path / "platform.xml"
    path.write_text(CASES[name])
    res = subprocess.run([SYSTEM_PYTHON, str(ORACLE), str(path)], capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    oracle = json.loads(res.stdout)
    ours = load_platform(str(path))
    assert oracle
    wrong = []
    for pair, (names, latency, bandwidths) in oracle.items():
        src, dst = pair.split("|")
        route = ours.route(src, dst)
        got = ([link.name for link in route.links], route.latency,
               [link.bandwidth for link in route.links])
        if got != (names, latency, bandwidths):
            wrong.append((pair, got, (names, latency, bandwidths)))
    assert not wrong, f"{len(wrong)} of {len(oracle)} routes differ, e.g. {wrong[:3]}"


def test_samples_known_from_simgrid(tmp_path: Path) -> None:
    """Routes recorded from SimGrid 3.32 in research/simgrid-models.md §1.9."""
    path = tmp_path / "t.xml"
    path.write_text(CASES["torus_3x2x2"])
    route = load_platform(str(path)).route("node-0", "node-11")
    assert [link.name for link in route.links] == [
        "bob_cluster_link_from_2_to_0_DOWN", "bob_cluster_link_from_2_to_5_UP",
        "bob_cluster_link_from_5_to_11_UP"]
    assert route.latency == pytest.approx(1.5e-4)
    path.write_text(CASES["fat_tree_2_levels"])
    route = load_platform(str(path)).route("node-0", "node-15")
    assert [link.name for link in route.links] == [
        "link_from_0_31_0_UP", "link_from_31_26_19_UP", "link_from_28_26_30_DOWN",
        "link_from_15_28_15_DOWN"]


@pytest.mark.parametrize(("topology", "params", "message"), [
    ("TORUS", "3,x", "not an integer"),
    ("TORUS", "3,0", "dimensions > 0"),
    ("TORUS", "4,4", "insufficient number of radicals"),
    ("FAT_TREE", "2;4,4;1,2", "4 parts"),
    ("FAT_TREE", "2;4;1,2;1,2", "three vectors"),
    ("DRAGONFLY", "2,1;1,1;2", "GROUPS,BLUE"),
    ("DRAGONFLY", "3,1;1,1;2,1;1", "at most as many"),
])
def test_bad_topologies_are_refused(tmp_path: Path, topology: str, params: str,
                                    message: str) -> None:
    path = tmp_path / "p.xml"
    path.write_text(platform(cluster("c", "n", "0-11", topology, params)))
    with pytest.raises(PlatformError, match=message):
        load_platform(str(path))


@pytest.mark.parametrize("topology", ["TORUS", "FAT_TREE", "DRAGONFLY"])
def test_simulation_on_each_topology(tmp_path: Path, topology: str) -> None:
    """A Batsim run on 8 hosts of each topology: parallel jobs exchange bytes over its links."""
    params = {"TORUS": "2,2,2", "FAT_TREE": "2;2,4;2,2;2,1", "DRAGONFLY": "2,1;1,1;2,1;2"}
    (tmp_path / "p.xml").write_text(platform(
        '<zone id="m" routing="Full"><host id="master_host" speed="1Gf"/></zone>',
        cluster("c", "n", "0-7", topology, params[topology]),
        extra='<link id="up" bandwidth="10GBps" latency="10us"/><zoneRoute src="m" dst="c" '
              'gw_src="master_host" gw_dst="n0"><link_ctn id="up"/></zoneRoute>'))
    (tmp_path / "w.json").write_text(json.dumps({"nb_res": 8, "jobs": [
        {"id": i, "subtime": i, "res": 4, "profile": "p"} for i in range(4)], "profiles": {
        "p": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 1.25e8}}}))
    res = subprocess.run([sys.executable, "-m", "batsim_py.cli", "-p", str(tmp_path / "p.xml"),
                          "-w", str(tmp_path / "w.json"), "--scheduler", "fcfs", "-q", "-e",
                          str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    rows = (tmp_path / "out_jobs.csv").read_text().splitlines()[1:]
    assert len(rows) == 4 and all("COMPLETED_SUCCESSFULLY" in r for r in rows)
    runtimes = [float(r.split(",")[9]) for r in rows]
    assert min(runtimes) > 1.0  # the exchanges take longer than the 1 s of computation
