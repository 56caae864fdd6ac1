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
    """A fresh scheduler instance; `options` are its keyword options (pybatsim `-o` names).

    `name`: a shipped scheduler, one an installed package declares (entry-point group
    `batsim_py.schedulers`), or user code: `MODULE:CLASS` or `path/to/file.py:CLASS`."""
    from batsim_py import plugins

    cls: Any = SCHEDULERS.get(name)
    if cls is None:
        installed = plugins.installed_schedulers()
        if name in installed:
            cls = plugins.load_entry_point(name, installed[name])
        elif plugins.is_reference(name):
            cls = plugins.load_object(name, "scheduler")
        else:
            known = ", ".join(sorted(scheduler_names()))
            raise UsageError(
                f"unknown scheduler '{name}' (known: {known}; or your own class as "
                "MODULE:CLASS or path/to/file.py:CLASS)"
            ) from None
        return _instantiate_user(name, cls, dict(options or {}))
    opts = dict(options or {})
    try:
        return cls(**opts) if not _takes_options(cls) else cls(options=opts)  # type: ignore[no-any-return]
    except TypeError as exc:
        raise UsageError(f"scheduler '{name}': bad options {opts}: {exc}") from None


def scheduler_names() -> list[str]:
    """Shipped schedulers and those of installed packages (`--list-schedulers`)."""
    from batsim_py import plugins

    return sorted(set(SCHEDULERS) | set(plugins.installed_schedulers()))


def _instantiate_user(name: str, cls: Any, opts: dict[str, Any]) -> DecisionProcess:
    """A user scheduler: a DecisionProcess class (or any callable returning one)."""
    from batsim_py.errors import UserCodeError
    from batsim_py.plugins import call_user

    if not callable(cls):
        raise UserCodeError(f"scheduler '{name}' is a {type(cls).__name__}, not a class")
    try:
        takes_options = _takes_options(cls)
    except (TypeError, ValueError):
        takes_options = False
    scheduler = call_user(lambda: cls(options=opts) if takes_options else cls(**opts),
                          f"scheduler '{name}'")
    if not callable(getattr(scheduler, "exchange", None)):
        raise UserCodeError(
            f"scheduler '{name}': {type(scheduler).__name__} has no exchange(now, events) "
            "method; derive it from batsim_py.decision.interface.DecisionProcess (or "
            "batsim_py.schedulers.sched_common.SchedLayerScheduler)"
        )
    return scheduler  # type: ignore[no-any-return]


def _takes_options(cls: type[DecisionProcess]) -> bool:
    """batsim.sched-style schedulers read pybatsim's option names (e.g. `sched-delay`)."""
    import inspect

    return "options" in inspect.signature(cls.__init__).parameters


__all__ = ["SCHEDULERS", "get_scheduler", "scheduler_names", "EasyBackfill", "Fcfs"]
