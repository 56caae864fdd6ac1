"""Batsim's reference platforms (../shared/reference) and the platforms shipped in platforms/."""

import time
from pathlib import Path

import pytest
from conftest import names, reference_file

from batsim_py.platform import build_machines, load_platform

SHIPPED = Path(__file__).resolve().parents[2] / "platforms"


def test_small_platform() -> None:
    p = load_platform(str(reference_file("small_platform.xml")))
    m = build_machines(p)
    assert [(x.id, x.name) for x in m.all] == [(0, "Bourassa"), (1, "Fafard"), (2, "Ginette"),
                                              (3, "Jupiter")]
    assert m.master.name == "master_host"
    assert p.hosts["master_host"].speed == 98.095 * 1e6
    loop = p.route("master_host", "master_host")
    assert names(loop) == ["loopback"] and loop.latency == 15 * 1e-6
    assert (loop.links[0].bandwidth, loop.links[0].policy) == (498e6, "FATPIPE")
    r = p.route("Bourassa", "master_host")
    assert names(r) == ["7", "6", "1", "0", "2", "3", "4"]
    assert names(p.route("master_host", "Bourassa")) == ["4", "3", "2", "0", "1", "6", "7"]
    assert r.latency == pytest.approx(1.955365e-3, rel=1e-12)
    total = 0.0
    for link in r.links:
        total += link.latency
    assert r.latency == total


def test_cluster512() -> None:
    p = load_platform(str(reference_file("cluster512.xml")))
    m = build_machines(p)
    assert [x.name for x in m.compute[:4]] == ["a0", "a1", "a10", "a100"]
    assert len(m) == 512 and m.master.name == "master_host0"
    assert m.master.properties == {"role": "master"}
    assert p.hosts["master_host0"].zone_properties == {"role": "master"}
    r = p.route("a0", "master_host0")
    assert names(r) == ["my_cluster_1_link_0_UP", "my_cluster_1_backbone", "backbone",
                        "my_cluster_2_backbone", "my_cluster_2_link_0_DOWN"]
    assert r.latency == pytest.approx(1.6e-3, rel=1e-12)
    assert min(link.bandwidth for link in r.links) == 125e6
    assert p.route("master_host0", "master_host0").latency == pytest.approx(6e-4, rel=1e-12)
    assert len(build_machines(p, mmax=32).compute) == 32


def test_cluster512_loads_fast() -> None:
    path = str(reference_file("cluster512.xml"))
    load_platform(path)
    best = min(_timed(lambda: load_platform(path)) for _ in range(3))
    assert best < 0.1, best


def _timed(f) -> float:
    """CPU seconds of `f()` (not wall: other tests and processes share the cores)."""
    t = time.process_time()
    f()
    return time.process_time() - t


def test_no_net_vivaldi() -> None:
    p = load_platform(str(reference_file("energy_platform_homogeneous_no_net_128.xml")))
    m = build_machines(p)
    assert len(m) == 128 and m.master.name == "master_host"
    for a, b in [("host0", "master_host"), ("host5", "host5"), ("host1", "host127")]:
        r = p.route(a, b)
        assert (r.links, r.latency) == ((), 0.0)
    h = p.hosts["host0"]
    assert len(h.speeds) == 16 and h.speeds[13] == 1e-9 * 1e6
    assert h.properties["sleep_pstates"] == "13:14:15"
    assert m.compute[0].host.properties["role"] == ""
    assert p.config["contexts/stack-size"] == "16"


def test_cluster_energy_128() -> None:
    p = load_platform(str(reference_file("cluster_energy_128.xml")))
    m = build_machines(p)
    assert len(m) == 128 and m.master.name == "master_host0"
    assert p.hosts["host7"].properties["wattage_off"] == "9.75"
    assert p.hosts["host7"].zone_properties["sleep_pstates"] == "13:14:15"
    assert p.hosts["host7"].speeds[14] == 0.1639344262295082


def test_mercury4() -> None:
    p = load_platform(str(reference_file("energy_platform_mercury4.xml")))
    m = build_machines(p)
    assert [x.name for x in m.all] == ["Earth", "Mars", "Mercury", "Venus"]
    assert p.hosts["Mercury"].speeds[4] == 0.006666667


def test_shipped_small4() -> None:
    p = load_platform(str(SHIPPED / "small4.xml"))
    m = build_machines(p)
    assert [x.name for x in m.all] == ["node0", "node1", "node2", "node3"]
    assert len({x.host.speed for x in m.all}) == 4
    assert names(p.route("node0", "node0")) == ["loopback"]
    assert names(p.route("node2", "master_host")) == ["link2", "uplink"]
    assert p.hosts["node3"].cores == 2 and p.hosts["node3"].speeds == (1.5e9, 7.5e8)


def test_shipped_cluster128() -> None:
    p = load_platform(str(SHIPPED / "cluster128.xml"))
    m = build_machines(p)
    assert len(m) == 128 and m.master.name == "master_host0"
    assert [x.name for x in m.compute[:3]] == ["node0", "node1", "node10"]
    r = p.route("node5", "master_host0")
    assert names(r) == ["compute_link_5_UP", "compute_backbone", "interconnect",
                        "master_backbone", "master_link_0_DOWN"]
    assert r.latency == pytest.approx(1.6e-3, rel=1e-12)
