"""Test EDC (after Batsim 5's dyn-register): registers a delay profile and three jobs in
workload "dyn" at the start, finishes the registration, rejects the static jobs and runs the
registered ones one at a time on host 0 once they are acknowledged (JobSubmittedEvent).
Init {"no_feature": true}: the hello does not ask for dynamic registration."""

from __future__ import annotations

from batsim_py.edcs import kit

_s: dict = {}


def batsim_edc_init(init_data):
    _s.clear()
    _s.update(kit.init_options(init_data), started=False, queue=[], busy=False)
    _s["codec"] = kit.Codec()
    features = ({} if _s.get("no_feature") else
                {"dynamic_registration": True, "acknowledge_dynamic_jobs": True})
    return _s["codec"].flags, _s["codec"].encode(kit.hello("submitter-test", "1", **features))


def batsim_edc_take_decisions(data):
    msg = _s["codec"].decode(data)
    now = msg["now"]
    out = []
    if not _s["started"]:
        _s["started"] = True
        out.append(kit.event(now, "RegisterProfileEvent", {"profile": {
            "id": "dyn!d10", "profile_type": "DelayProfile", "profile": {"delay": 10.0}}}))
        for i in range(3):
            out.append(kit.event(now, "RegisterJobEvent", {
                "job_id": f"dyn!{i}", "job": {"resource_request": 1, "walltime": 100.0,
                                              "profile_id": "d10"}}))
        out.append(kit.event(now, "FinishRegistrationEvent", {}))
    for item in msg["events"]:
        kind, e = item["event_type"], item["event"]
        if kind == "JobSubmittedEvent":
            if e["job_id"].startswith("dyn!"):
                _s["queue"].append(e["job_id"])
            else:
                out.append(kit.reject_job(now, e["job_id"]))
        elif kind == "JobCompletedEvent" and e["job_id"].startswith("dyn!"):
            _s["busy"] = False
    if _s["queue"] and not _s["busy"]:
        _s["busy"] = True
        out.append(kit.execute_job(now, _s["queue"].pop(0), "0"))
    return _s["codec"].encode(kit.message(now, out))


def batsim_edc_deinit():
    _s.clear()
