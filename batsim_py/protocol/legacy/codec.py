"""Typed events -> legacy text, legacy text -> typed decisions, for one protocol version.

Batsim -> scheduler (`encode`):
- SIMULATION_BEGINS -> `A` (version 3; earlier versions send nothing, their first message is
  the first `S`), JOB_SUBMITTED -> `S:ID`, JOB_COMPLETED (any final state) -> `C:ID`,
  REQUESTED_CALL (an `n` timer fired) -> `N`, RESOURCE_STATE_CHANGED -> `p:M=PSTATE` (one per
  `P`), ANSWER consumed_energy -> `e:%f`, SIMULATION_ENDS -> `Z` (version 3);
- machine_unavailable / machine_available notifications -> `F:M` / `f:M` only when the
  failure stamps are enabled (version 3): pybatsim 2016 raises on any unknown stamp;
- other notifications (no more static jobs, ...) have no legacy form and are not sent.
Scheduler -> Batsim (`decode`): `J` -> EXECUTE_JOB per job (the machine list's order is the
executors' order), `R` -> REJECT_JOB, `n:T` -> CALL_ME_LATER at T (strictly after the event's
date), `P:M=S` -> SET_RESOURCE_STATE, `E` -> QUERY consumed_energy, `N` -> nothing.

Job ids: versions 0 and 1 send the bare job name of the only workload (`S:3`), 2 and 3 send
`WORKLOAD!NAME` (`S:w0!3`). Machine sets are written `a-b,c` (sorted, merged).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping, Sequence

from batsim_py.decision import decisions as d
from batsim_py.decision import events as ev
from batsim_py.errors import ProtocolError, UsageError
from batsim_py.protocol.legacy.message import (
    LegacyEvent,
    format_message,
    parse_message,
    parse_number,
)
from batsim_py.protocol.legacy.stamps import FROM_SCHEDULER, allowed_from_scheduler, bare_ids
from batsim_py.text import printable

log = logging.getLogger(__name__)

_INT = re.compile(r"\d+\Z")
_SEMI = re.compile(r";+")
_EQUAL = re.compile(r"=+")
_COMMA = re.compile(r",+")
_DASH = re.compile(r"-+")
_FORBIDDEN = set("|:;=,")  # separators of the grammar: never inside an id


def format_machines(ids: Iterable[int]) -> str:
    """Machine ids as the legacy protocol prints a set: sorted, merged, `0-2,5`."""
    runs: list[list[int]] = []
    for i in sorted(set(ids)):
        if runs and runs[-1][1] == i - 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def parse_machines(text: str, where: str) -> list[int]:
    """`1,2,0,3` or `0-3,7` -> ids in the order written (ranges ascending)."""
    ids: list[int] = []
    for token in _COMMA.split(text):
        bounds = _DASH.split(token)
        if len(bounds) > 2 or not all(_INT.match(b) for b in bounds):
            raise ProtocolError(f"{where}: '{printable(token)}' is not a machine id or a range "
                                "a-b of machine ids")
        lo, hi = int(bounds[0]), int(bounds[-1])
        if lo > hi:
            raise ProtocolError(f"{where}: the range '{token}' is empty (a-b needs a <= b)")
        if hi - lo > 10_000_000:
            raise ProtocolError(f"{where}: the range '{token}' is far larger than any platform")
        ids.extend(range(lo, hi + 1))
    return ids


class LegacyCodec:
    """The text of one run's messages: `version` (0-3), `energy` (-E given: `P` and `E`
    allowed), `failure_stamps` (`F`/`f` sent, version 3)."""

    def __init__(self, version: int, energy: bool = False, failure_stamps: bool = False) -> None:
        if version not in (0, 1, 2, 3):
            raise UsageError(f"--legacy-protocol must be 0, 1, 2 or 3, not {version}")
        if failure_stamps and version < 3:
            raise UsageError("the F/f failure stamps exist in legacy protocol version 3 only "
                             "(--legacy-protocol 3)")
        self.version = version
        self.energy = energy
        self.failure_stamps = failure_stamps
        self.bare = bare_ids(version)
        self.workload = "w0"  # the workload of bare ids
        self.res: dict[str, int] = {}  # job id -> machines requested (for `J`'s count check)

    # ------------------------------------------------------------------ Batsim -> scheduler
    def encode(self, now: float, events: Sequence[ev.Event]) -> str | None:
        """The message for one batch; None when nothing in it has a legacy form."""
        out: list[tuple[float, str, str | None]] = []
        for event in events:
            kind = type(event)
            if kind is ev.JobSubmitted:
                job = event.job  # type: ignore[union-attr]
                self.res[job.id] = job.res
                out.append((event.timestamp, "S", self.job_text(job.id)))
            elif kind is ev.JobCompleted:
                out.append((event.timestamp, "C", self.job_text(event.job_id)))  # type: ignore
            elif kind is ev.RequestedCall:
                out.append((event.timestamp, "N", None))
            elif kind is ev.ResourceStateChanged:
                out.append((event.timestamp, "p", f"{format_machines(event.resources)}="  # type: ignore
                            f"{event.state}"))  # type: ignore[union-attr]
            elif kind is ev.Answer:
                out.append((event.timestamp, "e", "%f" % event.consumed_energy))  # type: ignore
            elif kind is ev.SimulationBegins:
                self.begin(event)  # type: ignore[arg-type]
                if self.version >= 3:
                    out.append((event.timestamp, "A", None))
            elif kind is ev.SimulationEnds:
                if self.version >= 3:
                    out.append((event.timestamp, "Z", None))
            elif kind is ev.Notify:
                stamp = {"event_machine_unavailable": "F",
                         "event_machine_available": "f"}.get(event.type)  # type: ignore
                if stamp is not None and self.failure_stamps:
                    out.append((event.timestamp, stamp,
                                format_machines(event.resources or ())))  # type: ignore
        if not out:
            return None
        return format_message(self.version, now, out)

    def begin(self, event: ev.SimulationBegins) -> None:
        names = list(event.workloads)
        if self.bare and len(names) > 1:
            raise UsageError(
                f"legacy protocol version {self.version} names jobs by their bare id, which "
                f"cannot tell {len(names)} workloads apart: give one -w, or use "
                "--legacy-protocol 2 or 3 (ids WORKLOAD!JOB)")
        if names:
            self.workload = names[0]

    def job_text(self, job_id: str) -> str:
        text = job_id.partition("!")[2] if self.bare else job_id
        bad = _FORBIDDEN.intersection(text) or ({"!"} if "!" in text.partition("!")[2] else set())
        if bad:
            raise ProtocolError(
                f"job '{job_id}' cannot be named in the legacy protocol: its id holds "
                f"{' '.join(repr(c) for c in sorted(bad))}, a separator of the message grammar; "
                "rename the job in the workload")
        return text

    # ------------------------------------------------------------------ scheduler -> Batsim
    def decode(self, text: str, request_time: float) -> tuple[list[d.Decision], float]:
        """The decisions of a reply and the date of its last event."""
        events = parse_message(text, request_time)
        decisions: list[d.Decision] = []
        for event in events:
            decisions.extend(self.decision(event, text))
        return decisions, events[-1].date

    def decision(self, event: LegacyEvent, message: str) -> list[d.Decision]:
        where = f"event '{printable(event.text)}'"
        stamp = event.stamp
        spec = FROM_SCHEDULER.get(stamp)
        if spec is None or spec[0] > self.version:
            raise ProtocolError(
                f"{where}: unknown stamp '{printable(stamp)}' for legacy protocol version "
                f"{self.version} (a scheduler may send "
                f"{', '.join(allowed_from_scheduler(self.version))})")
        kind = spec[1]
        content = event.content
        if kind == "none" and content is not None:
            raise ProtocolError(f"{where}: the stamp '{stamp}' takes no content")
        if kind != "none" and content is None:
            raise ProtocolError(f"{where}: the stamp '{stamp}' needs a content "
                                f"({_SYNTAX[stamp]})")
        date = event.date
        if stamp in "PE" and not self.energy:
            raise ProtocolError(f"{where}: '{stamp}' needs the energy model: run batsim-py "
                                "with -E/--energy")
        if stamp == "N":
            return []
        if stamp == "n":
            assert content is not None
            at = parse_number(content, f"{where}: its time")
            if at <= date:
                raise ProtocolError(
                    f"{where}: 'n' asks to be woken at {at:f}, not after the event's date "
                    f"{date:f}; ask for a strictly later time (as Batsim, which aborts)")
            return [d.CallMeLater(date, at)]
        if stamp == "R":
            assert content is not None
            return [d.RejectJob(date, self.job_id(content, where))]
        if stamp == "E":
            return [d.Query(date, {"consumed_energy": {}})]
        if stamp == "P":
            assert content is not None
            sides = _EQUAL.split(content)
            if len(sides) != 2 or not _INT.match(sides[1]):
                raise ProtocolError(f"{where}: expected MACHINES=PSTATE, e.g. 'P:0-2,5=1'")
            machines = parse_machines(sides[0], where)
            return [d.SetResourceState(date, tuple(sorted(set(machines))), int(sides[1]))]
        assert stamp == "J" and content is not None
        out: list[d.Decision] = []
        for allocation in _SEMI.split(content):
            sides = _EQUAL.split(allocation)
            if len(sides) != 2:
                raise ProtocolError(f"{where}: the allocation '{printable(allocation)}' must be "
                                    "JOB=MACHINES, e.g. 'w0!1=0-3'")
            job_id = self.job_id(sides[0], where)
            order = parse_machines(sides[1], f"{where}, job '{job_id}'")
            alloc = tuple(sorted(set(order)))
            if len(alloc) != len(order):
                twice = next(m for i, m in enumerate(order) if m in order[:i])
                raise ProtocolError(f"{where}, job '{job_id}': machine {twice} is given twice")
            res = self.res.get(job_id)
            if res is not None and len(alloc) != res:
                raise ProtocolError(f"{where}: job '{job_id}' requests {res} machine(s) but "
                                    f"{len(alloc)} were given")
            mapping = None
            if list(alloc) != order:  # the order written is the executors' placement
                index = {m: i for i, m in enumerate(alloc)}
                mapping = tuple(index[m] for m in order)
            out.append(d.ExecuteJob(date, job_id, alloc, mapping))
        return out

    def job_id(self, text: str, where: str) -> str:
        parts = text.split("!")
        if len(parts) > 2 or not all(parts):
            raise ProtocolError(f"{where}: '{printable(text)}' is not a job id "
                                f"({'JOB' if self.bare else 'WORKLOAD!JOB'})")
        if len(parts) == 1:
            if not self.bare:
                log.warning("%s: job id '%s' has no workload part; taken as '%s!%s' (Batsim "
                            "took it from its 'static' workload)", where, text, self.workload,
                            text)
            return f"{self.workload}!{text}"
        return text


_SYNTAX: Mapping[str, str] = {
    "J": "JOB=M[,M...][;JOB=...]", "R": "JOB", "n": "TIME", "P": "M[,M...]=PSTATE",
}
