"""Test EDC: runs each job on host 0, the profiles named in init {"override": {PROFILE_ID:
HOSTS}} on those hosts instead (profile_allocation_override, seed 002's ExecuteJobEvent), with
the executors spread over them; {"mapping": {PROFILE_ID: [...]}} gives a custom mapping."""

from __future__ import annotations

from batsim_py.edcs import kit

_s: dict = {}


def batsim_edc_init(init_data):
    _s.clear()
    _s.update(kit.init_options(init_data))
    _s["codec"] = kit.Codec()
    return _s["codec"].flags, _s["codec"].encode(kit.hello("override-test", "1"))


def _placement(profile_id, hosts):
    mapping = _s.get("mapping", {}).get(profile_id)
    if mapping is not None:
        return {"executor_placement_type": "CustomExecutorToHostMapping",
                "executor_placement": {"mapping": mapping}}
    return {"executor_placement_type": "PredefinedExecutorPlacementStrategyWrapper",
            "executor_placement": {"strategy": "SpreadOverHostsFirst"}}


def batsim_edc_take_decisions(data):
    msg = _s["codec"].decode(data)
    now = msg["now"]
    out = []
    for item in msg["events"]:
        if item["event_type"] == "JobSubmittedEvent":
            decision = kit.execute_job(now, item["event"]["job_id"], "0")
            decision["event"]["profile_allocation_override"] = [
                {"profile_id": pid, "host_allocation": hosts, **_placement(pid, hosts)}
                for pid, hosts in _s.get("override", {}).items()]
            out.append(decision)
    return _s["codec"].encode(kit.message(now, out))


def batsim_edc_deinit():
    _s.clear()
