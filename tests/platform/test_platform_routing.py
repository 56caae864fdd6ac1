"""Routes inside and across zones: symmetry, split-duplex links, graphs, Vivaldi, self routes."""

import pytest
from conftest import names

from batsim_py.errors import PlatformError
from batsim_py.platform.cluster import parse_radicals


def test_splitduplex_reverse_route_swaps_up_and_down(platform_of) -> None:
    p = platform_of("""
      <zone id="z" routing="Full">
        <host id="a" speed="1Gf"/><host id="b" speed="1Gf"/>
        <link id="x" bandwidth="1GBps" latency="1us" sharing_policy="SPLITDUPLEX"/>
        <link id="y" bandwidth="2GBps" latency="2us" sharing_policy="FULLDUPLEX"/>
        <link id="s" bandwidth="3GBps" latency="3us"/>
        <link id="y2" bandwidth="1GBps" sharing_policy="SPLITDUPLEX"/>
        <route src="a" dst="b">
          <link_ctn id="x" direction="UP"/><link_ctn id="s"/><link_ctn id="y" direction="DOWN"/>
          <link_ctn id="y2_UP"/>
        </route>
      </zone>""")
    assert names(p.route("a", "b")) == ["x_UP", "s", "y_DOWN", "y2_UP"]
    # reversed, UP<->DOWN swapped for directed hops; a half named directly stays as is
    assert names(p.route("b", "a")) == ["y2_UP", "y_UP", "s", "x_DOWN"]
    assert p.links["y_UP"].policy == "SHARED" and "y" not in p.links
    r = p.route("b", "a")
    assert r.latency == ((0.0 + 0.0) + 2e-6) + 3e-6 + 1e-6


def test_asymmetric_routes(platform_of) -> None:
    p = platform_of("""
      <zone id="z" routing="Full">
        <host id="a" speed="1Gf"/><host id="b" speed="1Gf"/>
        <link id="l1" bandwidth="1GBps"/><link id="l2" bandwidth="1GBps"/>
        <route src="a" dst="b" symmetrical="NO"><link_ctn id="l1"/></route>
        <route src="b" dst="a" symmetrical="no"><link_ctn id="l2"/></route>
      </zone>""")
    assert names(p.route("a", "b")) == ["l1"]
    assert names(p.route("b", "a")) == ["l2"]


def test_full_zone_missing_route_is_empty(platform_of) -> None:
    p = platform_of("""
      <zone id="z" routing="Full">
        <host id="a" speed="1Gf"/><host id="b" speed="1Gf"/>
      </zone>""")
    r = p.route("a", "b")
    assert (r.links, r.latency) == ((), 0.0)


def test_self_routes_default_to_the_hidden_loopback(platform_of) -> None:
    p = platform_of("""
      <zone id="z" routing="Full">
        <host id="a" speed="1Gf"/><host id="b" speed="1Gf"/>
        <link id="lo" bandwidth="498MBps" latency="15us" sharing_policy="FATPIPE"/>
        <route src="b" dst="b"><link_ctn id="lo"/></route>
      </zone>""")
    ra = p.route("a", "a")
    assert names(ra) == ["__loopback__"] and ra.latency == 0.0
    assert ra.links[0] == p.links["__loopback__"]
    assert (ra.links[0].bandwidth, ra.links[0].policy) == (10e9, "FATPIPE")
    rb = p.route("b", "b")
    assert names(rb) == ["lo"] and rb.latency == 15 * 1e-6


def test_config_sets_the_loopback(platform_of) -> None:
    p = platform_of("""
      <config><prop id="network/loopback-bw" value="1e6"/>
              <prop id="network/loopback-lat" value="0.5"/></config>
      <zone id="z" routing="Floyd"><host id="a" speed="1Gf"/></zone>""")
    link = p.route("a", "a").links[0]
    assert (link.name, link.bandwidth, link.latency) == ("__loopback__", 1e6, 0.5)
    assert p.config["network/loopback-bw"] == "1e6"


GRAPH = """
  <zone id="z" routing="{routing}">
    <host id="a" speed="1Gf"/><host id="b" speed="1Gf"/><host id="c" speed="1Gf"/>
    <host id="d" speed="1Gf"/>
    <router id="r"/>
    <link id="ab" bandwidth="1GBps" latency="1ms"/>
    <link id="bc" bandwidth="1GBps" latency="1ms"/>
    <link id="ar" bandwidth="1GBps" latency="10ms"/>
    <link id="rc" bandwidth="1GBps" latency="10ms"/>
    <link id="x1" bandwidth="1GBps"/><link id="x2" bandwidth="1GBps"/>
    <link id="x3" bandwidth="1GBps"/>
    <link id="cd" bandwidth="1GBps" sharing_policy="SPLITDUPLEX"/>
    <route src="a" dst="b"><link_ctn id="ab"/></route>
    <route src="b" dst="c"><link_ctn id="bc"/></route>
    <route src="a" dst="r"><link_ctn id="ar"/></route>
    <route src="r" dst="c"><link_ctn id="rc"/></route>
    <route src="a" dst="c"><link_ctn id="x1"/><link_ctn id="x2"/><link_ctn id="x3"/></route>
    <route src="c" dst="d" symmetrical="NO"><link_ctn id="cd" direction="UP"/></route>
  </zone>"""


@pytest.mark.parametrize("routing", ["Floyd", "Dijkstra", "DijkstraCache", "dijkstra"])
def test_shortest_routes_count_links(platform_of, routing: str) -> None:
    p = platform_of(GRAPH.format(routing=routing))
    # a->c: two 1-link edges (cost 2) beat the 3-link edge; latency plays no part
    r = p.route("a", "c")
    assert len(r.links) == 2 and names(r) in (["ab", "bc"], ["ar", "rc"])
    assert names(p.route("a", "d"))[-1] == "cd_UP"
    assert names(p.route("c", "a")) in (["bc", "ab"], ["rc", "ar"])
    with pytest.raises(PlatformError, match="no route from 'd' to 'a'"):
        p.route("d", "a")
    assert names(p.route("b", "b")) == ["__loopback__"]


def test_floyd_unique_shortest_path(platform_of) -> None:
    p = platform_of(GRAPH.format(routing="Floyd").replace(
        '<route src="a" dst="r"><link_ctn id="ar"/></route>', ""))
    r = p.route("a", "c")
    assert names(r) == ["ab", "bc"] and r.latency == 1e-3 + 1e-3


def test_vivaldi_latency_from_coordinates(platform_of) -> None:
    p = platform_of("""
      <zone id="v" routing="Vivaldi">
        <host id="a" speed="1Gf" coordinates="0 0 1"/>
        <host id="b" speed="1Gf" coordinates="3 4 2"/>
        <peer id="p" speed="1Gf" bw_in="1GBps" bw_out="2GBps" coordinates="3 0 0"/>
        <host id="nocoord" speed="1Gf"/>
      </zone>""")
    r = p.route("a", "b")
    assert r.links == () and r.latency == (5.0 + 1 + 2) / 1000.0
    assert p.route("a", "a").latency == 2 / 1000.0
    rp = p.route("p", "a")
    assert names(rp) == ["link_p_UP"] and rp.latency == (3.0 + 0 + 1) / 1000.0
    assert names(p.route("a", "p")) == ["link_p_DOWN"]
    assert names(p.route("p", "p")) == ["link_p_UP", "link_p_DOWN"]
    assert p.links["link_p_UP"].bandwidth == 2e9 and p.links["link_p_DOWN"].bandwidth == 1e9
    with pytest.raises(PlatformError, match="'nocoord'.*has no coordinates"):
        p.route("a", "nocoord")


def test_none_zone_and_gateways(platform_of) -> None:
    """Hosts alone in routing=None zones are their own gateways."""
    p = platform_of("""
      <zone id="top" routing="Full">
        <zone id="za" routing="None"><host id="a" speed="1Gf"/></zone>
        <zone id="zb" routing="None"><host id="b" speed="1Gf"/></zone>
        <link id="ab" bandwidth="1GBps" latency="1ms"/>
        <zoneRoute src="za" dst="zb" gw_src="a" gw_dst="b"><link_ctn id="ab"/></zoneRoute>
      </zone>""")
    assert names(p.route("a", "b")) == ["ab"] and names(p.route("b", "a")) == ["ab"]
    assert p.route("a", "a").links == ()


def test_nested_zones_floyd_top(platform_of) -> None:
    """A Floyd zone of zones chains zoneRoutes, inserting routes between gateways."""
    p = platform_of("""
      <zone id="top" routing="Floyd">
        <zone id="z1" routing="Full">
          <host id="h1" speed="1Gf"/><router id="g1"/>
          <link id="l1" bandwidth="1GBps" latency="1us"/>
          <route src="h1" dst="g1"><link_ctn id="l1"/></route>
        </zone>
        <zone id="z2" routing="Full">
          <router id="g2in"/><router id="g2out"/>
          <link id="t2" bandwidth="1GBps" latency="2us"/>
          <route src="g2in" dst="g2out"><link_ctn id="t2"/></route>
        </zone>
        <zone id="z3" routing="Full">
          <host id="h3" speed="1Gf"/><router id="g3"/>
          <link id="l3" bandwidth="1GBps" latency="3us"/>
          <route src="g3" dst="h3"><link_ctn id="l3"/></route>
        </zone>
        <link id="i12" bandwidth="1GBps" latency="10us"/>
        <link id="i23" bandwidth="1GBps" latency="20us"/>
        <zoneRoute src="z1" dst="z2" gw_src="g1" gw_dst="g2in"><link_ctn id="i12"/></zoneRoute>
        <zoneRoute src="z2" dst="z3" gw_src="g2out" gw_dst="g3"><link_ctn id="i23"/></zoneRoute>
      </zone>""")
    assert names(p.route("h1", "h3")) == ["l1", "i12", "t2", "i23", "l3"]
    assert names(p.route("h3", "h1")) == ["l3", "i23", "t2", "i12", "l1"]


def test_bypass_route(platform_of) -> None:
    p = platform_of("""
      <zone id="z" routing="Full">
        <host id="a" speed="1Gf"/><host id="b" speed="1Gf"/>
        <link id="slow" bandwidth="1MBps"/><link id="fast" bandwidth="1GBps"/>
        <route src="a" dst="b"><link_ctn id="slow"/></route>
        <bypassRoute src="a" dst="b"><link_ctn id="fast"/></bypassRoute>
      </zone>""")
    assert names(p.route("a", "b")) == ["fast"]
    assert names(p.route("b", "a")) == ["slow"]  # bypass routes are never symmetrical


def test_parse_radicals() -> None:
    assert parse_radicals("3,1-2") == [3, 1, 2]
    assert parse_radicals("0-1;5") == [0, 1]
    assert parse_radicals("5-3") == []
    with pytest.raises(ValueError):
        parse_radicals("1-2-3")


def test_deprecated_synonyms(platform_of) -> None:
    """AS, ASroute and bypassASroute are the v4 names of zone, zoneRoute, bypassZoneRoute."""
    p = platform_of("""
      <AS id="top" routing="Full">
        <AS id="a" routing="Full"><host id="ha" speed="1Gf"><disk id="d" read_bw="1GBps"
            write_bw="1GBps"/></host></AS>
        <AS id="b" routing="Full"><host id="hb" speed="1Gf"/></AS>
        <link id="l" bandwidth="1GBps"/><link id="by" bandwidth="2GBps"/>
        <ASroute src="a" dst="b" gw_src="ha" gw_dst="hb"><link_ctn id="l"/></ASroute>
        <bypassASroute src="b" dst="a" gw_src="hb" gw_dst="ha"><link_ctn id="by"/></bypassASroute>
      </AS>""")
    assert names(p.route("ha", "hb")) == ["l"]
    # SimGrid resolves the pieces to the bypass gateways even when they are the ends themselves
    assert names(p.route("hb", "ha")) == ["__loopback__", "by", "__loopback__"]
