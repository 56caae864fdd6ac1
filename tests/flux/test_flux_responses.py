"""Alloc responses (§5.4 items 3 and 4): annotations, DENY, CANCEL and late SUCCESS, and
every error path, stopping the run with outputs written or suspending with --flux-tolerant."""

from __future__ import annotations

import json

import pytest
from raw_client import NodeFifo, R, delays, handshake, msg, platform, read_csv, run

from batsim_py.protocol.flux.annotations import merge


def test_annotation_rules_rfc27():
    notes: dict = {}
    merge(notes, {"sched": {"t_estimate": 593016000.0,
                            "reason_pending": "requested GPUs are unavailable"}})
    merge(notes, {"sched": {"resource_summary": "rank[0-1]/core0"}})  # objects merge
    assert notes == {"sched": {"t_estimate": 593016000.0, "resource_summary": "rank[0-1]/core0",
                               "reason_pending": "requested GPUs are unavailable"}}
    merge(notes, {"sched": {"t_estimate": None, "reason_pending": None}, "user": {"a": [1]}})
    assert notes == {"sched": {"resource_summary": "rank[0-1]/core0"}, "user": {"a": [1]}}
    merge(notes, {"user": 5})  # a non-object replaces
    merge(notes, {"sched": {"resource_summary": None}})  # an emptied object goes too
    assert notes == {"user": 5}


def _answer_first_alloc(answers):
    """A client that answers the first alloc with `answers` (a list of payloads), then
    behaves like NodeFifo."""
    fifo = NodeFifo()

    def hook(m, batch, out):
        if m["kind"] != "request" or fifo.hooks.get("done"):
            return None
        fifo.hooks["done"] = True
        for p in answers(m["payload"]["id"]):
            out.append(msg("sched.alloc", "response", p))
            if p.get("type") == 0:
                fifo.free_ranks = [r for r in fifo.free_ranks if str(r) not in
                                   [e["rank"] for e in p["R"]["execution"]["R_lite"]]]
        return True

    fifo.hooks["sched.alloc"] = hook
    return fifo


def test_annotate_then_success_deletes_with_null(tmp_path):
    fifo = _answer_first_alloc(lambda i: [
        {"id": i, "type": 1, "annotations": {"sched": {"t_estimate": 593016000.0,
                                                       "reason_pending": "wait"}}},
        {"id": i, "type": 1, "annotations": {"user": {"tag": "x"}}},
        {"id": i, "type": 0, "R": R({0: "0"}), "annotations": {
            "sched": {"t_estimate": None, "resource_summary": "rank0/core0"}}}])
    code, _ = run(tmp_path, fifo, delays((0, 1, 10), (0, 1, 10)), platform(2))
    assert code == 0
    flux = read_csv(tmp_path / "out_flux_jobs.csv")
    assert json.loads(flux[0]["annotations"]) == {
        "sched": {"reason_pending": "wait", "resource_summary": "rank0/core0"},
        "user": {"tag": "x"}}
    assert flux[1]["annotations"] == ""


def test_deny_is_rejected_with_note(tmp_path):
    fifo = _answer_first_alloc(lambda i: [
        {"id": i, "type": 2, "note": "more nodes requested than configured"}])
    code, _ = run(tmp_path, fifo, delays((0, 1, 10), (0, 1, 10)), platform(2))
    assert code == 0
    jobs = read_csv(tmp_path / "out_jobs.csv")
    assert {j["job_id"]: j["final_state"] for j in jobs} == {
        "1": "REJECTED", "2": "COMPLETED_SUCCESSFULLY"}
    flux = read_csv(tmp_path / "out_flux_jobs.csv")[0]
    assert (flux["result"], flux["exception_type"], flux["exception_note"]) == (
        "FAILED", "alloc", "more nodes requested than configured")


def test_late_success_after_cancel_is_freed_at_once(tmp_path):
    def script(batch, state):
        out = handshake(batch, state, {"mode": "unlimited"}) or []
        for m in batch["messages"]:
            if m["topic"] == "sched.alloc":
                state["id"] = m["payload"]["id"]  # kept pending
            if m["topic"] == "sched.cancel":  # answered by a SUCCESS (it raced the cancel)
                state["cancel_at"] = batch["now"]
                out.append(msg("sched.alloc", "response",
                               {"id": m["payload"]["id"], "type": 0, "R": R({1: "0"})}))
        return {"now": batch["now"], "messages": out}

    events = [{"timestamp": 5, "type": "flux_cancel", "job_id": "w0!1"}]
    code, client = run(tmp_path, script, delays((0, 1, 10)), platform(2), "--timing", "ideal",
                       events=events)
    assert code == 0
    frees = client.sent("sched.free")
    assert len(frees) == 1 and frees[0][0] == 5
    assert frees[0][1]["payload"]["id"] == 1 and frees[0][1]["payload"]["final"] is True
    assert frees[0][1]["payload"]["R"]["execution"]["R_lite"] == [
        {"rank": "1", "children": {"core": "0"}}]
    assert read_csv(tmp_path / "out_jobs.csv")[0]["final_state"] == "REJECTED"
    assert read_csv(tmp_path / "out_flux_jobs.csv")[0]["result"] == "CANCELED"


ERRORS = {
    "no R": (lambda i: [{"id": i, "type": 0}], "without R"),
    "no such rank": (lambda i: [{"id": i, "type": 0, "R": R({7: "0"})}],
                     "names rank 7, which does not exist"),
    "no such core": (lambda i: [{"id": i, "type": 0, "R": R({0: "3"})}],
                     "names core 3 of rank 0"),
    "two SUCCESS": (lambda i: [{"id": i, "type": 0, "R": R({0: "0"})}] * 2,
                    "no sched.alloc is pending for it (it already got its SUCCESS)"),
    "errnum": (lambda i: [None], "answered sched.alloc with an error response (errnum 5"),
    "bad type": (lambda i: [{"id": i, "type": 7}], "with type 7"),
    "CANCEL unasked": (lambda i: [{"id": i, "type": 3}], "never sent sched.cancel"),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_error_paths_stop_the_run_with_outputs(tmp_path, capsys, case):
    answers, text = ERRORS[case]
    fifo = NodeFifo()

    def hook(m, batch, out):
        if m["kind"] != "request":
            return None
        if fifo.hooks.get("done"):
            return True  # never answered: the run must stop on the first error anyway
        fifo.hooks["done"] = True
        for p in answers(m["payload"]["id"]):
            out.append(msg("sched.alloc", "response", p, 0) if p is not None else
                       {**msg("sched.alloc", "response", None, 5), "errstr": "boom"})
        return True

    fifo.hooks["sched.alloc"] = hook
    code, _ = run(tmp_path, fifo, delays((0, 1, 10)), platform(2))
    err = capsys.readouterr().err
    assert code == 1, err
    assert text in err and "--flux-tolerant" in err
    assert err.count("\n") == 1  # one line
    assert (tmp_path / "out_jobs.csv").exists() and (tmp_path / "out_flux_jobs.csv").exists()


def test_allocated_and_down_resources_are_refused(tmp_path, capsys):
    fifo = _answer_first_alloc(lambda i: [{"id": i, "type": 0, "R": R({0: "0"})},
                                          {"id": i + 1, "type": 0, "R": R({0: "0"})}])
    code, _ = run(tmp_path, fifo, delays((0, 1, 10), (0, 1, 10)), platform(2), "--timing",
                  "ideal")
    assert code == 1
    assert "core 0, already allocated to job 1 ('w0!1')" in capsys.readouterr().err
    fifo = _answer_first_alloc(lambda i: [{"id": i, "type": 0, "R": R({1: "0"})}])
    events = [{"timestamp": 0, "type": "machine_unavailable", "resources": "1"}]
    code, _ = run(tmp_path, fifo, delays((1, 1, 10)), platform(2), events=events)
    assert code == 1
    assert "names rank 1 (node1), which is down" in capsys.readouterr().err


def test_tolerant_suspends_until_a_new_hello(tmp_path):
    fifo = NodeFifo()

    def hook(m, batch, out):
        if m["kind"] == "request" and fifo.hooks.get("done") in (None, id(batch)):
            if "done" not in fifo.hooks:  # an error response, then a restart: hello, ready
                out += [{**msg("sched.alloc", "response", None, 5), "errstr": "crashed"},
                        msg("job-manager.sched-hello", "request", {})]
            fifo.hooks["done"] = id(batch)
            return True  # (the crashed scheduler forgot every alloc of that batch)
        return None

    fifo.hooks["sched.alloc"] = hook
    code, client = run(tmp_path, fifo, delays((0, 1, 10), (0, 1, 10)), platform(2),
                       "--flux-tolerant")
    assert code == 0
    ids = [m["payload"]["id"] for _, m in client.sent("sched.alloc")]
    assert ids == [1, 2, 1, 2]  # both allocs sent again after the new hello and ready
    jobs = read_csv(tmp_path / "out_jobs.csv")
    assert [j["final_state"] for j in jobs] == ["COMPLETED_SUCCESSFULLY"] * 2
