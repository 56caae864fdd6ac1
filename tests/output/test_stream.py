"""A very large output file goes to disk as it is written (output/stream.py): past its first
STREAM_AFTER bytes, each new window is handed to the disk and the window before the previous
one dropped from the page cache. Advice only: the bytes written are the same."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from batsim_py.output import stream
from batsim_py.output.fixed import native_text
from batsim_py.output.paje import PajeTrace


def _advice(monkeypatch) -> list[tuple[int, int]]:  # noqa: ANN001
    calls: list[tuple[int, int]] = []
    real = getattr(os, "posix_fadvise", None)

    def advise(fd: int, offset: int, length: int, advice: int) -> None:
        assert advice == os.POSIX_FADV_DONTNEED
        calls.append((offset, length))
        if real is not None:
            real(fd, offset, length, advice)

    monkeypatch.setattr(os, "posix_fadvise", advise, raising=False)
    monkeypatch.setattr(os, "POSIX_FADV_DONTNEED", getattr(os, "POSIX_FADV_DONTNEED", 4),
                        raising=False)
    return calls


def test_windows_are_written_back_then_dropped(monkeypatch, tmp_path: Path) -> None:
    calls = _advice(monkeypatch)
    with open(tmp_path / "f", "wb") as f:
        behind = stream.DropBehind(f.fileno(), start=100, window=10)
        for offset in (5, 50, 99):  # below `start`: nothing
            behind.advance(offset)
        assert calls == []
        behind.advance(100)  # everything so far: its writeback starts
        behind.advance(105)  # less than a window: nothing
        behind.advance(110)
        assert calls == [(0, 100), (100, 10)]
        behind.advance(125)  # a third window: the first one (written back) is dropped
        assert calls[2:] == [(110, 15), (0, 100)]
        behind.advance(140)
        assert calls[4:] == [(125, 15), (100, 10)]


def test_a_refused_advice_stops_advising(monkeypatch, tmp_path: Path) -> None:
    def refuse(*_: object) -> None:
        raise OSError(22, "Invalid argument")

    monkeypatch.setattr(os, "posix_fadvise", refuse, raising=False)
    behind = stream.DropBehind(0, start=0, window=1)
    behind.advance(10)  # (no error)
    assert behind.start > 1 << 60


@pytest.mark.parametrize("pure", [False, True])
def test_a_streamed_trace_has_the_same_bytes(monkeypatch, tmp_path: Path, pure: bool) -> None:
    """A trace written with windows of a few kB past its first kB: advice given, same bytes."""
    if not pure and native_text() is None:
        pytest.skip("the native writer (batsim_py/output/_ctext.c) is not built: "
                    "pip install -e . builds it")
    if pure:
        monkeypatch.setenv("BATSIM_PY_PURE", "1")
    else:
        monkeypatch.delenv("BATSIM_PY_PURE", raising=False)
    calls = _advice(monkeypatch)
    monkeypatch.setattr(stream, "STREAM_AFTER", 1024)
    monkeypatch.setattr(stream, "WINDOW", 4096)
    trace = PajeTrace([f"h{i}" for i in range(64)])
    for j in range(400):
        trace.job_starts(str(j), range(j % 60, j % 60 + 4), float(j))
        trace.job_ends(str(j), range(j % 60, j % 60 + 4), j + 0.5)
    expected = "".join(trace.body_chunks()).encode()
    with open(tmp_path / "t", "wb") as out:
        assert trace.write_body(out, step=2048) == len(expected)
    assert (tmp_path / "t").read_bytes() == expected
    if not pure:  # (the pure writer advises per chunk of 4,096 records: one here)
        assert len(calls) > 4
