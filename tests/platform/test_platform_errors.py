"""Bad platforms give one-line PlatformErrors naming file, line, element, problem and fix."""

import re
from pathlib import Path

import pytest

from batsim_py.errors import PlatformError
from batsim_py.platform import load_platform

ZONE = '<zone id="z" routing="Full">\n{}\n</zone>'


def error_of(xml_file, body: str, version: str = "4.1") -> str:
    with pytest.raises(PlatformError) as info:
        load_platform(xml_file(body, version))
    message = str(info.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize(
    ("body", "line", "pattern"),
    [
        ('<link id="l3" bandwidth="10 MBps"/>', 4,
         r'<link id="l3">: bandwidth \'10 MBps\' is not a valid bandwidth \(no space allowed;'),
        ('<link id="l3" bandwidth="10KBps"/>', 4, r"unknown unit 'KBps'.*kBps"),
        ('<host id="h" speed="1Kf"/>', 4, r'<host id="h">: speed .*unknown unit \'Kf\''),
        ('<link id="l" bandwidth="1GBps" latency="1min"/>', 4, r"latency .*unknown unit 'min'"),
        ('<link id="l" latency="1s"/>', 4, r"required attribute 'bandwidth' is missing"),
        ('<host id="h"/>', 4, r"required attribute 'speed' is missing"),
        ('<host id="h" speed="1Gf" cores="2"/>', 4, r"unknown attribute 'cores'"),
        ('<host id="h" speed="1Gf"/>\n<host id="h" speed="2Gf"/>', 5,
         r"the name 'h' is already used by a host"),
        ('<host id="z" speed="1Gf"/>', 4, r"the name 'z' is already used by a zone"),
        ('<link id="l" bandwidth="1GBps"/>\n<link id="l" bandwidth="1GBps"/>', 5,
         r"link 'l' is declared twice"),
        ('<host id="a" speed="1Gf"/><host id="b" speed="1Gf"/>\n'
         '<route src="a" dst="b">\n<link_ctn id="nope"/></route>', 6,
         r'<link_ctn id="nope">: no link named \'nope\''),
        ('<host id="a" speed="1Gf"/><host id="b" speed="1Gf"/>\n'
         '<link id="x" bandwidth="1GBps" sharing_policy="SPLITDUPLEX"/>\n'
         '<route src="a" dst="b"><link_ctn id="x"/></route>', 6,
         r"link 'x' is SPLITDUPLEX: add direction"),
        ('<host id="a" speed="1Gf"/><host id="b" speed="1Gf"/>\n'
         '<link id="x" bandwidth="1GBps"/>\n'
         '<route src="a" dst="b"><link_ctn id="x" direction="UP"/></route>', 6,
         r"link 'x' is not SPLITDUPLEX"),
        ('<host id="a" speed="1Gf"/>\n<route src="a" dst="ghost"></route>', 5,
         r"dst 'ghost' is not a known host"),
        ('<host id="a" speed="1Gf"/><host id="b" speed="1Gf"/>\n<route src="a" dst="b"/>', 5,
         r"empty route"),
        ('<host id="a" speed="1Gf"/><host id="b" speed="1Gf"/><link id="l" bandwidth="1Bps"/>\n'
         '<route src="a" dst="b"><link_ctn id="l"/></route>\n'
         '<route src="b" dst="a"><link_ctn id="l"/></route>', 6,
         r"the route from 'b' to 'a' is declared twice.*symmetrical"),
        ('<host id="h" speed="1Gf,2Gf" pstate="2"/>', 4, r"pstate 2 does not exist"),
        ('<host id="h" speed="1Gf" core="0"/>', 4, r"core count 0 must be positive"),
        ('<host id="h" speed="1Gf" coordinates="1 2"/>', 4, r"coordinates '1 2' must be 3"),
        ('<link id="l" bandwidth="1GBps" sharing_policy="WIFI"/>', 4, r"WIFI links"),
        ('<link id="l" bandwidth="1GBps,2GBps"/>', 4, r"only WIFI links"),
        ('<link id="l" bandwidth="1GBps" sharing_policy="shared"/>', 4,
         r"sharing_policy 'shared' is not one of"),
        ('<link id="l" bandwidth="-1GBps"/>', 4, r"must be non-negative"),
        ('<host id="h" speed="1Gf" speed_file="s.txt"/>', 4, r"speed_file: profile file 's.txt' "
         "not found"),
        ('<host id="h" speed="1Gf" state_file="s.txt"/>', 4, r"state_file: state profiles .*not "
         "supported"),
        ('<include file="x.xml"/>', 4, r"<include> was removed"),
        ('<trace id="t" periodicity="1"/>', 4, r"needs a file attribute or its events"),
        ('<hots id="h"/>', 4, r"<hots id=\"h\">: unknown element"),
        ('<peer id="p" speed="1Gf" bw_in="1Bps" bw_out="1Bps"/>', 4, r"only allowed in .*Vivaldi"),
        ('<backbone id="b" bandwidth="1Bps" latency="0"/>', 4, r"only allowed in .*Cluster"),
        ('<cluster id="c" prefix="a" suffix="" radical="0-3" speed="1Gf" bw="1GBps" lat="0"'
         ' topology="TORUS" topo_parameters="2,x"/>', 4, r"dimension 'x' is not an integer"),
        ('<cluster id="c" prefix="a" suffix="" radical="0-x" speed="1Gf" bw="1GBps" lat="0"/>',
         4, r"radical: 'x' is not an integer"),
    ],
)
def test_located_errors(xml_file, body: str, line: int, pattern: str) -> None:
    message = error_of(xml_file, ZONE.format(body))
    assert re.search(rf"platform\.xml:{line}: ", message), message
    assert re.search(pattern, message), message


@pytest.mark.parametrize(("version", "why"), [("3", "too old"), ("0.0", "too old"),
                                              ("4.2", "from the future"),
                                              ("four", "not a number")])
def test_versions(xml_file, version: str, why: str) -> None:
    assert why in error_of(xml_file, ZONE.format(""), version)


@pytest.mark.parametrize("version", ["4", "4.0", "4.1", "4.10"])
def test_accepted_versions(xml_file, version: str) -> None:
    load_platform(xml_file(ZONE.format('<host id="h" speed="1Gf"/>'), version))


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(PlatformError, match="nope.xml: platform file not found"):
        load_platform(str(tmp_path / "nope.xml"))


def test_directory_is_not_a_file(tmp_path: Path) -> None:
    with pytest.raises(PlatformError, match="cannot read"):
        load_platform(str(tmp_path))


def test_invalid_xml(tmp_path: Path) -> None:
    path = tmp_path / "bad.xml"
    path.write_text('<platform version="4.1">\n<zone id="z" routing="Full">\n</platform>\n')
    with pytest.raises(PlatformError, match=r"bad.xml:3: invalid XML: mismatched tag"):
        load_platform(str(path))


def test_leading_blank_lines_are_tolerated(tmp_path: Path) -> None:
    path = tmp_path / "p.xml"
    path.write_text('\n\n<?xml version="1.0"?>\n<platform version="4">\n'
                    '<zone id="z" routing="Full"><host id="h" speed="x"/></zone></platform>')
    with pytest.raises(PlatformError, match=r"p.xml:5: <host id=\"h\">"):
        load_platform(str(path))


def test_wrong_root(tmp_path: Path) -> None:
    path = tmp_path / "r.xml"
    path.write_text("<plateform/>")
    with pytest.raises(PlatformError, match="root element must be <platform"):
        load_platform(str(path))


def test_no_zone(xml_file) -> None:
    assert "no <zone>" in error_of(xml_file, "")


def test_two_top_level_zones(xml_file) -> None:
    body = ZONE.format("") + '<zone id="y" routing="Full"></zone>'
    assert "second top-level zone 'y'" in error_of(xml_file, body)


def test_zone_route_errors(xml_file) -> None:
    base = """<zone id="top" routing="Full">
      <zone id="a" routing="Full"><host id="ha" speed="1Gf"/></zone>
      <zone id="b" routing="Full"><host id="hb" speed="1Gf"/></zone>
      <link id="l" bandwidth="1GBps"/>
      {}
    </zone>"""
    bad_gw = '<zoneRoute src="a" dst="b" gw_src="hb" gw_dst="hb"><link_ctn id="l"/></zoneRoute>'
    assert "gw_src 'hb' is not a host or router inside zone 'a'" in error_of(
        xml_file, base.format(bad_gw))
    bad_src = '<zoneRoute src="ha" dst="b" gw_src="ha" gw_dst="hb"><link_ctn id="l"/></zoneRoute>'
    assert "src 'ha' is not a zone inside zone 'top'" in error_of(xml_file, base.format(bad_src))
    p = load_platform(xml_file(base.format("")))
    with pytest.raises(PlatformError, match='no <zoneRoute src="a" dst="b">'):
        p.route("ha", "hb")


def test_unknown_routing(xml_file) -> None:
    msg = error_of(xml_file, '<zone id="z" routing="Star"></zone>')
    assert "routing 'Star' is unknown" in msg


def test_config_after_zone(xml_file) -> None:
    msg = error_of(xml_file, ZONE.format("") + "<config/>")
    assert "<config> must come before" in msg


def test_unknown_host_in_route_query(platform_of) -> None:
    p = platform_of(ZONE.format('<host id="h" speed="1Gf"/>'))
    with pytest.raises(PlatformError, match="no host or router named 'x'"):
        p.route("h", "x")


def test_zone_cannot_mix_hosts_and_zones(xml_file) -> None:
    body = ZONE.format('<host id="h" speed="1Gf"/>\n<zone id="y" routing="Full"></zone>')
    assert "holds hosts, so it cannot also hold zones" in error_of(xml_file, body)
    body = ZONE.format('<zone id="y" routing="Full"></zone>\n<host id="h" speed="1Gf"/>')
    assert "put hosts in a leaf zone" in error_of(xml_file, body)


@pytest.mark.parametrize(
    ("content", "pattern"),
    [
        (b'<?xml version="1.0" encoding="foo"?>\n<platform version="4.1"/>', r"e.xml:1: .*foo"),
        (b"\xff\xfe<plat", r"e.xml:1: invalid XML"),
        (b"", r"e.xml:1: invalid XML: no element found"),
    ],
)
def test_unreadable_xml(tmp_path: Path, content: bytes, pattern: str) -> None:
    path = tmp_path / "e.xml"
    path.write_bytes(content)
    with pytest.raises(PlatformError, match=pattern):
        load_platform(str(path))
