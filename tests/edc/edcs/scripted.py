"""Test EDC: sends the events its init data lists ({"first": [{"event_type", "event"}]}) in
its first reply, rejects every job, answers everything else with nothing; with
"stop_on_call": true, answers a requested call with ForceSimulationStopEvent."""

from __future__ import annotations

from batsim_py.edcs import kit

_s: dict = {}


def batsim_edc_init(init_data):
    _s.clear()
    _s.update(kit.init_options(init_data), started=False)
    _s["codec"] = kit.Codec()
    return _s["codec"].flags, _s["codec"].encode(kit.hello("scripted-test", "1"))


def batsim_edc_take_decisions(data):
    msg = _s["codec"].decode(data)
    now = msg["now"]
    out = []
    if not _s["started"]:
        _s["started"] = True
        out += [kit.event(now, e["event_type"], e["event"]) for e in _s.get("first", [])]
    for item in msg["events"]:
        if item["event_type"] == "JobSubmittedEvent":
            out.append(kit.reject_job(now, item["event"]["job_id"]))
        elif item["event_type"] == "RequestedCallEvent" and _s.get("stop_on_call"):
            out.append(kit.event(now, "ForceSimulationStopEvent", {}))
    return _s["codec"].encode(kit.message(now, out))


def batsim_edc_deinit():
    _s.clear()
