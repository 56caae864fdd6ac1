"""The Flux services beside `sched`: dynamic service registration, `feasibility.check` and
`sched.resource-status`, as payloads (no engine, no job manager state).

- **Registration.** A Flux scheduler registers its services with the broker before anything
  else (flux-core's `flux_service_register`: a `service.add` request `{"service": NAME}`,
  answered by an empty response, or an error: EEXIST when the name is taken, EINVAL for a name
  with a dot, EPROTO for a malformed request; `service.remove` likewise, ENOENT when the name is
  not registered). batsim-py is the broker here, so these requests come to it.
- **Feasibility** (RFC 27 "Feasibility", 2024-08): a `feasibility.check` request `{"jobspec":
  J}`; an empty response means J could be satisfied, an error response with a human-readable
  string means never. flux-core's job-ingest validator plugin, its only caller, treats ENOSYS
  (no such service) as feasible.
- **Resource status** (flux-core, outside RFC 27): `sched.resource-status`, an empty request,
  answered by `{"all": R, "allocated": R, "down": R}`, the scheduler's view of its resources
  (`flux resource list` falls back to it).

Each malformed field is a `ProtocolError` whose text follows "the Flux scheduler ".
"""

from __future__ import annotations

import json
import os
from typing import Any

from batsim_py.errors import ProtocolError
from batsim_py.protocol.flux import rv1
from batsim_py.protocol.flux.envelope import EINVAL, ENOSYS, EPROTO, Message

EEXIST = 17
ENOENT = 2
EOVERFLOW = 75  # flux-core's scheduler answers an infeasible request with it

FEASIBILITY = "feasibility"
STATUS_KEYS = ("all", "allocated", "down")


class ServiceRequestError(Exception):
    """A `service.add` / `service.remove` the broker answers with an error (errnum, text)."""

    def __init__(self, errnum: int, text: str) -> None:
        super().__init__(text)
        self.errnum = errnum


def service_name(payload: Any, topic: str) -> str:
    """The NAME of a `service.add` / `service.remove` request `{"service": NAME}`."""
    name = payload.get("service") if isinstance(payload, dict) else None
    if not isinstance(name, str) or not name:
        raise ServiceRequestError(EPROTO, f"{topic}: the request must be {{\"service\": NAME}}")
    if "." in name:
        raise ServiceRequestError(EINVAL, f"{topic}: a service name has no dot, got {name!r}")
    return name


def feasibility_verdict(m: Message) -> str | None:
    """None when the response to `feasibility.check` says feasible, else the error text (the
    errstr, or the errno's text when the scheduler sent none, as flux-core's validator reports
    it). ENOSYS is feasible, as flux-core's validator plugin has it. A success response with a
    payload is malformed (RFC 27: "an empty payload on success")."""
    if m.errnum == 0:
        if m.payload:
            raise ProtocolError(
                "answered feasibility.check with a success response whose payload is "
                f"{_short(m.payload)}: RFC 27 says an empty payload on success, an error "
                "response with a text when the job can never run")
        return None
    if m.errnum == ENOSYS:
        return None
    return m.errstr if m.errstr else f"{os.strerror(m.errnum)} (errnum {m.errnum})"


def resource_status(payload: Any) -> dict[str, rv1.Assignment]:
    """`{"all": R, "allocated": R, "down": R}` as rank -> cores maps (an empty R is allowed
    for allocated and down)."""
    if not isinstance(payload, dict):
        raise ProtocolError("answered sched.resource-status without an object "
                            '{"all": R, "allocated": R, "down": R}')
    missing = [k for k in STATUS_KEYS if k not in payload]
    if missing:
        raise ProtocolError(f"answered sched.resource-status without {missing} (it must hold "
                            "all, allocated and down, each an RFC 20 R)")
    return {k: rv1.parse(payload[k], f"answered sched.resource-status whose '{k}'",
                         allow_empty=k != "all") for k in STATUS_KEYS}


def _short(value: Any) -> str:
    text = json.dumps(value, separators=(",", ":"))
    return text if len(text) <= 80 else text[:77] + "..."
