"""Flux RFC 27 on the wire (seed 004): the lockstep envelope, RFC 22 idsets, RFC 20 R,
RFC 14/25 jobspec and RFC 27's annotation merge rules.

Like the rest of `protocol/`, nothing here knows the engine: JSON in, typed values out (and
back), each malformed field a `ProtocolError` naming it. The job manager
(`decision/flux_peer.py`) and the client library (`flux_client/`) both build on these modules.
"""
