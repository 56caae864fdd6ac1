"""Platform files, malformed or random: loading (and numbering machines, resolving every route)
returns normally or raises a one-line PlatformError; valid random platforms simulate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fuzzlib import SMALL4, outcome
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from batsim_py.decision.inprocess import InProcess
from batsim_py.errors import BatsimPyError, PlatformError
from batsim_py.platform.machines import build_machines
from batsim_py.platform.reader import load_platform
from batsim_py.run import RunSpec, run_simulation
from batsim_py.schedulers import get_scheduler
from batsim_py.sim.options import Options

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                      HealthCheck.too_slow])
SMALL4_TEXT = Path(SMALL4).read_text()


def load_all(path: Path, master: str = "master_host") -> Any:
    """What a run does with a platform before simulating: read, number, route everything."""
    platform = load_platform(str(path))
    machines = build_machines(platform, master_host=master)
    names = list(platform.hosts)[:6]
    for a in names:
        for b in names:
            platform.route(a, b)
    return machines


def check(tmp_path: Path, text: str | bytes, master: str = "master_host") -> Any:
    path = tmp_path / "p.xml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
    result = outcome(lambda: load_all(path, master), seconds=4.0)
    if isinstance(result, BatsimPyError):
        assert isinstance(result, PlatformError), repr(result)
        assert str(path) in str(result), str(result)
    return result


# -- mutations of a real platform -----------------------------------------------------------

SNIPPETS = ['<host id="node0" speed="1Gf"/>', '<host id="h" speed="x"/>', "<zone", "</zone>",
            '<link id="l" bandwidth="1GBps"/>', '"', "<", ">", "/>", '<route src="node0" '
            'dst="nope"><link_ctn id="uplink"/></route>', '<prop id="role" value="master"/>',
            '<prop id="role" value="storage"/>', '<host id="m" speed="0f"/>',
            '<zone id="z2" routing="Floyd"></zone>', '<link_ctn id="__loopback__"/>',
            '<config><prop id="network/loopback-bw" value="abc"/></config>', "&amp;", "&bogus;",
            '<cluster id="c" prefix="a" suffix="" radical="0-1" speed="1Gf" bw="1Bps" lat="0"/>',
            'speed="-1Gf"', 'core="-2"', 'pstate="7"', "\x00", "é", "<!--", "-->", "<![CDATA["]


@st.composite
def mutated(draw: st.DrawFn) -> str:
    text = SMALL4_TEXT
    for _ in range(draw(st.integers(1, 4))):
        pos = draw(st.integers(0, len(text)))
        if draw(st.booleans()):
            end = min(len(text), pos + draw(st.integers(1, 40)))
            text = text[:pos] + text[end:]
        else:
            text = text[:pos] + draw(st.sampled_from(SNIPPETS) | st.text(max_size=5)) + text[pos:]
    return text


@settings(max_examples=200, **SETTINGS)
@given(mutated())
def test_mutated_platform(tmp_path: Path, text: str) -> None:
    check(tmp_path, text)


@settings(max_examples=100, **SETTINGS)
@given(st.one_of(st.binary(max_size=60), st.text(max_size=60)))
@example(b'<?xml version="1.0" encoding="latin-1"?><platform version="4.1"/>')
@example('<platform version="4.1">' + "<zone id='z' routing='Full'>" * 2000)
@example('<!DOCTYPE p [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]>'
         '<platform version="4.1">&b;</platform>')
def test_raw_content(tmp_path: Path, text: str | bytes) -> None:
    check(tmp_path, text)


# -- random element trees ----------------------------------------------------------------------

TAGS = ["zone", "AS", "host", "link", "route", "link_ctn", "cluster", "router", "prop", "config",
        "zoneRoute", "bypassRoute", "backbone", "host_link", "cabinet", "peer", "disk", "bogus"]
ATTRS = ["id", "speed", "core", "pstate", "bandwidth", "latency", "src", "dst", "routing",
         "sharing_policy", "direction", "prefix", "suffix", "radical", "bw", "lat", "value",
         "gw_src", "gw_dst", "symmetrical", "up", "down", "coordinates", "bw_in", "bw_out",
         "read_bw", "write_bw", "topology", "bb_bw", "limiter_link", "loopback_bw"]
VALUES = ["a", "b", "z", "h0", "l0", "1Gf", "1GBps", "0", "-1", "1e400Gf", "nan", "inf", "Full",
          "Floyd", "Dijkstra", "None", "Cluster", "Vivaldi", "SPLITDUPLEX", "FATPIPE", "UP",
          "DOWN", "0-3", "3-0", "0-99999999", "1,2", "1 2 3", "", "master", "role", "NO",
          "0x10Gf", "1Gf,2Gf", "99999999999999999999", "2", "FLAT"]


def element(depth: int) -> st.SearchStrategy[str]:
    children = st.just("") if depth == 0 else st.lists(element(depth - 1), max_size=3).map(
        "".join)
    return st.builds(
        lambda tag, attrs, inner: "<%s %s>%s</%s>" % (
            tag, " ".join(f'{k}="{v}"' for k, v in attrs.items()), inner, tag),
        st.sampled_from(TAGS), st.dictionaries(st.sampled_from(ATTRS), st.sampled_from(VALUES),
                                               max_size=5), children)


@settings(max_examples=300, **SETTINGS)
@given(st.lists(element(3), max_size=3).map("".join), st.sampled_from(["4.1", "4", "3", "x"]))
def test_random_trees(tmp_path: Path, body: str, version: str) -> None:
    check(tmp_path, f'<?xml version="1.0"?>\n<platform version="{version}">\n{body}\n</platform>')


# -- valid random platforms, simulated -------------------------------------------------------

speeds = st.sampled_from(["1Gf", "2Gf", "500Mf", "1.5Gf, 750Mf", "100Mf"])
bandwidths = st.sampled_from(["1GBps", "125MBps", "10Gbps", "1MBps"])
latencies = st.sampled_from(["0", "10us", "100us", "1ms"])


@st.composite
def valid_platforms(draw: st.DrawFn) -> str:
    n = draw(st.integers(1, 5))
    if draw(st.booleans()):  # a flat cluster, the master inside it
        radical = f"0-{n}"
        return (f'<?xml version="1.0"?>\n<platform version="4.1">\n<cluster id="c" prefix="n" '
                f'suffix="" radical="{radical}" speed="{draw(speeds).split(",")[0]}" '
                f'bw="{draw(bandwidths)}" lat="{draw(latencies)}" '
                f'bb_bw="{draw(bandwidths)}" bb_lat="{draw(latencies)}"/>\n</platform>')
    hosts = ["master_host"] + [f"n{i}" for i in range(n)]
    routing = draw(st.sampled_from(["Full", "Floyd", "Dijkstra"]))
    lines = [f'<host id="{h}" speed="{draw(speeds)}" core="{draw(st.integers(1, 4))}"/>'
             for h in hosts]
    policy = draw(st.sampled_from(["SHARED", "FATPIPE", "SPLITDUPLEX"]))
    for h in hosts:
        lines.append(f'<link id="l_{h}" bandwidth="{draw(bandwidths)}" '
                     f'latency="{draw(latencies)}" sharing_policy="{policy}"/>')
    ctn = ('<link_ctn id="l_{}" direction="UP"/>' if policy == "SPLITDUPLEX"
           else '<link_ctn id="l_{}"/>')
    if routing == "Full":
        for i, a in enumerate(hosts):
            for b in hosts[i:]:
                lines.append(f'<route src="{a}" dst="{b}">{ctn.format(a)}'
                             f'{ctn.format(b) if a != b else ""}</route>')
    else:  # a star around a router
        lines.append('<router id="r"/>')
        for h in hosts:
            lines.append(f'<route src="{h}" dst="r">{ctn.format(h)}</route>')
    body = "\n".join(lines)
    return (f'<?xml version="1.0"?>\n<platform version="4.1">\n<zone id="z" '
            f'routing="{routing}">\n{body}\n</zone>\n</platform>')


@settings(max_examples=25, **SETTINGS)
@given(valid_platforms(), st.integers(1, 6), st.sampled_from(["delay", "ph"]))
def test_valid_platforms_simulate(tmp_path: Path, xml: str, nb_jobs: int, kind: str) -> None:
    platform = tmp_path / "p.xml"
    platform.write_text(xml)
    master = "n0" if "<cluster" in xml else "master_host"  # a cluster names its hosts
    loaded = check(tmp_path, xml, master)
    assert not isinstance(loaded, BatsimPyError), str(loaded)
    nb = len(loaded.compute)
    profile = ({"type": "delay", "delay": 3} if kind == "delay"
               else {"type": "parallel_homogeneous", "cpu": 1e9, "com": 1e6})
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({
        "nb_res": nb, "profiles": {"p": profile},
        "jobs": [{"id": i, "subtime": i % 3, "res": 1 + i % nb, "profile": "p"}
                 for i in range(nb_jobs)]}))
    spec = RunSpec(str(platform), [str(workload)], Options(export_prefix=str(tmp_path / "o")),
                   master_host=master)
    result = outcome(lambda: run_simulation(spec, InProcess(get_scheduler("fcfs"))), seconds=8.0)
    assert not isinstance(result, BatsimPyError), str(result)
    assert (tmp_path / "o_jobs.csv").read_text().count("COMPLETED") == nb_jobs


def test_regression_huge_cluster_radical(tmp_path: Path) -> None:
    """Found by the fuzzer: radical="0-99999999999" tried to build 10^11 hosts (MemoryError)."""
    xml = ('<?xml version="1.0"?>\n<platform version="4.1">\n<cluster id="c" prefix="n" '
           'suffix="" radical="0-99999999999" speed="1Gf" bw="1GBps" lat="0"/>\n</platform>')
    result = check(tmp_path, xml)
    assert isinstance(result, PlatformError)
    assert "p.xml:3: <cluster id=\"c\">: radical: '0-99999999999' gives more than" in str(result)
