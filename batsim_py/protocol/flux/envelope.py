"""The lockstep envelope that carries Flux messages between batsim-py and a scheduler.

Flux's job manager and scheduler exchange RFC 6 messages through a broker, asynchronously. A
simulation needs a barrier instead: batsim-py (ZeroMQ REQ, like Batsim) sends one batch, and
the scheduler's reply says it has handled every message of the batch and said all it wants to
say at that time (research/seed-systems.md §4.4):

    batsim-py -> scheduler   {"now": t, "messages": [M, ...]}
    scheduler -> batsim-py   {"now": t', "messages": [M, ...], "wakeup": t2}   (wakeup optional)
    M = {"topic": str, "kind": "request"|"response", "payload": object|null,
         "errnum": int (0 when absent), "errstr": str (optional)}

Times are seconds, on the wire shifted by the epoch offset (`--flux-epoch`, default 0).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from batsim_py.errors import ProtocolError

ENODATA = 61  # Linux errno: ends sched-hello's response stream (RFC 6 streaming)
ENOSYS = 38  # "not implemented": sched.expiration answered so is applied anyway
EINVAL = 22
EPROTO = 71

REQUEST = "request"
RESPONSE = "response"


@dataclass(slots=True)
class Message:
    topic: str
    kind: str  # "request" | "response"
    payload: Any = None  # a JSON object, or None (an error response has none)
    errnum: int = 0
    errstr: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"topic": self.topic, "kind": self.kind, "payload": self.payload,
                               "errnum": self.errnum}
        if self.errstr is not None:
            out["errstr"] = self.errstr
        return out


def request(topic: str, payload: Any) -> Message:
    return Message(topic, REQUEST, payload)


def response(topic: str, payload: Any) -> Message:
    return Message(topic, RESPONSE, payload)


def error(topic: str, errnum: int, errstr: str | None = None) -> Message:
    return Message(topic, RESPONSE, None, errnum, errstr)


@dataclass(slots=True)
class Envelope:
    now: float
    messages: list[Message] = field(default_factory=list)
    wakeup: float | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"now": self.now, "messages": [m.to_json() for m in self.messages]}
        if self.wakeup is not None:
            out["wakeup"] = self.wakeup
        return out


def encode(envelope: Envelope) -> str:
    """Compact JSON text of an envelope (key order as documented, no NaN)."""
    return json.dumps(envelope.to_json(), separators=(",", ":"), allow_nan=False)


def decode(text: str | bytes, who: str = "the scheduler") -> Envelope:
    """Parse and check an envelope; a `ProtocolError` names the faulty field."""
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        raise ProtocolError(f"the Flux envelope from {who} is not JSON ({exc}): "
                            f"{_excerpt(text)}") from None
    if not isinstance(data, dict):
        raise ProtocolError(f"the Flux envelope from {who} must be a JSON object "
                            '{"now": t, "messages": [...]}, got ' + _excerpt(text))
    unknown = sorted(set(data) - {"now", "messages", "wakeup"})
    if unknown:
        raise ProtocolError(f"the Flux envelope from {who} has unknown keys {unknown} "
                            "(allowed: now, messages, wakeup)")
    now = _time(data.get("now"), "now", who)
    raw = data.get("messages", [])
    if not isinstance(raw, list):
        raise ProtocolError(f"the Flux envelope from {who}: 'messages' must be a list")
    wakeup = None
    if data.get("wakeup") is not None:
        wakeup = _time(data["wakeup"], "wakeup", who)
    return Envelope(now, [_message(m, i, who) for i, m in enumerate(raw)], wakeup)


def _message(m: Any, i: int, who: str) -> Message:
    where = f"the Flux envelope from {who}: message {i}"
    if not isinstance(m, dict):
        raise ProtocolError(f"{where} must be an object with topic, kind, payload, errnum")
    unknown = sorted(set(m) - {"topic", "kind", "payload", "errnum", "errstr"})
    if unknown:
        raise ProtocolError(f"{where} has unknown keys {unknown} "
                            "(allowed: topic, kind, payload, errnum, errstr)")
    topic = m.get("topic")
    if not isinstance(topic, str) or not topic:
        raise ProtocolError(f"{where}: 'topic' must be a non-empty string")
    kind = m.get("kind")
    if kind not in (REQUEST, RESPONSE):
        raise ProtocolError(f"{where} ({topic}): 'kind' must be \"request\" or \"response\", "
                            f"not {json.dumps(kind)}")
    payload = m.get("payload")
    if payload is not None and not isinstance(payload, dict):
        raise ProtocolError(f"{where} ({topic}): 'payload' must be a JSON object or null")
    errnum = m.get("errnum", 0)
    if isinstance(errnum, bool) or not isinstance(errnum, int) or errnum < 0:
        raise ProtocolError(f"{where} ({topic}): 'errnum' must be an integer >= 0")
    errstr = m.get("errstr")
    if errstr is not None and not isinstance(errstr, str):
        raise ProtocolError(f"{where} ({topic}): 'errstr' must be a string")
    return Message(topic, kind, payload, errnum, errstr)


def _time(value: Any, name: str, who: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(
            value):
        raise ProtocolError(f"the Flux envelope from {who}: '{name}' must be a finite number "
                            f"of seconds, got {json.dumps(value)}")
    return float(value)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _excerpt(text: str | bytes) -> str:
    s = text if isinstance(text, str) else text.decode("utf-8", "replace")
    return repr(s[:200] + ("..." if len(s) > 200 else ""))
