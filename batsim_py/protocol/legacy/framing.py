"""Unix-socket frames of the legacy protocol: `[u32 size][size bytes of text]`.

The size is a 32-bit unsigned integer in the machine's native byte order (Batsim wrote the raw
`uint32_t`), the text has no NUL terminator and no newline. The whole frame is built as one
byte string so that the transport sends it with a single `sendall`: 2016 clients did one
`recv(4)` then one `recv(size)` and would misread a frame split in two writes.
"""

from __future__ import annotations

import struct

from batsim_py.errors import ProtocolError

SIZE = struct.Struct("=I")  # native byte order, standard size, no padding
MAX_SIZE = 1 << 30  # a frame this large is garbage, not a message


def frame(text: str) -> bytes:
    """One frame carrying `text` (UTF-8)."""
    body = text.encode("utf-8")
    return SIZE.pack(len(body)) + body


def frame_size(header: bytes) -> int:
    """The body size announced by a 4-byte header; a ProtocolError for 0 or absurd sizes."""
    (size,) = SIZE.unpack(header)
    if size == 0:
        raise ProtocolError("the scheduler sent a message of size 0 (a frame is a u32 native "
                            "size then that many bytes of text, at least one event)")
    if size > MAX_SIZE:
        raise ProtocolError(
            f"the scheduler announced a message of {size:,} bytes (header {header.hex()}): "
            "not a legacy-protocol frame (a u32 in native byte order, then the text)")
    return size


def decode_body(body: bytes) -> str:
    """The frame's text; a ProtocolError naming the byte if it is not UTF-8."""
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProtocolError(
            f"the scheduler's message is not UTF-8 text (byte {exc.start}: "
            f"{body[exc.start:exc.start + 1].hex()}): {body[:60]!r}") from None
