"""Test EDC (after Batsim 5's killer): runs each job at once on the lowest free hosts and
kills it `kill_after` seconds after its submission (init {"kill_after": {"JOB_ID": S}};
"profiles": true asks for forward_profiles_on_jobs_killed)."""

from __future__ import annotations

from batsim_py.edcs import kit

_s: dict = {}


def batsim_edc_init(init_data):
    _s.clear()
    _s.update(kit.init_options(init_data), free=[], running={})
    _s["codec"] = kit.Codec()
    features = {"forward_profiles_on_jobs_killed": True} if _s.get("profiles") else {}
    return _s["codec"].flags, _s["codec"].encode(kit.hello("killer-test", "1", **features))


def batsim_edc_take_decisions(data):
    msg = _s["codec"].decode(data)
    now = msg["now"]
    out = []
    for item in msg["events"]:
        kind, e = item["event_type"], item["event"]
        if kind == "SimulationBeginsEvent":
            _s["free"] = [h["id"] for h in e["computation_hosts"]]
        elif kind == "JobSubmittedEvent":
            res = e["job"]["resource_request"]
            hosts, _s["free"] = _s["free"][:res], _s["free"][res:]
            _s["running"][e["job_id"]] = hosts
            out.append(kit.execute_job(now, e["job_id"], kit.format_hosts(hosts)))
            after = _s.get("kill_after", {}).get(e["job_id"])
            if after is not None:
                out.append(kit.call_me_later_at(now, e["job_id"], int(now + after)))
        elif kind == "JobCompletedEvent":
            _s["free"] = sorted(_s["free"] + _s["running"].pop(e["job_id"]))
        elif kind == "RequestedCallEvent" and e["call_me_later_id"] in _s["running"]:
            out.append(kit.kill_jobs(now, [e["call_me_later_id"]]))
    return _s["codec"].encode(kit.message(now, out))


def batsim_edc_deinit():
    _s.clear()
