"""Batsim 4's `--enable-redis` JSON mode: job descriptions travel through Redis.

As Batsim 4.2.1 (docs/redis.rst, src/job_submitter.cpp): JOB_SUBMITTED carries only the
`job_id` (the job, and the profile with `--forward-profiles-on-submission`, are in Redis under
`PREFIX:job_ID` and `PREFIX:profile_WORKLOAD!PROFILE`, `redis_store.py`), SIMULATION_BEGINS
says `"redis-enabled": true` with the server and prefix, and a REGISTER_JOB (REGISTER_PROFILE)
without its `job` (`profile`) is completed from Redis. Everything else is the JSON mode's:
this peer wraps the ZeroMQ peer and only changes the messages' text.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from batsim_py.decision.decisions import Reply
from batsim_py.decision.events import Event, JobSubmitted, SimulationBegins
from batsim_py.decision.interface import DecisionProcess
from batsim_py.decision.redis_store import RedisStore
from batsim_py.errors import ProtocolError, SchedulerError
from batsim_py.protocol import batsim_json
from batsim_py.protocol.batsim_events import encode_batsim_message
from batsim_py.protocol.codec import decode_reply

network_log = logging.getLogger("batsim_py.network")


def encode_redis_message(now: float, events: Sequence[Event]) -> str:
    """The JSON mode's message, JOB_SUBMITTED reduced to its `job_id` (Batsim 4 with Redis)."""
    if not any(type(e) is JobSubmitted for e in events):
        return encode_batsim_message(now, events)
    parts = []
    for event in events:
        if type(event) is JobSubmitted:
            parts.append('{"timestamp":' + batsim_json.number(float(event.timestamp))
                         + ',"type":"JOB_SUBMITTED","data":{"job_id":'
                         + batsim_json.string(event.job.id) + "}}")
        else:
            one = encode_batsim_message(now, [event])
            parts.append(one[one.index('"events":[') + 10:-2])
    return '{"now":' + batsim_json.number(float(now)) + ',"events":[' + ",".join(parts) + "]}"


class RedisJsonPeer(DecisionProcess):
    def __init__(self, inner: Any, store: RedisStore, host: str, port: int) -> None:
        self.inner = inner  # a ZmqPeer (it has exchange_text)
        self.store = store
        self.config = {"redis-enabled": True, "redis-hostname": host, "redis-port": port,
                       "redis-prefix": store.prefix}

    def exchange(self, now: float, events: Sequence[Event]) -> Reply:
        if events and type(events[0]) is SimulationBegins:  # the scheduler learns where
            events = [replace(events[0], config={**events[0].config, **self.config}),
                      *events[1:]]
        self.store.publish(events)
        text = encode_redis_message(now, events)
        network_log.info("Sending '%s'", text)
        raw = self.inner.exchange_text(text)
        network_log.info("Received '%s'", raw)
        if '"REGISTER_' in raw:
            raw = self.complete_registrations(raw)
        return decode_reply(raw)

    def complete_registrations(self, raw: str) -> str:
        """REGISTER_JOB/REGISTER_PROFILE without their object: read it from Redis."""
        try:
            message = json.loads(raw)
            events = message["events"]
        except (ValueError, KeyError, TypeError):
            return raw  # the decoder names what is wrong
        for event in events if isinstance(events, list) else ():
            data = event.get("data") if isinstance(event, dict) else None
            if not isinstance(data, dict):
                continue
            if event.get("type") == "REGISTER_JOB" and "job" not in data:
                data["job"] = self.read(f"job_{data.get('job_id')}", "REGISTER_JOB")
            elif event.get("type") == "REGISTER_PROFILE" and "profile" not in data:
                data["profile"] = self.read(
                    f"profile_{data.get('workload_name')}!{data.get('profile_name')}",
                    "REGISTER_PROFILE")
        return json.dumps(message)

    def read(self, name: str, what: str) -> Any:
        value = self.store.get(name)
        if value is None:
            raise SchedulerError(f"{what} without its object: Batsim reads it from Redis, but "
                                 f"'{self.store.key(name)}' is not set there; set it before "
                                 "sending the decision")
        try:
            return json.loads(value)
        except ValueError:
            raise ProtocolError(f"{what}: Redis key '{self.store.key(name)}' does not hold "
                                f"JSON: {value[:80]!r}") from None

    def close(self) -> None:
        try:
            self.inner.close()
        finally:
            self.store.close()
