"""In-process schedulers shipped with batsim-py, by the names `--scheduler NAME` accepts.

Each reproduces the decisions of a pybatsim 3.2.1 scheduler exactly, so a run with the in-process
scheduler gives the same outputs as Batsim + pybatsim without a ZeroMQ round trip per event.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from batsim_py.decision.interface import DecisionProcess
from batsim_py.errors import UsageError
from batsim_py.schedulers.easy import EasyBackfill
from batsim_py.schedulers.energy_sleep import FcfsSleep
from batsim_py.schedulers.fcfs import Fcfs

SCHEDULERS: dict[str, type[DecisionProcess]] = {
    "fcfs": Fcfs,  # pybatsim schedFcfs
    "easy": EasyBackfill,  # pybatsim easyBackfill
    "fcfs_sleep": FcfsSleep,  # energy-aware: sleeps idle machines (needs -E)
}


def get_scheduler(name: str, options: Mapping[str, Any] | None = None) -> DecisionProcess:
    """A fresh scheduler instance; `options` are its keyword options (pybatsim `-o` names)."""
    try:
        cls = SCHEDULERS[name]
    except KeyError:
        known = ", ".join(sorted(SCHEDULERS))
        raise UsageError(f"unknown scheduler '{name}' (known: {known})") from None
    opts = dict(options or {})
    try:
        return cls(**opts) if not _takes_options(cls) else cls(options=opts)  # type: ignore[call-arg]
    except TypeError as exc:
        raise UsageError(f"scheduler '{name}': bad options {opts}: {exc}") from None


def _takes_options(cls: type[DecisionProcess]) -> bool:
    """batsim.sched-style schedulers read pybatsim's option names (e.g. `sched-delay`)."""
    import inspect

    return "options" in inspect.signature(cls.__init__).parameters


__all__ = ["SCHEDULERS", "get_scheduler", "EasyBackfill", "Fcfs"]
