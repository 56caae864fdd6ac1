"""The worked examples of simgrid-models §1.8 (flat clusters) and §1.7 (routes across zones)."""

import pytest
from conftest import names

from batsim_py.platform import Platform

CLUSTERS = """
<zone id="world" routing="Full">
  <cluster id="c1" prefix="node-" suffix=".c1" radical="0-2,7" speed="1Gf,0.5Gf" core="2"
           bw="125MBps" lat="50us" bb_bw="1.25GBps" bb_lat="500us"/>
  <cluster id="c2" prefix="c2-" suffix="" radical="0-1" speed="1Gf" bw="10Gbps" lat="1us"
           sharing_policy="SHARED" bb_bw="100Gbps" bb_lat="0" bb_sharing_policy="FATPIPE"
           loopback_bw="100GBps" loopback_lat="0.1us" limiter_link="2.5GBps"/>
  <cluster id="c3" prefix="n" suffix="" radical="0-1" speed="1Gf" bw="1GBps" lat="10us"
           sharing_policy="FATPIPE"/>
  <link id="inter" bandwidth="1GBps" latency="1ms"/>
  <zoneRoute src="c1" dst="c2" gw_src="node-c1_router.c1" gw_dst="c2-c2_router">
    <link_ctn id="inter"/>
  </zoneRoute>
</zone>
"""


@pytest.fixture
def p(platform_of) -> Platform:
    return platform_of(CLUSTERS)


def test_hosts(p: Platform) -> None:
    assert list(p.hosts) == sorted(
        ["node-0.c1", "node-1.c1", "node-2.c1", "node-7.c1", "c2-0", "c2-1", "n0", "n1"],
        key=str.encode,
    )
    h = p.hosts["node-7.c1"]
    assert (h.speeds, h.cores, h.pstate, h.speed) == ((1e9, 5e8), 2, 0, 1e9)
    assert p.hosts["c2-0"].cores == 1


def test_links(p: Platform) -> None:
    def check(name: str, bw: float, lat: float, policy: str) -> None:
        link = p.links[name]
        assert (link.bandwidth, link.latency, link.policy) == (bw, lat, policy), name

    for i in (0, 1, 2, 7):
        for d in ("UP", "DOWN"):
            check(f"c1_link_{i}_{d}", 1.25e8, 50 * 1e-6, "SHARED")
    check("c1_backbone", 1.25e9, 500 * 1e-6, "SHARED")
    for i in (0, 1):
        check(f"c2_link_{i}", 1.25e9, 1e-6, "SHARED")
        check(f"c2_link_{i}_limiter", 2.5e9, 0.0, "SHARED")
        check(f"c2_link_{i}_loopback", 1e11, 0.1 * 1e-6, "FATPIPE")
        check(f"c3_link_{i}", 1e9, 10 * 1e-6, "SHARED")  # FATPIPE ignored on clusters
    check("c2_backbone", 1.25e10, 0.0, "FATPIPE")
    check("__loopback__", 10e9, 0.0, "FATPIPE")
    assert "c1_link_0" not in p.links and "c3_backbone" not in p.links
    assert len(p.links) == 8 + 1 + 6 + 1 + 2 + 1 + 1


@pytest.mark.parametrize(
    ("src", "dst", "links", "latency"),
    [
        ("node-0.c1", "node-1.c1", ["c1_link_0_UP", "c1_backbone", "c1_link_1_DOWN"], 6e-4),
        ("node-0.c1", "node-0.c1", ["c1_link_0_UP", "c1_backbone", "c1_link_0_DOWN"], 6e-4),
        ("c2-0", "c2-1",
         ["c2_link_0_limiter", "c2_link_0", "c2_backbone", "c2_link_1", "c2_link_1_limiter"],
         2e-6),
        ("c2-0", "c2-0", ["c2_link_0_loopback"], 1e-7),
        ("n0", "n0", ["c3_link_0"], 1e-5),
        ("n0", "n1", ["c3_link_0", "c3_link_1"], 2e-5),
    ],
)
def test_intra_cluster_routes(p: Platform, src, dst, links, latency) -> None:
    r = p.route(src, dst)
    assert names(r) == links
    assert r.latency == pytest.approx(latency, rel=1e-12)
    assert r.latency == sum(link.latency for link in r.links) or len(r.links) > 2


def test_route_across_zones(p: Platform) -> None:
    r = p.route("node-0.c1", "c2-1")
    assert names(r) == ["c1_link_0_UP", "c1_backbone", "inter", "c2_backbone", "c2_link_1",
                        "c2_link_1_limiter"]
    assert r.latency == pytest.approx(1.551e-3, rel=1e-12)
    # SimGrid adds the zoneRoute's latency first, then the source piece, then the destination's.
    assert r.latency == ((((1e-3 + 50 * 1e-6) + 500 * 1e-6) + 0.0) + 1e-6) + 0.0
    back = p.route("c2-1", "node-0.c1")
    assert names(back) == ["c2_link_1_limiter", "c2_link_1", "c2_backbone", "inter",
                           "c1_backbone", "c1_link_0_DOWN"]


def test_routers_are_not_hosts(p: Platform) -> None:
    assert "node-c1_router.c1" not in p.hosts
    r = p.route("node-0.c1", "node-c1_router.c1")  # routers are routable netpoints
    assert names(r) == ["c1_link_0_UP", "c1_backbone"]


def test_route_is_cached(p: Platform) -> None:
    assert p.route("n0", "n1") is p.route("n0", "n1")


def test_radicals_quirks(platform_of) -> None:
    p = platform_of("""
      <cluster id="c" prefix="h" suffix="x" radical="3,1-2,0;5" speed="1Gf" bw="1GBps"
               lat="0" router_id="gw"/>""")
    assert sorted(p.hosts) == ["h0x", "h1x", "h2x", "h3x"]  # ';' is not a separator
    assert names(p.route("h3x", "gw")) == ["c_link_3_UP"]


def test_cluster_properties(platform_of) -> None:
    p = platform_of("""
      <zone id="w" routing="Full">
        <prop id="site" value="x"/><prop id="wattage_off" value="1"/>
        <cluster id="c" prefix="h" suffix="" radical="0-1" speed="1Gf" bw="1GBps" lat="0">
          <prop id="wattage_off" value="9.75"/><prop id="role" value="storage"/>
        </cluster>
      </zone>""")
    h = p.hosts["h1"]
    assert h.properties == {"wattage_off": "9.75", "role": "storage"}
    assert h.zone_properties == {"site": "x", "wattage_off": "9.75", "role": "storage"}


def test_hand_written_cluster_zone(platform_of) -> None:
    p = platform_of("""
      <zone id="w" routing="Cluster">
        <host id="a" speed="1Gf"/><host id="b" speed="1Gf"/>
        <link id="la" bandwidth="1GBps" latency="1us" sharing_policy="SPLITDUPLEX"/>
        <link id="lb_up" bandwidth="1GBps" latency="2us"/>
        <link id="lb_down" bandwidth="1GBps" latency="3us"/>
        <link id="lo" bandwidth="10GBps" latency="0" sharing_policy="FATPIPE"/>
        <host_link id="a" up="la_UP" down="la_DOWN"/>
        <host_link id="b" up="lb_up" down="lb_down"/>
        <cabinet id="cab" prefix="k" suffix="" radical="0-1" speed="2Gf" bw="1GBps" lat="5us"/>
        <backbone id="bb" bandwidth="10GBps" latency="10us"/>
        <route src="b" dst="b"><link_ctn id="lo"/></route>
      </zone>""")
    assert names(p.route("a", "b")) == ["la_UP", "bb", "lb_down"]
    assert names(p.route("a", "a")) == ["la_UP", "bb", "la_DOWN"]
    assert names(p.route("b", "b")) == ["lo"]
    assert names(p.route("k0", "a")) == ["link_k0_UP", "bb", "la_DOWN"]
    assert p.hosts["k1"].speeds == (2e9,)
