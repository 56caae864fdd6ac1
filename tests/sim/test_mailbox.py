"""The server mailbox: FIFO, one transfer at a time, same-round posts invisible to the check."""

from __future__ import annotations

from batsim_py.sharing.lone import lone_transfer
from batsim_py.sim.kernel import Kernel
from batsim_py.sim.mailbox import Mailbox

COST = (15e-6, 1 / 498e6)  # small_platform's loopback: 15 us, 498 MB/s


def test_lone_transfer_of_one_byte() -> None:
    lat, xfer = lone_transfer(15e-6, [498e6], 1.0)
    assert lat == 15e-6 and xfer == 1 / 498e6
    # TCP-gamma bound: 1e8 bytes on 125 MB/s, 100 us -> 0.8001 s (simgrid-models §2.7)
    lat, xfer = lone_transfer(1e-4, [125e6], 1e8)
    assert abs(lat + xfer - 0.8001) < 1e-12
    assert lone_transfer(0.0, [], 1.0) == (0.0, 0.0)


def test_messages_are_serialised_in_posting_order() -> None:
    env = Kernel()
    box = Mailbox(env)
    received: list[tuple[float, str]] = []

    def sender(name: str):
        yield box.put(name, COST)

    def server():
        for _ in range(3):
            msg = yield box.get()
            received.append((env.now, msg))

    for name in "abc":
        env.process(sender(name))
    env.process(server())
    env.run()
    d = 15e-6 + 1 / 498e6
    assert [m for _, m in received] == ["a", "b", "c"]
    for k, (t, _) in enumerate(received, start=1):
        assert abs(t - k * d) < 1e-15


def test_a_post_in_the_same_round_is_not_visible_to_the_server_check() -> None:
    env = Kernel()
    box = Mailbox(env)
    seen: list[bool] = []

    def sender():
        yield box.put("first", COST)
        # Woken with the server by the same delivery: this post comes after its check.
        yield box.put("second", COST)

    def server():
        yield box.get()
        seen.append(box.has_pending())
        yield box.get()

    env.process(sender())
    env.process(server())
    env.run()
    assert seen == [False]


def test_a_post_from_an_earlier_date_is_visible_to_the_server_check() -> None:
    env = Kernel()
    box = Mailbox(env)
    seen: list[bool] = []

    def sender():
        yield box.put("first", COST)

    def early_sender():
        yield env.timeout(1e-6)
        yield box.put("queued", COST)

    def server():
        yield box.get()
        seen.append(box.has_pending())
        yield box.get()

    env.process(sender())
    env.process(early_sender())
    env.process(server())
    env.run()
    assert seen == [True]


def test_free_messages_complete_in_a_later_step_of_the_same_date() -> None:
    env = Kernel()
    box = Mailbox(env)
    order: list[str] = []

    def sender():
        yield box.put("m", (0.0, 0.0))
        order.append(f"delivered@{env.now}")

    def other():
        yield env.timeout(0)
        order.append("same-step round")

    def server():
        yield box.get()

    env.process(server())
    env.process(sender())
    env.process(other())
    env.run()
    assert order == ["same-step round", "delivered@0"]
