"""docs/errors.md is true: every entry's message, exit code and outputs are what `batsim-py` gives.

Each catalogue row starts with an id (`P03`, `D07`...). `CASES` holds, for every id, the
files and command line that trigger it; the test runs `batsim_py.cli.main` in a temporary
folder (so messages name `p.xml`, `w.json`... as in the catalogue) and compares the message
(`batsim-py: error: ...`, without the prefix), the exit code and whether `out_jobs.csv` was
written with what the catalogue says. A message changed in the code must be changed in the
catalogue; an entry added to the catalogue needs a case here.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from batsim_py.cli import main

PROJECT = Path(__file__).resolve().parents[1]
CATALOGUE = PROJECT / "docs" / "errors.md"
SMALL4 = (PROJECT / "platforms" / "small4.xml").read_text()
WORKLOAD = {"nb_res": 4, "profiles": {"d10": {"type": "delay", "delay": 10}},
            "jobs": [{"id": "a", "subtime": 0, "res": 1, "profile": "d10"},
                     {"id": "b", "subtime": 1, "res": 1, "profile": "d10"}]}
RUN = ["-p", "p.xml", "-w", "w.json", "-e", "out", "-q"]
FLUX_BAD = """
from batsim_py.flux_client import Scheduler
from batsim_py.protocol.flux import envelope, rv1

HOSTS = ["node0", "node1", "node2", "node3"]


class NoR(Scheduler):  # SUCCESS without R
    def alloc(self, request, jobid, *rest):
        self._respond("sched.alloc", {"id": jobid, "type": 0})

    def schedule(self):
        pass


class SameRank(NoR):  # every job on rank 0
    def alloc(self, request, jobid, *rest):
        request.success(rv1.build({0: [0]}, HOSTS))


class Twice(NoR):  # two SUCCESS for one job
    def alloc(self, request, jobid, *rest):
        R = rv1.build({jobid: [0]}, HOSTS)
        request.success(R)
        self._respond("sched.alloc", {"id": jobid, "type": 0, "R": R})


class Errnum(NoR):  # a conventional error response
    def alloc(self, request, jobid, *rest):
        self._out.append(envelope.error("sched.alloc", 5, "out of memory"))
"""


@dataclass
class Case:
    args: list[str]
    files: dict[str, str | bytes] = field(default_factory=dict)


def platform(body: str, version: str = "4.1") -> str:
    """A platform whose line 4 is the first line of `body` (inside a Full zone)."""
    return (f'<?xml version="1.0"?>\n<platform version="{version}">\n'
            f'<zone id="z" routing="Full">\n{body}\n</zone>\n</platform>\n')


def raw_platform(body: str) -> str:
    """A platform whose line 3 is the first line of `body` (directly in <platform>)."""
    return f'<?xml version="1.0"?>\n<platform version="4.1">\n{body}\n</platform>\n'


def p(body: str, *extra: str) -> Case:
    return Case([*RUN, "--scheduler", "fcfs", *extra], {"p.xml": platform(body)})


def rawp(body: str) -> Case:
    return Case([*RUN, "--scheduler", "fcfs"], {"p.xml": raw_platform(body)})


def w(data: object, *extra: str) -> Case:
    text = data if isinstance(data, str) else json.dumps(data)
    return Case([*RUN, "--scheduler", "fcfs", *extra], {"w.json": text})


def job(**fields: object) -> dict:
    """WORKLOAD with one job whose fields are `fields` (on top of a valid job)."""
    base = {"id": "a", "subtime": 0, "res": 1, "profile": "d10"}
    base.update(fields)
    return {**WORKLOAD, "jobs": [{k: v for k, v in base.items() if v is not None}]}


def prof(profile: dict, res: int = 1) -> dict:
    return {"nb_res": 4, "profiles": {"x": profile},
            "jobs": [{"id": "a", "subtime": 0, "res": res, "profile": "x"}]}


def wf(text: str, *extra: str, scheduler: str = "fcfs",
       files: dict[str, str | bytes] | None = None) -> Case:
    """A run with workflow file wf.dax holding `text` (`-W wf.dax` unless `extra` says how)."""
    return Case([*RUN[:2], *RUN[4:], "--scheduler", scheduler, *(extra or ("-W", "wf.dax"))],
                {"wf.dax": text, **(files or {})})


def ev(*lines: str, extra: tuple[str, ...] = ()) -> Case:
    return Case([*RUN, "--scheduler", "fcfs", "--events", "ev.txt", *extra],
                {"ev.txt": "\n".join(lines) + "\n"})


def replies(*texts: str, extra: tuple[str, ...] = ()) -> Case:
    """Replay these scheduler replies, in order (request k gets reply k)."""
    lines = [f'{{"seq": {2 * k + 1}, "from": "scheduler", "msg": {t}}}'
             for k, t in enumerate(texts)]
    return Case([*RUN, "--scheduler", "replay:t.jsonl", *extra], {"t.jsonl": "\n".join(lines)})


def at(ts: float, *events: tuple[str, dict]) -> str:
    """A reply at time `ts` holding (type, data) events."""
    return json.dumps({"now": ts, "events": [{"timestamp": ts, "type": k, "data": d}
                                             for k, d in events]})


EMPTY0 = at(0.0)  # the answer to SIMULATION_BEGINS
T_A, T_B = 4.5e-05, 1.000045  # JOB_SUBMITTED of w0!a and w0!b
EXEC_A = ("EXECUTE_JOB", {"job_id": "w0!a", "alloc": "0"})


def bad_event(event: dict) -> Case:
    """A reply with one raw event to SIMULATION_BEGINS."""
    return replies(json.dumps({"now": 0, "events": [event]}))


def bad_data(kind: str, data: object) -> Case:
    return bad_event({"timestamp": 0, "type": kind, "data": data})


HOSTS_AB = '<host id="a" speed="1Gf"/><host id="b" speed="1Gf"/>'
ZONES_AB = """<zone id="top" routing="Full">
<zone id="a" routing="Full"><host id="ha" speed="1Gf"/></zone>
<zone id="b" routing="Full"><host id="hb" speed="1Gf"/></zone>
<link id="l" bandwidth="1GBps"/>
{}
</zone>"""
MASTER = '<host id="master_host" speed="1Gf"/>'

CASES: dict[str, Case] = {
    # -- command line ----------------------------------------------------------------------
    "C01": Case(["-w", "w.json", "--scheduler", "fcfs"]),
    "C02": Case([*RUN, "--scheduler", "fcfs", "--timing", "exact"]),
    "C03": Case([*RUN, "--scheduler", "fcfs", "-v", "loud"]),
    "C04": Case([*RUN, "--scheduler", "fcfs", "--sched-cfg", "x", "--sched-cfg-file", "c.txt"]),
    "C05": Case([*RUN, "--scheduler", "fcfs", "--enable-profile-reuse"]),
    "C06": Case([*RUN, "--scheduler", "fcfs", "--sched-cfg-file", "missing.cfg"]),
    "C07": Case([*RUN, "--scheduler", "fcfs", "-r", "node0"]),
    "C08": Case([*RUN, "--scheduler", "fcfs", "--mmax", "-1"]),
    "C09": Case([*RUN, "--scheduler", "fcfs", "--replay-strict"]),
    "C10": Case([*RUN, "--scheduler", "sjf"]),
    "C11": Case([*RUN, "--scheduler", "fcfs", "-W", "wf.dax"]),
    "C12": wf("<adag/>", "--WS", "wf.dax", "soon"),
    "C13": Case([*RUN, "--scheduler", "fcfs", "--enable-redis"]),
    "C14": Case([*RUN, "--scheduler", "fcfs", "--no-sched"]),
    "C15": wf("<adag/>", "-W", "wf.dax", "--workflow-jobs-limit", "-1"),
    "C16": Case([*RUN, "--scheduler", "fcfs", "--sg-cfg", "network/model:CM02"]),
    "C17": Case([*RUN, "--scheduler", "fcfs", "--bogus"]),
    "C18": Case([*RUN, "--scheduler", "fcfs", "--mmax", "two"]),
    "C19": Case([*RUN, "--scheduler", "replay:missing.jsonl"]),
    "C20": Case([*RUN, "--scheduler", "replay:t.jsonl"], {"t.jsonl": "hello\n"}),
    "C21": Case([*RUN, "--scheduler", "fcfs", "--record-transcript", "nodir/t.jsonl"]),
    "C22": Case([*RUN, "-s", "nonsense"]),
    "C23": Case([*RUN, "-s", "tcp://127.0.0.1:9", "--scheduler-connect-timeout", "0.2"]),
    # -- scheduler connection and outputs (docs/reliability.md) ------------------------------
    "C24": Case([*RUN, "-s", "tcp://127.0.0.1:9", "--scheduler-timeout", "nan"]),
    "C25": Case([*RUN, "--scheduler", "fcfs", "--scheduler-command", "python s.py"]),
    "C26": Case([*RUN, "--scheduler-command", "no-such-command-xyz --port 28000"]),
    "C27": Case([*RUN, "-s", "ipc://nodir/sock"]),
    "L01": Case([*RUN, "--legacy-protocol", "4"]),
    "L02": Case([*RUN, "--legacy-protocol", "1", "--scheduler", "fcfs"]),
    "L03": Case([*RUN, "--legacy-protocol", "1", "-s", "zmq:tcp://127.0.0.1:9"]),
    "L04": Case([*RUN, "--legacy-protocol", "1", "--legacy-failure-stamps"]),
    "L05": Case([*RUN, "--legacy-protocol", "1", "--redis-server", "auto"]),
    "L06": Case([*RUN, "--legacy-protocol", "1", "--record-transcript", "t.jsonl"]),
    "L07": Case([*RUN, "-s", "tcp://127.0.0.1:9", "--redis-server", "yes"]),
    # -- Flux protocol (docs/flux.md): a misbehaving in-process client from FLUX_BAD -------
    "F01": Case([*RUN, "--protocol", "slurm"]),
    "F02": Case([*RUN, "--protocol", "flux", "--scheduler", "fcfs"]),
    "F03": Case([*RUN, "--protocol", "flux", "--flux-granularity", "socket"]),
    "F04": Case([*RUN, "--protocol", "flux", "--flux-scheduler", "fifo", "--flux-options",
                 "[8]"]),
    "F05": Case([*RUN, "--protocol", "flux", "--flux-scheduler", "bad.py:NoR"],
                {"bad.py": FLUX_BAD}),
    "F06": Case([*RUN, "--protocol", "flux", "--flux-scheduler", "bad.py:SameRank"],
                {"bad.py": FLUX_BAD}),
    "F07": Case([*RUN, "--protocol", "flux", "--flux-scheduler", "bad.py:Twice"],
                {"bad.py": FLUX_BAD}),
    "F08": Case([*RUN, "--protocol", "flux", "--flux-scheduler", "bad.py:Errnum"],
                {"bad.py": FLUX_BAD}),
    "F09": Case([*RUN, "--protocol", "flux", "--flux-scheduler", "fifo"],
                {"w.json": json.dumps({**WORKLOAD, "jobs": [
                    {**WORKLOAD["jobs"][0], "urgency": 40}]})}),
    "F10": Case([*RUN, "--protocol", "flux", "--flux-scheduler", "fifo", "--events", "e.jsonl"],
                {"e.jsonl": '{"timestamp": 1, "type": "flux_cancel", "job_id": "w0!zz"}\n'}),
    "O01": Case(["-p", "p.xml", "-w", "w.json", "-e", "f/out", "-q", "--scheduler", "fcfs"],
                {"f": ""}),
    "O02": Case(["-p", "p.xml", "-w", "w.json", "-e", "n" * 240, "-q", "--scheduler", "fcfs"]),
    "O03": Case([*RUN, "--scheduler", "fcfs"], {"out_schedule.csv/x": ""}),
    "O04": Case([*RUN, "--scheduler", "fcfs", "--record-transcript", "/dev/full"]),
    # -- platform ----------------------------------------------------------------------------
    "P01": Case([*RUN, "--scheduler", "fcfs", "-p", "missing.xml"]),
    "P02": Case([*RUN, "--scheduler", "fcfs", "-p", "."]),
    "P03": Case([*RUN, "--scheduler", "fcfs"],
                {"p.xml": '<platform version="4.1">\n<zone id="z" routing="Full">\n</platform>\n'}),
    "P04": Case([*RUN, "--scheduler", "fcfs"],
                {"p.xml": b'<?xml version="1.0" encoding="foo"?>\n<platform version="4.1"/>'}),
    "P05": Case([*RUN, "--scheduler", "fcfs"], {"p.xml": "<plateform/>"}),
    "P06": p("", "-e", "out"),
    "P07": Case([*RUN, "--scheduler", "fcfs"], {"p.xml": platform("", "3")}),
    "P08": Case([*RUN, "--scheduler", "fcfs"], {"p.xml": platform("", "4.2")}),
    "P09": Case([*RUN, "--scheduler", "fcfs"], {"p.xml": platform("", "four")}),
    "P10": rawp('<zone id="z" routing="Full"></zone>\n<zone id="y" routing="Full"></zone>'),
    "P11": rawp('<zone id="z" routing="Star"></zone>'),
    "P12": rawp('<zone id="z" routing="Wifi"></zone>'),
    "P13": rawp('<zone id="z" routing="Full"></zone>\n<config/>'),
    "P14": rawp('<config><host id="h" speed="1Gf"/></config>'),
    "P15": p('<hots id="h"/>'),
    "P16": p('<host id="h" speed="1Gf" cores="2"/>'),
    "P17": p('<host id="h"/>'),
    "P18": p('<include file="x.xml"/>'),
    "P19": p('<storage id="s"/>'),
    "P20": p('<trace id="t" periodicity="1"/>'),
    "P21": p('<actor host="h" function="f"/>'),
    "P22": p('<host id="h" speed="1Gf" state_file="s.txt"/>'),
    "P23": p('<host id="h" speed="1 Gf"/>'),
    "P24": p('<host id="h" speed="1Kf"/>'),
    "P25": p('<host id="h" speed="fast"/>'),
    "P26": p('<link id="l" bandwidth="1GBps" latency="-1s"/>'),
    "P27": p('<host id="h" speed="1Gf" core="x"/>'),
    "P28": p('<host id="h" speed="1Gf" core="0"/>'),
    "P29": p('<host id="h" speed="-1Gf"/>'),
    "P30": p('<host id="h" speed="1Gf,2Gf" pstate="2"/>'),
    "P31": p('<host id="h" speed="1Gf" coordinates="1 2"/>'),
    "P32": p('<host id="h" speed="1Gf"/>\n<host id="h" speed="2Gf"/>'),
    "P33": p('<link id="l" bandwidth="1GBps"/>\n<link id="l" bandwidth="1GBps"/>'),
    "P34": p('<link id="l" bandwidth="1GBps" sharing_policy="shared"/>'),
    "P35": p('<link id="l" bandwidth="1GBps" sharing_policy="WIFI"/>'),
    "P36": p('<link id="l" bandwidth="1GBps,2GBps"/>'),
    "P37": p('<link id="l" bandwidth="-1GBps"/>'),
    "P38": p(f'{HOSTS_AB}\n<route src="a" dst="b">\n<link_ctn id="nope"/></route>'),
    "P39": p(f'{HOSTS_AB}\n<link id="x" bandwidth="1GBps" sharing_policy="SPLITDUPLEX"/>\n'
             '<route src="a" dst="b"><link_ctn id="x"/></route>'),
    "P40": p(f'{HOSTS_AB}\n<link id="x" bandwidth="1GBps"/>\n'
             '<route src="a" dst="b"><link_ctn id="x" direction="UP"/></route>'),
    "P41": p('<host id="a" speed="1Gf"/>\n<route src="a" dst="ghost"></route>'),
    "P42": p(f'{HOSTS_AB}\n<route src="a" dst="b"/>'),
    "P43": p(f'{HOSTS_AB}<link id="l" bandwidth="1Bps"/>\n'
             '<route src="a" dst="b"><link_ctn id="l"/></route>\n'
             '<route src="b" dst="a"><link_ctn id="l"/></route>'),
    "P44": p('<host id="h" speed="1Gf"/>\n<zone id="y" routing="Full"></zone>'),
    "P45": p('<zone id="y" routing="Full"></zone>\n<host id="h" speed="1Gf"/>'),
    "P46": p('<host id="z" speed="1Gf"/>'),
    "P47": rawp(ZONES_AB.format('<zoneRoute src="a" dst="b" gw_src="hb" gw_dst="hb">'
                                '<link_ctn id="l"/></zoneRoute>')),
    "P48": rawp(ZONES_AB.format('<zoneRoute src="ha" dst="b" gw_src="ha" gw_dst="hb">'
                                '<link_ctn id="l"/></zoneRoute>')),
    "P49": rawp(ZONES_AB.format("").replace('speed="1Gf"/></zone>\n<zone id="b"',
                                            f'speed="1Gf"/>{MASTER}</zone>\n<zone id="b"', 1)),
    "P50": p('<peer id="p" speed="1Gf" bw_in="1Bps" bw_out="1Bps"/>'),
    "P51": p('<backbone id="b" bandwidth="1Bps" latency="0"/>'),
    "P52": p('<cluster id="c" prefix="a" suffix="" radical="0-3" speed="1Gf" bw="1GBps" '
             'lat="0" topology="TORUS" topo_parameters="2,x"/>'),
    "P53": p('<cluster id="c" prefix="a" suffix="" radical="0-x" speed="1Gf" bw="1GBps" '
             'lat="0"/>'),
    "P54": rawp('<cluster id="c" prefix="n" suffix="" radical="0-99999999999" speed="1Gf" '
                'bw="1GBps" lat="0"/>'),
    "P55": p('<host id="h" speed="1Gf"/>'),
    "P56": p(f'{MASTER}<host id="m2" speed="1Gf"><prop id="role" value="master"/></host>'),
    "P57": p(f'{MASTER}<host id="h" speed="1Gf"><prop id="role" value="boss"/></host>'),
    "P58": p('<host id="master_host" speed="1Gf"><prop id="role" value="storage"/></host>'),
    "P59": p(f'{MASTER}<host id="h" speed="0f"/>'),
    "P60": Case([*RUN, "--scheduler", "fcfs", "--mmax", "9"]),
    "P61": p(f'{MASTER}<host id="h" speed="1Gf,2Gf">'
             '<prop id="wattage_per_state" value="10:20"/></host>', "-E"),
    "P62": p(f'{MASTER}<host id="h" speed="1Gf"><prop id="wattage_per_state" value="10"/></host>',
             "-E"),
    "P63": p(f'{MASTER}<host id="h" speed="1Gf,2Gf">'
             '<prop id="wattage_per_state" value="10:20, 10:20"/>'
             '<prop id="sleep_pstates" value="1:5:0"/></host>', "-E"),
    "P64": p('<host id="h" speed="1e-320f"/>'),
    "P65": p('<host id="h" speed="inf"/>'),
    "P66": p('<link id="l" bandwidth="0Bps"/>'),
    "P67": p('<link id="l" bandwidth="1e308GBps"/>'),
    "P68": p('<link id="l" bandwidth="1GBps" latency="infs"/>'),
    "P69": p(f'{MASTER}<host id="h" speed="1Gf"><prop id="wattage_per_state" value="-5:10"/>'
             '</host>', "-E"),
    "P70": p(f'{MASTER}<host id="h" speed="1Gf,1f,0f">'
             '<prop id="wattage_per_state" value="1:2, 1:1, 1:1"/>'
             '<prop id="sleep_pstates" value="1:2:2"/></host>', "-E"),
    "P71": p(f'{MASTER}<host id="h" speed="1Gf,1f,1f">'
             '<prop id="wattage_per_state" value="1:2, 1:1, 1:1"/>'
             '<prop id="sleep_pstates" value="1:0:2"/></host>', "-E"),
    "P72": p(f'{MASTER}<host id="h" speed="1Gf,1f,1f">'
             '<prop id="wattage_per_state" value="1:2, 1:1, 1:1"/>'
             '<prop id="sleep_pstates" value="1:2:2, 1:2:2"/></host>', "-E"),
    # -- workload ----------------------------------------------------------------------------
    "W01": Case([*RUN, "--scheduler", "fcfs", "-w", "missing.json"]),
    "W02": w('{"nb_res": 4,'),
    "W03": w('{"nb_res": NaN, "profiles": {}, "jobs": []}'),
    "W04": w("[1, 2]"),
    "W05": w({"nb_res": 4, "profiles": {}}),
    "W06": w({"nb_res": 0, "profiles": {}, "jobs": []}),
    "W07": w({"nb_res": 4, "profiles": [], "jobs": []}),
    "W08": w({"nb_res": 4, "profiles": {}, "jobs": {}}),
    "W09": w('{"nb_res": 1e999, "profiles": {}, "jobs": []}'),
    "W10": w({**WORKLOAD, "jobs": [7]}),
    "W11": w(job(id=None)),
    "W12": w(job(id=1.5)),
    "W13": w(job(id="w0_3")),
    "W14": w(job(id="x!1")),
    "W15": w(job(id="aw0b!2")),
    "W16": w(job(id="")),
    "W17": w({**WORKLOAD, "jobs": [WORKLOAD["jobs"][0]] * 2}),
    "W18": w(job(subtime=None)),
    "W19": w(job(subtime="0")),
    "W20": w(job(walltime=0)),
    "W21": w(job(res=2.0)),
    "W22": w(job(res=-1)),
    "W23": w(job(profile="nope")),
    "W24": w(job(profile=None)),
    "W25": w(job(smpi_ranks_to_hosts_mapping=[3])),
    "W26": w(prof({"delay": 1})),
    "W27": w(prof({"type": 3})),
    "W28": w(prof({"type": "sleep", "delay": 1})),
    "W29": w(prof({"type": "delay", "delay": 1, "ret": 0.5})),
    "W30": w(prof({"type": "delay", "delay": 0})),
    "W31": w(prof({"type": "delay"})),
    "W32": w(prof({"type": "composed", "seq": []})),
    "W33": w(prof({"type": "composed", "seq": ["x"], "repeat": 0})),
    "W34": w(prof({"type": "composed", "seq": ["nope"]})),
    "W35": w(prof({"type": "parallel", "cpu": [], "com": []})),
    "W36": w(prof({"type": "parallel", "cpu": [1, 1], "com": [0]}, res=2)),
    "W37": w(prof({"type": "parallel", "cpu": [1, 1], "com": [0, 0, 0, 0]}, res=1)),
    "W38": w(prof({"type": "parallel", "cpu": [1, -1], "com": [0, 0, 0, 0]}, res=2)),
    "W39": w(prof({"type": "parallel_homogeneous", "cpu": 1e9, "com": -1})),
    "W40": w(prof({"type": "parallel_homogeneous_pfs"})),
    "W41": w(prof({"type": "usage_trace", "trace": ""})),
    "W42": w(prof({"type": "send", "msg": "hello"})),
    "W43": w('{"nb_res": 4, "profiles": {}, "jobs": [{"id": "\\ud800"}]}'),
    # -- workflows (DAX) ---------------------------------------------------------------------
    "X01": wf('<adag>\n<job id="A" runtime="1"></adag>'),
    "X02": wf('<adag><job id="A" runtime="1"/><child ref="A"><parent ref="Z"/></child></adag>'),
    "X03": wf('<adag><job id="A" runtime="-5"/></adag>'),
    "X04": wf("<adag/>", "--WS", "wf.dax", "-5"),
    "X05": wf('<adag><job id="A" runtime="10"/><job id="B" runtime="10"/><job id="C" runtime="5"/>'
              '<child ref="C"><parent ref="A"/></child></adag>', "-W", "wf.dax"),
    "X06": wf('<adag><job id="A" runtime="1"/></adag>', "-W", "wf.dax", "--timing", "ideal",
              scheduler="replay:t.jsonl",
              files={"t.jsonl": '{"seq": 1, "from": "scheduler", "msg": ' + EMPTY0 + '}\n'
                     '{"seq": 3, "from": "scheduler", "msg": '
                     + at(0.0, ("REJECT_JOB", {"job_id": "wf0!0"})) + '}'}),
    "X07": wf('<adag><job id="B" runtime="1"/><job id="C" runtime="2"/><job id="D" runtime="1"/>'
              '<child ref="D"><parent ref="B"/><parent ref="B"/><parent ref="C"/></child></adag>',
              "-W", "wf.dax"),
    "X08": wf('<adag><job id="A" runtime="1"/></adag>', "-W", "wf.dax", "--WS", "wf.dax", "5",
              "--ignore-beyond-last-workflow"),
    # -- external events ---------------------------------------------------------------------
    "E01": Case([*RUN, "--scheduler", "fcfs", "--events", "missing.txt"]),
    "E02": ev("{nope"),
    "E03": ev("[1, 2]"),
    "E04": ev('{"timestamp": 1}'),
    "E05": ev('{"type": "machine_available", "resources": "1"}'),
    "E06": ev('{"type": "machine_available", "resources": "1", "timestamp": -1}'),
    "E07": ev('{"type": "machine_available", "timestamp": 1}'),
    "E08": ev('{"type": "machine_available", "resources": "2-1", "timestamp": 1}'),
    "E09": ev('{"type": "custom", "timestamp": 1}'),
    "E10": ev('{"type": "machine_unavailable", "resources": "9", "timestamp": 1}'),
    "E11": ev('{"type": "machine_unavailable", "resources": "3", "timestamp": 1}',
              '{"type": "machine_unavailable", "resources": "3", "timestamp": 2}'),
    "E12": ev('{"type": "machine_available", "resources": "1", "timestamp": 1}'),
    "E13": ev('{"type": "machine_available", "resources": "0-99999999999", "timestamp": 1}'),
    # -- scheduler replies (protocol) ----------------------------------------------------------
    "R01": replies("hello"),
    "R02": replies("[]"),
    "R03": replies('{"events": []}'),
    "R04": replies('{"now": "0", "events": []}'),
    "R05": replies('{"now": 0}'),
    "R06": replies('{"now": 0, "events": {}}'),
    "R07": replies('{"now": 0, "events": [1]}'),
    "R08": bad_event({"timestamp": 0, "data": {}}),
    "R09": bad_event({"timestamp": 0, "type": "EXECUTE", "data": {}}),
    "R10": bad_event({"type": "REJECT_JOB", "data": {"job_id": "w0!a"}}),
    "R11": replies(json.dumps({"now": 0, "events": [{"timestamp": 1, "type": "REJECT_JOB",
                                                    "data": {"job_id": "w0!a"}}]})),
    "R12": bad_event({"timestamp": 0, "type": "REJECT_JOB"}),
    "R13": bad_data("EXECUTE_JOB", {"job_id": "w0!a"}),
    "R14": bad_data("EXECUTE_JOB", {"job_id": "w0!a", "alloc": "1-0"}),
    "R15": bad_data("EXECUTE_JOB", {"job_id": "w0!a", "alloc": "0", "mapping": {"0": 1}}),
    "R16": bad_data("EXECUTE_JOB", {"job_id": "w0!a", "alloc": "0", "additional_io_job": {}}),
    "R17": bad_data("REJECT_JOB", {"job_id": "w0!a", "why": "no"}),
    "R18": bad_data("KILL_JOB", {"job_ids": []}),
    "R19": bad_data("CALL_ME_LATER", {"timestamp": "10"}),
    "R20": bad_data("SET_RESOURCE_STATE", {"resources": "0", "state": "on"}),
    "R21": bad_data("SET_JOB_METADATA", {"job_id": "w0!a", "metadata": 'say "hi"'}),
    "R22": bad_data("CHANGE_JOB_STATE", {"job_id": "w0!a", "job_state": "DONE"}),
    "R23": bad_data("NOTIFY", {"type": "stop"}),
    "R24": bad_data("QUERY", {"requests": {"waiting_time": {}}}),
    "R25": bad_data("REGISTER_JOB", {"job_id": "w0!c", "job": 3}),
    "R26": bad_data("EXECUTE_JOB", {"job_id": "w0!a", "alloc": "0-99999999999"}),
    "R27": replies('{"now": NaN, "events": []}'),
    "R28": replies(EMPTY0),
    # -- scheduler decisions (§5.8) ------------------------------------------------------------
    "D01": replies(EMPTY0, at(T_A, ("EXECUTE_JOB", {"job_id": "w0!zz", "alloc": "0"}))),
    "D02": replies(EMPTY0, at(T_A, EXEC_A, ("EXECUTE_JOB", {"job_id": "w0!a", "alloc": "1"}))),
    "D03": replies(EMPTY0, at(T_A, ("EXECUTE_JOB", {"job_id": "w0!a", "alloc": "7"}))),
    "D04": replies(EMPTY0, at(T_A, EXEC_A),
                   at(T_B, ("EXECUTE_JOB", {"job_id": "w0!b", "alloc": "0"}))),
    "D05": replies(EMPTY0, at(T_A, ("EXECUTE_JOB", {"job_id": "w0!a", "alloc": "0-1"}))),
    "D06": replies(EMPTY0, at(T_A, EXEC_A, ("REJECT_JOB", {"job_id": "w0!a"}))),
    "D07": replies(EMPTY0, at(T_A, EXEC_A), at(T_B, ("KILL_JOB", {"job_ids": ["w0!b"]}))),
    "D08": replies(EMPTY0, at(T_A, EXEC_A), at(T_B, ("REJECT_JOB", {"job_id": "w0!b"})),
                   at(1.00009), at(10.00018, ("KILL_JOB", {"job_ids": ["w0!a"]}))),
    "D09": replies(at(0.0, ("CALL_ME_LATER", {"timestamp": 0.0}))),
    "D10": replies(at(0.0, ("SET_RESOURCE_STATE", {"resources": "1", "state": "0"}))),
    "D11": replies(at(0.0, ("QUERY", {"requests": {"consumed_energy": {}}}))),
    "D12": replies(at(0.0, ("REGISTER_PROFILE", {"workload_name": "dyn", "profile_name": "p",
                                                 "profile": {"type": "delay", "delay": 1}}))),
    "D13": replies(EMPTY0, at(T_A, EXEC_A, ("CHANGE_JOB_STATE", {"job_id": "w0!a",
                                                                  "job_state": "REJECTED"}))),
    "D14": replies(*[EMPTY0] * 2, at(T_B), at(1.00009)),
    "D15": replies(at(0.0, ("NOTIFY", {"type": "registration_finished"})),
                   at(0.0, ("REGISTER_PROFILE", {"workload_name": "dyn", "profile_name": "p",
                                                 "profile": {"type": "delay", "delay": 1}})),
                   extra=("--enable-dynamic-jobs",)),
    "D16": replies(at(0.0, *[("REGISTER_PROFILE", {"workload_name": "dyn", "profile_name": "p",
                                                   "profile": {"type": "delay", "delay": 1}})] * 2),
                   extra=("--enable-dynamic-jobs",)),
    "D17": replies(at(0.0, ("REGISTER_JOB", {"job_id": "dyn!j", "job": {
        "id": "j", "subtime": 0, "res": 1, "profile": "p"}})), extra=("--enable-dynamic-jobs",)),
    "D18": replies(at(0.0, ("REGISTER_JOB", {"job_id": "w0!j", "job": {
        "id": "j", "subtime": 0, "res": 1, "profile": "nope"}})),
        extra=("--enable-dynamic-jobs",)),
    "D19": replies(EMPTY0, at(T_A, ("REGISTER_JOB", {"job_id": "w0!a", "job": {
        "id": "a", "subtime": 0, "res": 1, "profile": "d10"}})),
        extra=("--enable-dynamic-jobs",)),
    "D20": replies(at(0.0, ("REGISTER_PROFILE", {"workload_name": "dyn", "profile_name": "p",
                                                 "profile": {"type": "delay"}})),
                   extra=("--enable-dynamic-jobs",)),
    "D21": replies(at(0.0, ("REGISTER_JOB", {"job_id": "w0!j", "job": {
        "id": "j", "subtime": 0, "res": 1.5, "profile": "d10"}})),
        extra=("--enable-dynamic-jobs",)),
    "D22": replies(at(0.0, ("REGISTER_JOB", {"job_id": "j", "job": {
        "id": "j", "subtime": 0, "res": 1, "profile": "d10"}})),
        extra=("--enable-dynamic-jobs",)),
    "D23": Case([*RUN, "--scheduler", "replay:t.jsonl"],
                {"t.jsonl": '{"seq": 1, "from": "scheduler", "msg": {"now": 0, "events": [{'
                            '"timestamp": 0, "type": "TO_JOB_MSG", "data": {"job_id": "w0!a", '
                            '"msg": "hi"}}]}}'}),
    "D24": Case(["-p", "p.xml", "-w", "w.json", "-e", "out", "-q", "--scheduler", "fcfs"],
                {"w.json": json.dumps(prof({"type": "smpi", "trace": "ranks.txt"}))}),
}


# -- CiGri grids (`batsim-py cigri GRID.json`, docs/cigri.md) -----------------------------------
GRID_XML = (PROJECT / "platforms" / "grid_small.xml").read_text()
LOCAL = (PROJECT / "examples" / "cigri" / "local_alpha.json").read_text()
GRID_RUN = ["cigri", "grid.json", "-e", "out"]


def grid_data(**top: object) -> dict:
    """A valid grid (2 clusters of grid_small.xml, one campaign 'A' on alpha) with `top`'s
    fields replaced (None removes one)."""
    data: dict = {"platform": "g.xml", "clusters": {"alpha": {}, "beta": {}},
                  "campaigns": [{"name": "A", "nb_jobs": 4, "duration": 60,
                                 "clusters": {"alpha": {}}}]}
    data.update(top)
    return {k: v for k, v in data.items() if v is not None}


def grid(data: object = None, *extra: str, text: str | None = None, **files: str) -> Case:
    body = text if text is not None else json.dumps(grid_data() if data is None else data)
    return Case([*GRID_RUN, *extra], {"grid.json": body, "g.xml": GRID_XML, **files})


def campaign(**fields: object) -> Case:
    """The grid with campaign 'A''s fields replaced (None removes one)."""
    camp = {"name": "A", "nb_jobs": 4, "duration": 60, "clusters": {"alpha": {}}, **fields}
    return grid(grid_data(campaigns=[{k: v for k, v in camp.items() if v is not None}]))


GRID_CASES: dict[str, Case] = {
    "G01": Case(["cigri", "missing.json", "-e", "out"]),
    "G02": grid(text='{"platform": "g.xml",\n "clusters": {}\n'),
    "G03": grid(["g.xml"]),
    "G04": grid(grid_data(platfrom="g.xml")),
    "G05": grid(grid_data(platform=None)),
    "G06": grid(grid_data(clusters=["alpha"])),
    "G07": grid(grid_data(clusters={"alpha": "easy"})),
    "G08": grid(grid_data(clusters={"alpha": {"policy": "easy", "kill-delay": 5}})),
    "G09": grid(grid_data(clusters={"alpha": {"policy": "sjf"}})),
    "G10": grid(grid_data(clusters={"alpha": {"queue": "urgent"}})),
    "G11": grid(grid_data(clusters={"alpha": {"workload": ["a.json"]}})),
    "G12": grid(grid_data(cigri=["ALMIGHTY_PERIOD", 10])),
    "G13": grid(grid_data(cigri={"ALMIGHTY_PERIODE": 10})),
    "G14": grid(grid_data(cigri={"RUNNER_TAP_GRACE_PERIOD": -60})),
    "G15": grid(grid_data(cigri={"RUNNER_MIN_CYCLE_DURATION": 0})),
    "G16": grid(grid_data(flow_control="tcp-like")),
    "G17": grid(grid_data(flow_control={"type": "tcp", "flood-rate": 0.5})),
    "G18": grid(grid_data(flow_control={"type": "pi", "kp": "0.1"})),
    "G19": grid(grid_data(flow_control={"type": "two_way", "perl_uninitialised": 1})),
    "G20": grid(grid_data(timing="exact")),
    "G21": grid(grid_data(seed=1.5)),
    "G22": grid(grid_data(stress={"alpha": [100, 200]})),
    "G23": grid(grid_data(stress={"alpha": [[200, 100]]})),
    "G24": grid(grid_data(users_priority={"beta": 5})),
    "G25": grid(grid_data(users_priority={"beta": {"bob": "high"}})),
    "G26": grid(grid_data(campaigns="campaigns.json")),
    "G27": grid(grid_data(campaigns={"name": "A"})),
    "G28": grid(grid_data(campaigns=["A"])),
    "G29": grid(grid_data(campaigns=[{"name": "A", "nb_jobs": 1, "clusters": {"alpha": {}}},
                                     {"name": "A", "nb_jobs": 1, "clusters": {"beta": {}}}])),
    "G30": campaign(nb_jobs=None),
    "G31": campaign(nb_jobs=0),
    "G32": campaign(clusters={}),
    "G33": campaign(clusters={"alpha": 2}),
    "G34": campaign(tasks=4),
    "G35": campaign(type=1),
    "G36": campaign(test_mode="yes"),
    "G37": campaign(walltime=0.5),
    "G38": campaign(exit_66_rate=0.7, exit_67_rate=0.5),
    "G39": campaign(duration="1h"),
    "G40": campaign(duration={"uniform": [100, 50]}),
    "G41": campaign(duration={"exponential": 0}),
    "G42": campaign(duration={"normal": [60]}),
    "G43": campaign(duration={"profile": {"delay": 60}}),
    "G44": campaign(clusters={"delta": {}}),
    "G45": grid(grid_data(clusters={"gamma": {}})),
    "G46": campaign(resources=5),
    "G47": grid(grid_data(platform="p.xml")),
    "G48": grid(grid_data(clusters={"alpha": {"workload": "nope.json"}, "beta": {}})),
    "G49": grid(grid_data(clusters={"alpha": {"workload": "local.json"}, "beta": {}}),
                **{"local.json": '{"nb_res": 4, "jobs": [{"id": 1}], "profiles": {}}'}),
    "G50": grid(None, "-e", "w.json/out"),
}
CASES.update(GRID_CASES)


# -- the catalogue -------------------------------------------------------------------------------

ROW = re.compile(r"^\| *([A-Z]\d\d) *\|(.*)\| *`(batsim-py(?: cigri)?: error: .*)` *\| *(\d+) *"
                 r"\| *(\w+) *\|$")


def catalogue() -> dict[str, tuple[str, int, bool]]:
    """id -> (line printed, exit code, outputs written), from docs/errors.md (`batsim-py
    cigri` prints its own name: `batsim-py cigri: error: ...`)."""
    rows = {}
    for line in CATALOGUE.read_text(encoding="utf-8").splitlines():
        m = ROW.match(line)
        if m:
            ident, _, message, code, outputs = m.groups()
            assert ident not in rows, f"{ident} twice in the catalogue"
            rows[ident] = (message.replace("\\|", "|"), int(code), outputs == "yes")
    return rows


ENTRIES = catalogue()


def test_every_case_is_in_the_catalogue() -> None:
    assert sorted(set(CASES) - set(ENTRIES)) == []
    assert sorted(set(ENTRIES) - set(CASES)) == []


@pytest.mark.parametrize("ident", sorted(ENTRIES))
def test_catalogue_entry(ident: str, tmp_path: Path, monkeypatch, capsys) -> None:
    message, code, outputs = ENTRIES[ident]
    case = CASES[ident]
    files: dict[str, str | bytes] = {"p.xml": SMALL4, "w.json": json.dumps(WORKLOAD),
                                     **case.files}
    for name, content in files.items():
        data = content if isinstance(content, bytes) else content.encode("utf-8")
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    monkeypatch.chdir(tmp_path)
    rc = main(case.args)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith(("batsim-py: ",
                                                                      "batsim-py cigri: "))]
    assert "Traceback" not in err and "internal error" not in err, err
    assert len(lines) == 1, err
    assert lines[0] == message
    assert rc == code
    assert (tmp_path / "out_jobs.csv").exists() == outputs
