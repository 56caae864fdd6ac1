"""Test EDC (after Batsim 5's test/edc-lib/periodic and call-later-oneshot): asks for the
calls its init data lists at the first message, rejects every job, stops its infinite call
after `stop_after` calls, and asks a one-shot call in the past when `oneshot_past` is set.

Init data: {"calls": [{"id", "period", "nb" (null: infinite), "unit", "offset"}],
"stop_after": {"ID": N}, "restart": {"ID": {"period", "nb"}} (a new call with the id of
the one just stopped), "oneshot_past": bool}."""

from __future__ import annotations

from batsim_py.edcs import kit

_s: dict = {}


def batsim_edc_init(init_data):
    _s.clear()
    _s.update(kit.init_options(init_data), started=False, counts={}, past_sent=False)
    _s["codec"] = kit.Codec(binary=bool(_s.get("format_binary")))
    return _s["codec"].flags, _s["codec"].encode(kit.hello("periodic-test", "1"))


def batsim_edc_take_decisions(data):
    msg = _s["codec"].decode(data)
    now = msg["now"]
    out = []
    if not _s["started"]:
        _s["started"] = True
        for c in _s.get("calls", []):
            ev = kit.call_me_periodically(now, c["id"], c["period"], c.get("nb"),
                                          c.get("unit", "Second"))
            ev["event"]["when"]["offset"] = c.get("offset", 0)
            out.append(ev)
    for item in msg["events"]:
        kind, e = item["event_type"], item["event"]
        if kind == "JobSubmittedEvent":
            out.append(kit.reject_job(now, e["job_id"]))
        elif kind == "RequestedCallEvent":
            ident = e["call_me_later_id"]
            _s["counts"][ident] = _s["counts"].get(ident, 0) + 1
            if _s.get("stop_after", {}).get(ident) == _s["counts"][ident]:
                out.append(kit.event(now, "StopCallMeLaterEvent", {"call_me_later_id": ident}))
                again = _s.get("restart", {}).pop(ident, None)
                if again is not None:  # a new periodic call with the stopped one's id
                    out.append(kit.call_me_periodically(now, ident, again["period"],
                                                        again["nb"]))
    if _s.get("oneshot_past") and not _s["past_sent"] and now > 5:
        _s["past_sent"] = True
        out.append(kit.call_me_later_at(now, "past", 1))
    return _s["codec"].encode(kit.message(now, out))


def batsim_edc_deinit():
    _s.clear()
