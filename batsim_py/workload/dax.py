"""DAX workflow files (`-W`, `--WS`), read as Batsim 4.2.1 reads them.

Batsim reads a DAX with pugixml and takes little of it: the `adag` element at the top, its
`job` children (`id`, `runtime`, `num_procs`) and its `child ref` elements with their `parent
ref` children. Everything else (files, `uses`, arguments) is ignored. The numbers are read
with C's `strtod`/`strtol`, which take the longest numeric prefix and give 0 for none, so
`runtime="12s"` is 12 and a missing runtime is 0; a missing, empty or non-positive
`num_procs` is 1. Names are compared as written: no namespace processing (a prefixed
`<dax:adag>` is not `adag`, as in pugixml).

Two of Batsim's bookkeeping quirks are kept because they change which jobs are submitted:
a task's parents are kept without repeats but its children are not (an edge listed twice
counts the parent's completion twice), and a later `job` with an id already seen replaces
the earlier one. An edge naming an unknown task is an error (Batsim aborts while loading).
"""

from __future__ import annotations

import math
import os
import re
import xml.parsers.expat
from collections.abc import Sequence
from dataclasses import dataclass, field

from batsim_py.errors import WorkloadError
from batsim_py.workload.reader import absolute_path

_WS = " \t\n\v\f\r"  # C's isspace in the "C" locale
_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_HEX = re.compile(r"([+-]?)0[xX]((?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)"
                  r"(?:[pP][+-]?\d+)?)")
_SPECIAL = re.compile(r"([+-]?)(inf(?:inity)?|nan(?:\([0-9A-Za-z_]*\))?)", re.IGNORECASE)
_INTEGER = re.compile(r"[+-]?\d+")


def strtod_prefix(text: str) -> float | None:
    """C's `strtod`: the longest prefix that is a number (after blanks); None: no number."""
    s = text.lstrip(_WS)
    m = _HEX.match(s)
    if m is not None:
        body = m.group(2)
        if "p" not in body.lower():
            body += "p0"
        value = float.fromhex(body)
        return -value if m.group(1) == "-" else value
    m = _SPECIAL.match(s)
    if m is not None:
        value = math.inf if m.group(2)[0] in "iI" else math.nan
        return -value if m.group(1) == "-" else value
    m = _DECIMAL.match(s)
    if m is None:
        return None
    return float(m.group(0))  # correctly rounded, as glibc's strtod (overflow: inf)


def c_strtod(text: str) -> float:
    """`strtod(text, NULL)`: 0 when `text` does not start with a number."""
    value = strtod_prefix(text)
    return 0.0 if value is None else value


def c_strtol_int(text: str) -> int:
    """`static_cast<int>(strtol(text, NULL, 10))`: clamped to a 64-bit long, then wrapped to
    32 bits as gcc converts."""
    m = _INTEGER.match(text.lstrip(_WS))
    if m is None:
        return 0
    value = max(-(2**63), min(2**63 - 1, int(m.group(0))))
    return (value + 2**31) % 2**32 - 2**31


@dataclass(eq=False)
class Task:
    """One DAX `job`: what the workflow submitter turns into a Batsim job when it is ready."""

    id: str
    runtime: float  # the delay profile's delay, at full precision
    num_procs: int  # the job's `res`
    parents: list[Task] = field(default_factory=list, repr=False)  # without repeats
    children: list[Task] = field(default_factory=list, repr=False)  # with repeats (Batsim's)


@dataclass(eq=False)
class Workflow:
    """A DAX file as Batsim loads it, named `wf<i>` (`-W`) or `wfc<i>` (`--WS`)."""

    name: str
    path: str  # absolute, as Batsim reports it in SIMULATION_BEGINS
    start_time: float
    tasks: dict[str, Task]
    source: str = ""  # the path as given, for messages

    def source_tasks(self) -> list[Task]:
        """Tasks without parents, by id: Batsim walks its std::map of tasks (byte order of
        the ids, which is Python's code-point order for UTF-8)."""
        return [self.tasks[k] for k in sorted(self.tasks) if not self.tasks[k].parents]


class _Node:
    __slots__ = ("name", "attrs", "children")

    def __init__(self, name: str, attrs: dict[str, str]) -> None:
        self.name = name
        self.attrs = attrs
        self.children: list[_Node] = []

    def named(self, name: str) -> list[_Node]:
        return [c for c in self.children if c.name == name]


def _parse_xml(path: str) -> _Node | None:
    """The document's root element (names as written, no namespaces), or a WorkloadError."""
    parser = xml.parsers.expat.ParserCreate()  # (no namespace_separator: raw names)
    stack: list[_Node] = []
    roots: list[_Node] = []

    def start(name: str, attrs: dict[str, str]) -> None:
        node = _Node(name, attrs)
        (stack[-1].children if stack else roots).append(node)
        stack.append(node)

    def end(name: str) -> None:
        stack.pop()

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    try:
        with open(path, "rb") as f:
            parser.ParseFile(f)
    except OSError as exc:
        raise WorkloadError(f"{path}: cannot read the workflow file ({exc.strerror})") from None
    except xml.parsers.expat.ExpatError as exc:
        raise WorkloadError(
            f"{path}: invalid XML workflow at line {exc.lineno} column {exc.offset + 1}: "
            f"{xml.parsers.expat.ErrorString(exc.code)}"
        ) from None
    return roots[0] if roots else None


def load_workflow(path: str, name: str, start_time: float = 0.0) -> Workflow:
    """Read DAX file `path` as workflow `name`, started at `start_time` (>= 0)."""
    if os.path.isdir(path) or not os.path.exists(path):
        raise WorkloadError(f"{path}: workflow file not found (check the path)")
    root = _parse_xml(path)
    tasks: dict[str, Task] = {}
    adag = root if root is not None and root.name == "adag" else None
    if adag is not None:
        for job in adag.named("job"):
            attrs = job.attrs
            procs = c_strtol_int(attrs["num_procs"]) if "num_procs" in attrs else 1
            task = Task(attrs.get("id", ""), c_strtod(attrs.get("runtime", "")),
                        procs if procs > 0 else 1)
            if not math.isfinite(task.runtime) or task.runtime < 0:
                raise WorkloadError(
                    f"{path}: task '{task.id}' has runtime {attrs.get('runtime')!r}: a task's "
                    "runtime must be a finite number >= 0 (its job's walltime is runtime + 10)"
                )
            tasks[task.id] = task
        for child in adag.named("child"):
            dest = _task(tasks, child, path)
            for parent in child.named("parent"):
                source = _task(tasks, parent, path)
                if source not in dest.parents:
                    dest.parents.append(source)
                source.children.append(dest)  # (Batsim's check never finds a repeat here)
    return Workflow(name, absolute_path(path), start_time, tasks, path)


def _task(tasks: dict[str, Task], node: _Node, path: str) -> Task:
    ref = node.attrs.get("ref", "")
    task = tasks.get(ref)
    if task is None:
        raise WorkloadError(
            f"{path}: <{node.name} ref=\"{ref}\"> names no <job id=\"{ref}\"> of the workflow"
        )
    return task



def load_workflows(plain: Sequence[str], cut: Sequence[tuple[str, float]] = ()) -> list[Workflow]:
    """Workflows named as Batsim names them: `wf<i>` for the i-th of `plain` (`-W`, started
    at 0), then `wfc<i>` for the i-th (file, start time) of `cut` (`--WS`; a start time must
    be a finite number >= 0)."""
    out = [load_workflow(path, f"wf{i}", 0.0) for i, path in enumerate(plain)]
    for i, (path, t) in enumerate(cut):
        if not (math.isfinite(t) and t >= 0):
            raise WorkloadError(f"{path}: workflow start time {t!r} must be a finite number >= 0")
        out.append(load_workflow(path, f"wfc{i}", t))
    return out
