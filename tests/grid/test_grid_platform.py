"""Which machines form which cluster: a zone (or <cluster>) per cluster under the root zone,
or a `cluster` property on hosts or zones."""

from __future__ import annotations

from pathlib import Path

import pytest

from batsim_py.errors import PlatformError
from batsim_py.grid.platform import grid_clusters
from batsim_py.platform.machines import build_machines
from batsim_py.platform.reader import load_platform

ROOT = Path(__file__).resolve().parents[2]


def _clusters(path: Path):
    return grid_clusters(build_machines(load_platform(str(path))), str(path))


def test_one_cluster_zone_each():
    clusters = _clusters(ROOT / "platforms" / "grid3.xml")
    assert {n: len(c.machines) for n, c in clusters.items()} == {"alpha": 32, "beta": 64,
                                                                 "gamma": 128}
    assert [c.speed for c in clusters.values()] == [1e9, 1.5e9, 2e9]
    assert [c.cores for c in clusters.values()] == [16, 16, 32]
    assert clusters["beta"].machines == tuple(range(32, 96))


def test_cluster_properties_win_over_zones(tmp_path):
    path = tmp_path / "p.xml"
    path.write_text(
        '<?xml version="1.0"?>\n<platform version="4.1">\n<zone id="z" routing="Full">\n'
        '<zone id="left" routing="None"><prop id="cluster" value="east"/>\n'
        '  <host id="a" speed="1Gf"/><host id="b" speed="1Gf"/></zone>\n'
        '<zone id="right" routing="None">\n'
        '  <host id="c" speed="2Gf"><prop id="cluster" value="west"/></host>\n'
        '  <host id="d" speed="2Gf"/></zone>\n'
        '<zone id="m" routing="None"><host id="master_host" speed="1Gf"/></zone>\n'
        '</zone>\n</platform>\n')
    clusters = _clusters(path)
    assert {n: c.hosts for n, c in clusters.items()} == {"east": ("a", "b"), "west": ("c",),
                                                         "right": ("d",)}


def test_hosts_outside_any_cluster(tmp_path):
    with pytest.raises(PlatformError, match="hosts node0, node1, node2, node3 belong to no "
                                            "cluster"):
        _clusters(ROOT / "platforms" / "small4.xml")
