"""Comparison of two sets of Batsim output files, the yardstick of conformance.

Reproducing Batsim means printing the same text, so by default cells are equal only when their
text is; `tolerance` relaxes numeric cells for studies where microsecond drift is acceptable.
Rows of `_jobs.csv` are matched by (workload_name, job_id) because the row order only
reflects completion handling order, which is compared through the times anyway. The
wall-clock columns of `_schedule.csv` and the version string can never match across
implementations and are ignored.

Usage: `batsim-py compare A B [--tolerance X]` where A and B are output prefixes (`out/run`
for `out/run_jobs.csv` ...), folders holding one set of `*_jobs.csv` ..., or one of the files.
"""

from __future__ import annotations

import argparse
import csv
import glob
import io
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

from batsim_py.errors import UsageError

KINDS = ("jobs", "schedule", "machine_states", "pstate_changes", "consumed_energy")
"""Output files compared, by suffix (`<prefix>_<kind>.csv`)."""

IGNORED_COLUMNS = {"schedule": frozenset({"scheduling_time", "simulation_time", "batsim_version"})}
"""Columns that differ between any two runs (wall clock) or implementations (version)."""

EXACT_COLUMNS = {
    "jobs": frozenset({"job_id", "workload_name", "profile", "requested_number_of_resources",
                       "success", "final_state", "allocated_resources", "metadata"}),
    "pstate_changes": frozenset({"machine_id", "new_pstate"}),
    "consumed_energy": frozenset({"event_type"}),
}
"""Columns that name or count things (and the `nb_*` counts of every file): `--tolerance`
never applies to them, a machine 3 is not nearly a machine 4."""


def _exact(kind: str, column: str) -> bool:
    return column.startswith("nb_") or column in EXACT_COLUMNS.get(kind, frozenset())

DEFAULT_LIMIT = 50


@dataclass(frozen=True, slots=True)
class Difference:
    file: str  # kind, e.g. "jobs"
    where: str  # "w0!12" for jobs, "line 7" otherwise, "-" for the whole file
    column: str
    a: str
    b: str


@dataclass
class CompareResult:
    a: dict[str, str]  # kind -> path, side A
    b: dict[str, str]
    differences: list[Difference] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.differences

    def table(self, limit: int = DEFAULT_LIMIT) -> str:
        """A fixed-width listing of at most `limit` differences, then a count of the rest."""
        if self.ok:
            return "identical"
        header = ("file", "job/line", "column", "A", "B")
        rows = [
            (d.file, d.where, d.column, _clip(d.a), _clip(d.b)) for d in self.differences[:limit]
        ]
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(5)]
        lines = [
            "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
            for r in [header, *rows]
        ]
        lines.insert(1, "  ".join("-" * w for w in widths))
        rest = len(self.differences) - len(rows)
        if rest > 0:
            lines.append(f"... and {rest} more difference{'s' if rest > 1 else ''}")
        lines.append(f"{len(self.differences)} difference(s)")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


def _clip(text: str, width: int = 40) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


# ----------------------------------------------------------------------------- locating files


def locate(side: str) -> dict[str, str]:
    """The output files of one side: kind -> path. Raises UsageError when there are none."""
    if os.path.isdir(side):
        runs: dict[str, dict[str, str]] = {}  # prefix -> kind -> path
        for kind in KINDS:
            for path in sorted(glob.glob(os.path.join(glob.escape(side), f"*_{kind}.csv"))):
                name = os.path.basename(path)[: -len(f"_{kind}.csv")]
                runs.setdefault(name, {})[kind] = path
        if not runs:
            raise UsageError(f"{side}: folder holds no Batsim output (*_jobs.csv, ...)")
        if len(runs) > 1:  # (never pick one: comparing the wrong run would look fine)
            names = sorted(runs)
            raise UsageError(
                f"{side}: the folder holds the outputs of {len(names)} runs (prefixes "
                f"{', '.join(names)}); give one prefix instead of the folder, e.g. "
                f"{os.path.join(side, names[0])}"
            )
        return next(iter(runs.values()))
    prefix = side
    for kind in KINDS:
        if side.endswith(f"_{kind}.csv") and os.path.isfile(side):
            prefix = side[: -len(f"_{kind}.csv")]
            break
    found = {k: f"{prefix}_{k}.csv" for k in KINDS if os.path.isfile(f"{prefix}_{k}.csv")}
    if not found:
        raise UsageError(
            f"{side}: no Batsim output found (expected {prefix}_jobs.csv or a folder of outputs)"
        )
    return found


# ----------------------------------------------------------------------------- reading


@dataclass
class _Table:
    header: list[str]
    rows: list[list[str]]
    raw: list[str] | None  # the text line of each row, when lines and rows correspond


def _read(path: str) -> _Table:
    try:
        with open(path, encoding="utf-8", newline="") as f:
            text = f.read()
    except OSError as e:
        raise UsageError(f"{path}: cannot read: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not a UTF-8 text file") from None
    lines = text.splitlines()
    # From the text itself, not its lines: a quoted field may hold a line break (csv_text).
    rows = list(csv.reader(io.StringIO(text, newline="")))
    raw = lines[1:] if len(rows) == len(lines) else None
    if not rows:
        return _Table([], [], raw)
    return _Table(rows[0], rows[1:], raw)


# ----------------------------------------------------------------------------- comparing


def _same(x: str, y: str, tolerance: float) -> bool:
    if x == y:
        return True
    if tolerance <= 0:
        return False
    try:
        return abs(float(x) - float(y)) <= tolerance
    except ValueError:
        return False


def _columns(kind: str, ta: _Table, tb: _Table, out: list[Difference]) -> list[str]:
    """Columns to compare; a header mismatch is itself reported."""
    if ta.header != tb.header:
        out.append(Difference(kind, "header", "-", ",".join(ta.header), ",".join(tb.header)))
    ignored = IGNORED_COLUMNS.get(kind, frozenset())
    in_b = set(tb.header)
    return [c for c in ta.header if c in in_b and c not in ignored]


def _compare_rows(
    kind: str, ta: _Table, tb: _Table, tolerance: float, out: list[Difference]
) -> None:
    cols = _columns(kind, ta, tb, out)
    ia = {c: i for i, c in enumerate(ta.header)}
    ib = {c: i for i, c in enumerate(tb.header)}
    pairs = [(c, ia[c], ib[c], 0.0 if _exact(kind, c) else tolerance) for c in cols]
    for n, (ra, rb) in enumerate(zip(ta.rows, tb.rows, strict=False), start=2):
        for col, i, j, tol in pairs:
            x = ra[i] if i < len(ra) else ""
            y = rb[j] if j < len(rb) else ""
            if not _same(x, y, tol):
                out.append(Difference(kind, f"line {n}", col, x, y))
    na, nb = len(ta.rows), len(tb.rows)
    for n in range(min(na, nb), max(na, nb)):
        row = (ta.rows if na > nb else tb.rows)[n]
        text = ",".join(row)
        a, b = (text, "(absent)") if na > nb else ("(absent)", text)
        out.append(Difference(kind, f"line {n + 2}", "(row)", a, b))


def _keyed_jobs(kind: str, t: _Table, side: str, out: list[Difference]) -> dict[tuple, int]:
    try:
        iw, ij = t.header.index("workload_name"), t.header.index("job_id")
    except ValueError:
        out.append(Difference(kind, "header", "job_id/workload_name", side, "missing"))
        return {}
    keys: dict[tuple[str, str], int] = {}
    for n, row in enumerate(t.rows):
        key = (row[iw] if iw < len(row) else "", row[ij] if ij < len(row) else "")
        if key in keys:
            out.append(Difference(kind, f"{key[0]}!{key[1]}", "(row)", f"duplicated in {side}", ""))
            continue
        keys[key] = n
    return keys


def _compare_jobs(ta: _Table, tb: _Table, tolerance: float, out: list[Difference]) -> None:
    kind = "jobs"
    cols = _columns(kind, ta, tb, out)
    ka = _keyed_jobs(kind, ta, "A", out)
    kb = _keyed_jobs(kind, tb, "B", out)
    ia = {c: i for i, c in enumerate(ta.header)}
    ib = {c: i for i, c in enumerate(tb.header)}
    pairs = [(c, ia[c], ib[c], 0.0 if _exact(kind, c) else tolerance) for c in cols]
    for key, na in ka.items():
        job = f"{key[0]}!{key[1]}"
        nb = kb.get(key)
        if nb is None:
            out.append(Difference(kind, job, "(row)", "present", "(absent)"))
            continue
        ra, rb = ta.rows[na], tb.rows[nb]
        before = len(out)
        for col, i, j, tol in pairs:
            x = ra[i] if i < len(ra) else ""
            y = rb[j] if j < len(rb) else ""
            if not _same(x, y, tol):
                out.append(Difference(kind, job, col, x, y))
        # Same cells but different text: quoting (metadata is always quoted by Batsim).
        if (
            len(out) == before
            and tolerance <= 0
            and ta.raw is not None
            and tb.raw is not None
            and ta.header == tb.header
            and ta.raw[na] != tb.raw[nb]
        ):
            out.append(Difference(kind, job, "(quoting)", ta.raw[na], tb.raw[nb]))
    for key in kb:
        if key not in ka:
            out.append(Difference(kind, f"{key[0]}!{key[1]}", "(row)", "(absent)", "present"))


def compare(a: str, b: str, *, tolerance: float = 0.0) -> CompareResult:
    """Compare the Batsim outputs `a` and `b` (prefixes, folders or files).

    Raises UsageError when a side has no output at all or a file cannot be read.
    """
    if tolerance < 0:
        raise UsageError(f"tolerance must be >= 0, got {tolerance}")
    fa, fb = locate(a), locate(b)
    result = CompareResult(fa, fb)
    out = result.differences
    for kind in KINDS:
        if kind not in fa and kind not in fb:
            continue
        if kind not in fb:
            out.append(Difference(kind, "-", "(file)", fa[kind], "(absent)"))
            continue
        if kind not in fa:
            out.append(Difference(kind, "-", "(file)", "(absent)", fb[kind]))
            continue
        ta, tb = _read(fa[kind]), _read(fb[kind])
        if kind == "jobs":
            _compare_jobs(ta, tb, tolerance, out)
        else:
            _compare_rows(kind, ta, tb, tolerance, out)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    """`batsim-py compare A B [--tolerance X]`: 0 identical, 1 different, 2 usage error."""
    parser = argparse.ArgumentParser(
        prog="batsim-py compare",
        description="Compare two sets of Batsim output files, cell by cell (jobs matched by "
        "workload and id; the wall-clock columns of schedule.csv ignored). Exit code 0: "
        "identical, 1: different (a table of differences is printed), 2: usage error.",
        epilog="example: batsim-py compare outputs/fcfs outputs/easy",
    )
    parser.add_argument("a", metavar="A", help="output prefix (outputs/run for "
                        "outputs/run_jobs.csv ...), a folder holding one run, or one file")
    parser.add_argument("b", metavar="B", help="the other run, given the same way")
    parser.add_argument(
        "--tolerance", type=float, default=0.0, metavar="X",
        help="numeric cells are equal when |A - B| <= X (default 0: the same printed text); "
        "never applied to ids, allocations, states and counts",
    )
    parser.add_argument(
        "--limit", type=int, default=DEFAULT_LIMIT, metavar="N",
        help=f"list at most N differences (default {DEFAULT_LIMIT})",
    )
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return 0 if e.code == 0 else 2
    try:
        result = compare(args.a, args.b, tolerance=args.tolerance)
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(result.table(limit=max(args.limit, 0)))
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
