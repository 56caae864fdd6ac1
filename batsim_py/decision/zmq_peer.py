"""An external scheduler over ZeroMQ, speaking the Batsim 4 JSON protocol.

Like Batsim, we connect a REQ socket to the scheduler's endpoint (the scheduler binds a REP
socket), send one message per scheduler call and block for the reply. A scheduler that does
not answer within the receive timeout, or whose socket breaks, is reported as a
`SchedulerError`; the engine then stops and writes what it simulated.
"""

from __future__ import annotations

from collections.abc import Sequence

import zmq

from batsim_py.decision.decisions import Reply
from batsim_py.decision.events import Event
from batsim_py.decision.interface import DecisionProcess
from batsim_py.errors import SchedulerError
from batsim_py.protocol.codec import decode_reply, encode_batsim_message


class ZmqPeer(DecisionProcess):
    def __init__(self, endpoint: str, timeout: float | None = None) -> None:
        """`timeout`: seconds to wait for each reply (None: forever, as Batsim)."""
        self.endpoint = endpoint
        self.timeout = timeout
        self._context = zmq.Context()
        self._socket = self._context.socket(zmq.REQ)
        self._socket.setsockopt(zmq.LINGER, 0)
        try:
            self._socket.connect(endpoint)
        except zmq.ZMQError as exc:
            self.close()
            raise SchedulerError(
                f"cannot connect to the scheduler at '{endpoint}': {exc} "
                "(expected an endpoint like tcp://localhost:28000)"
            ) from None
        self.nb_exchanges = 0

    def exchange(self, now: float, events: Sequence[Event]) -> Reply:
        return decode_reply(self.exchange_text(encode_batsim_message(now, events)))

    def exchange_text(self, message: str) -> str:
        """Send one Batsim message, return the scheduler's raw reply."""
        try:
            self._socket.send(message.encode("utf-8"))
            if self.timeout is not None and not self._socket.poll(int(self.timeout * 1000)):
                raise SchedulerError(
                    f"the scheduler at '{self.endpoint}' did not answer within "
                    f"{self.timeout:g} s (message {self.nb_exchanges + 1}); is it running "
                    "and bound to this endpoint?"
                )
            raw = self._socket.recv()
        except zmq.ZMQError as exc:
            raise SchedulerError(
                f"connection to the scheduler at '{self.endpoint}' broke: {exc}"
            ) from None
        self.nb_exchanges += 1
        return raw.decode("utf-8", errors="replace")

    def close(self) -> None:
        self._socket.close(linger=0)
        self._context.term()
