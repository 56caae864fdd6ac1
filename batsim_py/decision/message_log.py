"""Log every protocol message, as Batsim's `network` log category does.

Batsim 4.2.1 logs `Sending '<message>'` and `Received '<message>'` (category `network`, level
info) for each exchange with the scheduler: with `-v network-only` (then nothing else but
errors), `-v information` and `-v debug`. `MessageLog` wraps any peer and does the same on the
logger `batsim_py.network`. An in-process scheduler exchanges no bytes: its messages are
encoded for the log only when asked for (`-v network-only` or `-v debug`), not at the default
verbosity, where the encoding would cost more than the scheduler.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from batsim_py.decision.decisions import Reply
from batsim_py.decision.events import Event
from batsim_py.decision.interface import DecisionProcess
from batsim_py.protocol.codec import decode_reply, encode_batsim_message, encode_reply

log = logging.getLogger("batsim_py.network")


class MessageLog(DecisionProcess):
    """Wraps a peer; logs each message Batsim would send and each reply, verbatim when the
    peer speaks text (ZeroMQ)."""

    def __init__(self, inner: DecisionProcess) -> None:
        self.inner = inner
        if hasattr(inner, "exchange_text"):  # (a RecordingPeer around us keeps the raw bytes)
            self.exchange_text = self._exchange_text

    def exchange(self, now: float, events: Sequence[Event]) -> Reply:
        if hasattr(self.inner, "exchange_text"):
            return decode_reply(self._exchange_text(encode_batsim_message(now, events)))
        log.info("Sending '%s'", encode_batsim_message(now, events))
        reply = self.inner.exchange(now, events)
        log.info("Received '%s'", encode_reply(reply))
        return reply

    def _exchange_text(self, message: str) -> str:
        log.info("Sending '%s'", message)
        text = self.inner.exchange_text(message)  # type: ignore[attr-defined]
        log.info("Received '%s'", text)
        return text

    def close(self) -> None:
        self.inner.close()


def with_message_log(decision: DecisionProcess, verbosity: str, external: bool
                     ) -> DecisionProcess:
    """`decision`, wrapped to log its messages where Batsim would log them (`external`: the
    peer is a real scheduler or a transcript, whose messages exist anyway)."""
    if verbosity in ("network-only", "debug") or (verbosity == "information" and external):
        return MessageLog(decision)
    return decision
