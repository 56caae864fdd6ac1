"""The kernel: SimGrid's step clock, rounds, and the serialised server mailbox."""

from __future__ import annotations

import numpy as np

from batsim_py.sim.engine import (
    GET,
    PUT,
    SLEEP,
    SLEEP_UNTIL,
    SPAWN,
    SPAWN_THEN,
    Actor,
    Engine,
    scripted,
)

# small_platform's master self route: 15 us, 498 MB/s
LOOPBACK = (15e-6, 498e6, False, "master_host")


def test_the_clock_accumulates_step_deltas_like_simgrid() -> None:
    """Two sleeps from 0: the 0.9 s one ends at 0.2 + (0.9 - 0.2), not at 0.9."""
    engine = Engine()
    ends: dict[str, float] = {}

    def sleeper(name: str, d: float):
        yield (SLEEP, d)
        ends[name] = engine.now

    engine.spawn(sleeper("short", 0.2))
    engine.spawn(sleeper("long", 0.9))
    engine.run()
    assert ends["short"] == 0.2
    assert ends["long"] == 0.2 + (0.9 - 0.2)
    assert ends["long"] != 0.9  # 0.8999999999999999: the float SimGrid prints from


def test_sleeps_within_a_nanosecond_end_together() -> None:
    engine = Engine()
    ends: list[tuple[str, float]] = []

    def sleeper(name: str, d: float):
        yield (SLEEP, d)
        ends.append((name, engine.now))

    engine.spawn(sleeper("b", 1.0 + 5e-10))
    engine.spawn(sleeper("a", 1.0))
    engine.run()
    # Same step; woken in creation order of their sleeps.
    assert ends == [("b", 1.0), ("a", 1.0)]


def test_long_catch_up_is_a_sequential_fold() -> None:
    engine = Engine()
    ends: list[float] = []

    def ticker():
        for _ in range(200):
            yield (SLEEP, 0.1)

    def long_sleeper():
        yield (SLEEP, 17.3)
        ends.append(engine.now)

    engine.spawn(ticker())
    engine.spawn(long_sleeper())
    engine.run()
    deltas = list(engine._deltas[: engine._k])
    # The long sleep ends at the step where its remaining duration, reduced by every delta
    # in order, falls below 1e-9; the clock is the running sum of those deltas.
    rem = 17.3
    now = 0.0
    for d in deltas:
        now += d
        rem -= d
        if rem < 1e-9:
            break
    assert ends == [now]
    assert float(np.subtract.accumulate(np.concatenate(([17.3], deltas[:5])))[-1]) == (
        ((((17.3 - deltas[0]) - deltas[1]) - deltas[2]) - deltas[3]) - deltas[4]
    )


def test_messages_are_serialised_through_the_server_mailbox() -> None:
    engine = Engine()
    received: list[tuple[float, str]] = []

    def sender(name: str):
        yield (PUT, name, LOOPBACK)

    def server():
        for _ in range(3):
            msg = yield (GET,)
            received.append((engine.now, msg))

    for name in "abc":
        engine.spawn(sender(name))
    engine.spawn(server())
    engine.run()
    assert [m for _, m in received] == ["a", "b", "c"]
    t = 0.0
    for got, _ in received:
        t = (t + 15e-6) + 1 / 498e6  # latency step, then the byte step
        assert got == t


def test_a_post_in_the_same_round_is_not_yet_in_the_mailbox() -> None:
    engine = Engine()
    seen: list[bool] = []

    def sender():
        yield (PUT, "first", LOOPBACK)
        yield (PUT, "second", LOOPBACK)  # woken with the server: posted after its check

    def server():
        yield (GET,)
        seen.append(engine.mailbox.has_pending())
        yield (GET,)

    engine.spawn(sender())
    engine.spawn(server())
    engine.run()
    assert seen == [False]


def test_a_post_from_an_earlier_step_is_in_the_mailbox() -> None:
    engine = Engine()
    seen: list[bool] = []

    def sender():
        yield (PUT, "first", LOOPBACK)

    def early():
        yield (SLEEP, 1e-6)
        yield (PUT, "queued", LOOPBACK)

    def server():
        yield (GET,)
        seen.append(engine.mailbox.has_pending())
        yield (GET,)

    engine.spawn(sender())
    engine.spawn(early())
    engine.spawn(server())
    engine.run()
    assert seen == [True]


def test_a_spawned_actor_runs_before_its_creator_resumes() -> None:
    engine = Engine()
    order: list[str] = []

    def child():
        order.append("child")
        yield (SLEEP, 0.0)

    def parent():
        order.append("parent starts")
        yield (SPAWN, child())
        order.append("parent resumes")

    engine.spawn(parent())
    engine.run()
    assert order == ["parent starts", "child", "parent resumes"]


def _request_reply_run(script: bool) -> list[tuple[float, str]]:
    """A server receiving a request-reply actor's messages: `script` makes that actor a list
    of requests (the scheduler's reply times 0.5 and 0.25 are ahead and behind the clock),
    else the generator it stands for."""
    engine = Engine()
    log: list[tuple[float, str]] = []
    started: list[float] = []

    def requests() -> list[tuple]:
        started.append(engine.now)
        return [(SLEEP_UNTIL, 0.5), (PUT, "decision 1", LOOPBACK), (SLEEP_UNTIL, 0.25),
                (PUT, "decision 2", LOOPBACK), (SLEEP_UNTIL, 0.5), (PUT, "ready", LOOPBACK)]

    def generator():
        started.append(engine.now)
        for at, msg in ((0.5, "decision 1"), (0.25, "decision 2"), (0.5, "ready")):
            if at > engine.now:
                yield (SLEEP, at - engine.now)
            yield (PUT, msg, LOOPBACK)

    def ticker():  # another actor whose steps interleave
        for _ in range(4):
            yield (SLEEP, 0.2)
            log.append((engine.now, "tick"))

    def server():
        rr = scripted(requests, "request-reply") if script else Actor(generator())
        msg = yield (SPAWN_THEN, rr, None)
        for _ in range(3):
            msg = yield (GET,)
            log.append((engine.now, msg))

    engine.spawn(ticker())
    engine.spawn(server())
    engine.run()
    assert started == [0.0]
    return log


def test_a_scripted_actor_issues_what_its_generator_would() -> None:
    log = _request_reply_run(script=True)
    assert log == _request_reply_run(script=False)
    # SLEEP_UNTIL 0.5 slept (then the message's two steps), 0.25 (behind) was skipped.
    assert [m for _, m in log if m != "tick"] == ["decision 1", "decision 2", "ready"]
    assert log[2][0] > 0.5 and log[2][1] == "decision 1"


def test_a_scripted_actor_may_go_on_as_a_generator() -> None:
    engine = Engine()
    got: list[str] = []

    def rest():
        yield (PUT, "registered", LOOPBACK)
        yield (PUT, "ready", LOOPBACK)

    def server():
        yield (SPAWN_THEN, scripted(rest, "request-reply"), None)
        for _ in range(2):
            got.append((yield (GET,)))

    engine.spawn(server())
    engine.run()
    assert got == ["registered", "ready"]


def _spawn_then_receive_run(merged: bool) -> list[str]:
    """A server that spawns a child then receives again: resumed in between (`merged` False)
    or not (SPAWN_THEN with the receive)."""
    engine = Engine()
    order: list[str] = []

    def child():
        order.append("child runs")
        yield (PUT, "from child", LOOPBACK)
        order.append("child's message received")  # before or after the server wakes

    def server():
        msg = yield (GET,)
        order.append(f"got {msg}")
        if merged:
            msg = yield (SPAWN_THEN, Actor(child(), "child"), (GET,))
        else:
            yield (SPAWN, child(), "child", "")
            msg = yield (GET,)
        order.append(f"got {msg}")

    def first():
        yield (PUT, "hello", LOOPBACK)

    engine.spawn(first())
    engine.spawn(server())
    engine.run()
    return order


def test_spawn_then_receive_keeps_the_order_of_a_resume() -> None:
    merged = _spawn_then_receive_run(merged=True)
    assert merged == _spawn_then_receive_run(merged=False)
    # The receive comes after the child's post (both in the next round): the message was
    # queued, so its sender wakes first (SimGrid's order for a receive finding a message).
    i = merged.index("child's message received")
    assert merged[i + 1] == "got from child"


def test_free_messages_complete_at_the_same_date() -> None:
    engine = Engine()
    got: list[float] = []

    def sender():
        yield (PUT, "m", (0.0, float("inf"), True, "h"))

    def server():
        yield (GET,)
        got.append(engine.now)

    engine.spawn(sender())
    engine.spawn(server())
    engine.run()
    assert got == [0.0]


def test_killing_an_actor_cancels_its_sleep() -> None:
    engine = Engine()
    ends: list[str] = []

    def victim():
        yield (SLEEP, 10.0)
        ends.append("victim")

    def killer(target):
        yield (SLEEP, 1.0)
        engine.kill(target)
        ends.append(f"killed at {engine.now}")

    v = engine.spawn(victim())
    engine.spawn(killer(v))
    engine.run()
    assert ends == ["killed at 1.0"]
    assert engine.now == 1.0


def test_a_cancelled_sleep_does_not_hide_later_ones() -> None:
    engine = Engine()
    ends: list[str] = []

    def victim():
        yield (SLEEP, 5.0)
        ends.append("victim")

    def later():
        yield (SLEEP, 100.0)
        ends.append(f"later at {engine.now}")

    def killer(target):
        yield (SLEEP, 1.0)
        engine.kill(target)

    v = engine.spawn(victim())
    engine.spawn(later())
    engine.spawn(killer(v))
    engine.run()
    assert ends == ["later at 100.0"]


def test_rebasing_the_step_record_changes_no_date(monkeypatch) -> None:
    """Bringing pending sleeps up to date early (record full) gives the same floats."""
    import batsim_py.sim.engine as engine_module

    def scenario() -> list[float]:
        engine = Engine()
        ends: list[float] = []

        def ticker():
            for _ in range(300):
                yield (SLEEP, 0.1)

        def sleeper(d: float):
            yield (SLEEP, d)
            ends.append(engine.now)

        engine.spawn(ticker())
        for d in (17.3, 0.35, 29.999, 12.0000001):
            engine.spawn(sleeper(d))
        engine.run()
        return ends

    normal = scenario()
    monkeypatch.setattr(engine_module, "DELTAS", 7)
    assert scenario() == normal


def test_submitter_gap_is_the_long_double_difference() -> None:
    import random

    from batsim_py.sim.submitter import LD, sleep_gap

    rng = random.Random(11)
    for _ in range(100_000):
        current = rng.choice([rng.uniform(0, 1e6), rng.uniform(0, 1e11),
                              rng.randint(0, 10**6) + rng.random() * 1e-6])
        due = rng.choice([current + rng.randint(1, 1000), current + rng.random() * 1e-3,
                          rng.uniform(current, 3 * current + 1)])
        assert sleep_gap(due, current) == float(LD(due) - LD(current)), (due, current)
