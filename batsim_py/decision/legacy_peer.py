"""A scheduler of 2015-2017 speaking Batsim's legacy text protocol (seed 001).

The engine hands batches exactly as in the JSON mode (the same server rules decide which
events travel together and when); this peer turns each batch into one legacy message
(`protocol/legacy/codec.py`), sends it over its transport, and turns the reply into typed
decisions. What differs from the JSON mode is only what the old protocol said:
- the reply's header (`VERSION:TIME_MSG`) is ignored, as Batsim ignored it: the scheduler is
  ready again at its last event's date (`honor_msg_time`: at TIME_MSG if that is later);
- a batch with nothing to say in the old protocol (the first one before version 3, a lone
  "no more static jobs" notification) is not sent: the peer answers it itself, with nothing;
- the batch holding SIMULATION_ENDS (`Z` in version 3) is the last: once its reply is read the
  connection is closed and the scheduler reads EOF;
- with a Redis store (versions 2 and 3), each job's description is written to Redis before
  the message announcing it is sent (`redis_store.py`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from batsim_py.decision.decisions import Reply
from batsim_py.decision.events import Event, SimulationEnds
from batsim_py.decision.interface import DecisionProcess
from batsim_py.decision.legacy_transport import LegacyTransport
from batsim_py.protocol.legacy.codec import LegacyCodec
from batsim_py.protocol.legacy.message import parse_number
from batsim_py.wire import wire_time

network_log = logging.getLogger("batsim_py.network")


class LegacyPeer(DecisionProcess):
    def __init__(self, codec: LegacyCodec, transport: LegacyTransport,
                 honor_msg_time: bool = False, store: Any = None) -> None:
        self.codec = codec
        self.transport = transport
        self.honor_msg_time = honor_msg_time
        self.store = store  # a RedisStore (or None): job metadata for versions 2 and 3
        self.nb_exchanges = 0
        self._closed = False

    def exchange(self, now: float, events: Sequence[Event]) -> Reply:
        sent_at = wire_time(now)  # the request's time as the scheduler reads it (%f)
        ending = bool(events) and type(events[-1]) is SimulationEnds
        if self.store is not None:
            self.store.publish(events)
        text = self.codec.encode(sent_at, events)
        if text is None:  # nothing the old protocol can say: the scheduler never knew
            if ending:
                self.transport.finish()
            return Reply(sent_at, ())
        n = self.nb_exchanges + 1
        what = f"message {n} ('{_short(text)}')"
        network_log.info("Sending '%s'", text)
        raw = self.transport.exchange(text, what, ending)
        network_log.info("Received '%s'", raw)
        self.nb_exchanges = n
        decisions, last = self.codec.decode(raw, sent_at)
        ready = max(sent_at, last)
        if self.honor_msg_time:
            header = raw.split("|", 1)[0].split(":")
            if len(header) >= 2:
                ready = max(ready, parse_number(header[1], f"the header of reply {n}"))
        if ending:
            self.transport.finish()
        return Reply(ready, tuple(decisions))

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self.transport.close()
        finally:
            if self.store is not None:
                self.store.close()


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[:limit] + "..."
