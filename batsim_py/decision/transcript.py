"""Protocol transcripts: record any run, replay a recorded one message for message.

A transcript is a JSON-lines file, one protocol message per line in order:
`{"seq": N, "from": "batsim"|"scheduler", "msg": <the message, verbatim>}` (the format of
`../shared/reference/*/transcript.jsonl`). Replaying answers the k-th request with the
k-th recorded scheduler reply, so a run with a scheduler we cannot start (batsched, a custom
one) can still be reproduced; strict replay also checks that each of our messages is the one
Batsim sent, byte for byte.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from typing import IO

from batsim_py.decision.decisions import Reply
from batsim_py.decision.events import Event
from batsim_py.decision.interface import DecisionProcess
from batsim_py.errors import OutputError, SchedulerError, UsageError
from batsim_py.protocol.codec import decode_reply, encode_batsim_message, encode_reply

# Each line embeds the message text exactly as it travelled (it is JSON itself), so the bytes
# of a message are the line's text between `"msg": ` and the closing brace.
_LINE = re.compile(r'\{"seq": (\d+), "from": "(batsim|scheduler)", "msg": (.*)\}$')


def read_transcript(path: str) -> list[tuple[str, str]]:
    """(origin, message text) for every line, in order."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = [line.rstrip("\n") for line in f if line.strip()]
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the transcript ({exc.strerror})") from None
    entries = []
    for n, line in enumerate(lines, start=1):
        m = _LINE.match(line)
        if m is None:
            raise UsageError(
                f"{path}:{n}: not a transcript line; expected "
                '{"seq": N, "from": "batsim"|"scheduler", "msg": <message>}'
            )
        entries.append((m.group(2), m.group(3)))
    return entries


def transcript_line(seq: int, origin: str, text: str) -> str:
    return '{"seq": %d, "from": "%s", "msg": %s}' % (seq, origin, text)


def _first_difference(a: str, b: str) -> int:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))


class ReplayPeer(DecisionProcess):
    """Answers the k-th request with the k-th recorded scheduler reply."""

    def __init__(self, path: str, strict: bool = False) -> None:
        self.path = path
        self.strict = strict
        entries = read_transcript(path)
        self.requests = [text for origin, text in entries if origin == "batsim"]
        self.replies = [text for origin, text in entries if origin == "scheduler"]
        self.k = 0
        self.nb_identical = 0

    def exchange(self, now: float, events: Sequence[Event]) -> Reply:
        k = self.k
        message = encode_batsim_message(now, events)
        if k >= len(self.replies):
            raise SchedulerError(
                f"replay of {self.path}: request {k + 1} has no recorded reply (the transcript "
                f"holds {len(self.replies)}); our message: {message[:300]}"
            )
        if self.strict:
            recorded = self.requests[k]
            if k == 0 and _same_begins(message, recorded):
                recorded = message
            if message != recorded:
                i = _first_difference(message, recorded)
                lo = max(0, i - 80)
                raise SchedulerError(
                    f"replay of {self.path}: message {k + 1} differs from the recorded Batsim "
                    f"message at character {i}: ours ...{message[lo:i + 120]} | recorded "
                    f"...{recorded[lo:i + 120]}"
                )
            self.nb_identical += 1
        self.k += 1
        return decode_reply(self.replies[k])


def _same_begins(ours: str, recorded: str) -> bool:
    """SIMULATION_BEGINS is compared as JSON: Batsim prints its profile and property maps in
    hash-table order, and the reference transcripts reduce workload paths to file names."""
    try:
        a, b = json.loads(ours), json.loads(recorded)
        data = a["events"][0]["data"]
        recorded_paths = b["events"][0]["data"]["workloads"]
        for name, path in data["workloads"].items():
            if recorded_paths.get(name) == os.path.basename(path):
                data["workloads"][name] = recorded_paths[name]
        return a == b
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        return False


class RecordingPeer(DecisionProcess):
    """Wraps any peer and writes every exchange to a transcript file."""

    def __init__(self, inner: DecisionProcess, path: str) -> None:
        self.inner = inner
        self.path = path
        try:
            self._file: IO[str] = open(path, "w", encoding="utf-8")  # noqa: SIM115
        except OSError as exc:
            raise UsageError(f"{path}: cannot write the transcript ({exc.strerror})") from None
        self._seq = 0

    def _write(self, origin: str, text: str) -> None:
        """Append one line, flushed at once: a run that stops (or crashes) keeps its
        transcript up to its last message, and a full disk is reported when it happens."""
        try:
            self._file.write(transcript_line(self._seq, origin, text) + "\n")
            self._file.flush()
        except OSError as exc:
            raise OutputError(
                f"{self.path}: cannot write the transcript ({exc.strerror}); "
                "--record-transcript needs a writable file"
            ) from None
        self._seq += 1

    def exchange(self, now: float, events: Sequence[Event]) -> Reply:
        self._write("batsim", encode_batsim_message(now, events))
        exchange_text = getattr(self.inner, "exchange_text", None)
        if exchange_text is not None:  # over the wire: keep the reply exactly as sent
            text = exchange_text(encode_batsim_message(now, events))
            self._write("scheduler", text)
            return decode_reply(text)
        reply = self.inner.exchange(now, events)
        self._write("scheduler", encode_reply(reply))
        return reply

    def close(self) -> None:
        try:
            self._file.close()
        except OSError:
            pass  # every line was flushed (or its error reported) when written
        finally:
            self.inner.close()
