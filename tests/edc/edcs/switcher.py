"""Test EDC (after Batsim 5's machine-switcher and exec1by1-dvfs-dyn): puts hosts 0-3 to sleep
at the start, then sets hosts 4-7 to pstate 1, then wakes 0-3; runs every job on host 4.
With init {"dvfs_at": T}: only slows host 4 to pstate 1 (or {"dvfs_pstate": P}) at time T
(while a job runs)."""

from __future__ import annotations

from batsim_py.edcs import kit

_s: dict = {}


def batsim_edc_init(init_data):
    _s.clear()
    _s.update(kit.init_options(init_data), step=0)
    _s["codec"] = kit.Codec()
    return _s["codec"].flags, _s["codec"].encode(kit.hello("switcher-test", "1"))


def batsim_edc_take_decisions(data):
    msg = _s["codec"].decode(data)
    now = msg["now"]
    out = []
    for item in msg["events"]:
        kind, e = item["event_type"], item["event"]
        if kind == "SimulationBeginsEvent":
            if "dvfs_at" in _s:
                out.append(kit.call_me_later_at(now, "dvfs", _s["dvfs_at"]))
            else:
                out.append(kit.event(now, "TurnOnOffHostsEvent", {"host_ids": "0-3",
                                                                  "state": 2}))
        elif kind == "HostsTurnedOnOffEvent" and e["state"] == 2:
            out.append(kit.event(now, "ChangeHostsPStateEvent", {"host_ids": "4-7",
                                                                 "pstate": 1}))
        elif kind == "HostsPStateChangedEvent" and "dvfs_at" not in _s:
            out.append(kit.event(now, "TurnOnOffHostsEvent", {"host_ids": "0-3", "state": 0}))
        elif kind == "RequestedCallEvent":
            out.append(kit.event(now, "ChangeHostsPStateEvent",
                                 {"host_ids": "4", "pstate": _s.get("dvfs_pstate", 1)}))
        elif kind == "JobSubmittedEvent":
            out.append(kit.execute_job(now, e["job_id"], "4"))
    return _s["codec"].encode(kit.message(now, out))


def batsim_edc_deinit():
    _s.clear()
