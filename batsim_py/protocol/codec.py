"""The Batsim 4 JSON protocol, both directions (the only place where protocol JSON exists).

- Batsim -> scheduler: `encode_batsim_message` writes Batsim's exact bytes; `decode_batsim_message`
  reads them back (replay, tests).
- scheduler -> Batsim: `decode_reply` validates like Batsim and yields typed decisions;
  `encode_reply` writes a reply the way pybatsim does (tests, in-process round trips).
"""

from batsim_py.protocol.batsim_events import decode_batsim_message, encode_batsim_message
from batsim_py.protocol.replies import decode_reply, encode_reply

__all__ = ["decode_batsim_message", "decode_reply", "encode_batsim_message", "encode_reply"]
