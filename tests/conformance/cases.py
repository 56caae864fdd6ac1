"""A reference case (tests/conformance/reference/NAME) as a batsim-py run: its case.json's
platform, workloads, external events and Batsim flags mapped to a `RunSpec`, for the tests
that rerun a case in-process (with its transcript or an equivalent scheduler)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from batsim_py.run import RunSpec
from batsim_py.sim.options import Options

REFERENCE = Path(__file__).resolve().parent / "reference"
# The Batsim flags of the reference cases, as run options: RunSpec's (mmax_workload) or
# Options' (the others).
FLAGS: dict[str, tuple[str, str]] = {
    "--mmax-workload": ("spec", "mmax_workload"),
    "--forward-profiles-on-submission": ("options", "forward_profiles_on_submission"),
    "--enable-dynamic-jobs": ("options", "dynamic_jobs"),
    "--acknowledge-dynamic-jobs": ("options", "acknowledge_dynamic_jobs"),
    "--energy": ("options", "energy"),
}


def case_json(case: str, root: Path = REFERENCE) -> dict[str, Any]:
    """The case's case.json (`root`: the corpus, or tests/conformance/oracle)."""
    folder = root / case
    assert folder.is_dir(), f"{folder}: the shipped reference corpus is missing"
    return json.loads((folder / "case.json").read_text())


def case_run_spec(case: str, export_prefix: str = "out", *, timing: str = "batsim",
                  energy: bool = True, root: Path = REFERENCE) -> RunSpec:
    """The case's run in `timing`, writing to `export_prefix`: every flag of the case
    (`--energy` only with `energy`: tests comparing energy-less runs drop it)."""
    spec = case_json(case, root)
    folder = root / case
    spec_kw: dict[str, Any] = {}
    option_kw: dict[str, Any] = {"export_prefix": export_prefix, "timing": timing}
    for flag in spec["batsim_args"]:
        if flag == "--energy" and not energy:
            continue
        where, name = FLAGS[flag]  # (a flag not listed: a KeyError naming it)
        (spec_kw if where == "spec" else option_kw)[name] = True
    return RunSpec(platform=str(folder / spec["platform"]),
                   workloads=[str(folder / w) for w in spec["workloads"]],
                   options=Options(**option_kw),
                   events=[str(folder / e) for e in spec["events"]], **spec_kw)
