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


# ------------------------------------------------------------------ direct writes (O_DIRECT)

def _direct_supported(folder: Path) -> bool:
    """Whether the file system of `folder` takes a direct write of one page."""
    import mmap

    path = folder / ".direct-probe"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_DIRECT, 0o600)
    except (AttributeError, OSError):
        return False
    try:
        page = mmap.mmap(-1, 4096)  # (page-aligned)
        return os.write(fd, page) == 4096
    except OSError:
        return False
    finally:
        os.close(fd)
        path.unlink()


def _events(native, trace: PajeTrace):  # noqa: ANN001, ANN202
    return native.TraceEvents(len(trace.machine_names), trace.job_ids, trace.allocs, ["c"],
                              trace._unavailable, trace.times, trace.kinds, trace.jobs)


def _wide_trace() -> PajeTrace:
    """About 1.6 MB of events: jobs on blocks of machines, and some sharing a machine."""
    trace = PajeTrace([f"h{i}" for i in range(512)])
    for j in range(300):
        trace.job_starts(str(j), range(j % 400, j % 400 + 100), float(j))
        if j % 7 == 0:
            trace.job_starts(f"s{j}", [j % 400, 511], j + 0.25)
            trace.job_ends(f"s{j}", [j % 400, 511], j + 0.3)
        trace.job_ends(str(j), range(j % 400, j % 400 + 100), j + 0.5)
    return trace


@pytest.mark.parametrize("head", [0, 1, 4095, 4096, 5000])
def test_direct_writes_write_the_same_bytes(native, tmp_path: Path, head: int) -> None:  # noqa: ANN001
    """`write(fd, lo, limit, True)`: the whole pages by direct writes (counted in
    `direct_bytes`), the partial pages at both ends through the cache, whatever the offset
    it starts at; the file holds the same bytes as written through the cache, complete after
    every call, and the descriptor's flags are left as they were."""
    if not _direct_supported(tmp_path):
        pytest.skip(f"the file system of {tmp_path} refuses direct writes (O_DIRECT)")
    trace = _wide_trace()
    expected = _events(native, trace).chunk(0, 1 << 40)[0]
    assert len(expected) > 1 << 20
    events = _events(native, trace)
    with open(tmp_path / "t", "wb") as out:
        out.write(b"x" * head)
        out.flush()
        fd = out.fileno()
        flags = fcntl_flags(fd)
        r, position = 0, head
        while r < len(trace.times):
            r, written = events.write(fd, r, 300_000, True)
            position += written
            assert os.fstat(fd).st_size == position == os.lseek(fd, 0, os.SEEK_CUR)
            assert fcntl_flags(fd) == flags
    assert (tmp_path / "t").read_bytes() == b"x" * head + expected
    assert events.direct_bytes > len(expected) // 2
    assert events.direct_bytes % 4096 == 0


def test_no_direct_write_where_the_file_cannot_seek(native) -> None:  # noqa: ANN001
    """A pipe (no offset to align to) gets the same bytes through ordinary writes."""
    import threading

    trace = _wide_trace()
    expected = _events(native, trace).chunk(0, 1 << 40)[0]
    events = _events(native, trace)
    read, write = os.pipe()
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(os.fdopen(read, "rb").read()))
    reader.start()
    try:
        r = 0
        while r < len(trace.times):
            r, _ = events.write(write, r, 1 << 20, True)
    finally:
        os.close(write)
        reader.join()
    assert got == [expected]
    assert events.direct_bytes == 0


def fcntl_flags(fd: int) -> int:
    import fcntl

    return fcntl.fcntl(fd, fcntl.F_GETFL)


@pytest.mark.parametrize("jobs", [3, 400])
def test_a_trace_estimated_past_the_threshold_is_direct_from_its_start(
        native, monkeypatch, tmp_path: Path, jobs: int) -> None:  # noqa: ANN001
    """`write_body` asks for direct writes from its first block when the trace's estimated
    size passes STREAM_AFTER (400 jobs of 4 machines: about 96 kB, past 64 kB), and only past
    STREAM_AFTER otherwise (3 jobs); the same bytes either way."""
    from batsim_py.output import paje

    asked: list[bool] = []

    class Recording:  # TraceEvents, its `direct` arguments recorded
        def __init__(self, *args) -> None:  # noqa: ANN002
            self.events = native.TraceEvents(*args)

        def write(self, fd: int, lo: int, limit: int, direct: bool = False):  # noqa: ANN201
            asked.append(direct)
            return self.events.write(fd, lo, limit, direct)

    class Native:  # the native module, TraceEvents recording
        TraceEvents = Recording

        def __getattr__(self, name: str):  # noqa: ANN204
            return getattr(native, name)

    monkeypatch.setattr(paje, "native_text", lambda: Native())
    monkeypatch.setattr(stream, "STREAM_AFTER", 64 << 10)
    trace = PajeTrace([f"h{i}" for i in range(64)])
    for j in range(jobs):
        trace.job_starts(str(j), range(j % 60, j % 60 + 4), float(j))
        trace.job_ends(str(j), range(j % 60, j % 60 + 4), j + 0.5)
    assert (trace.estimated_size() >= stream.STREAM_AFTER) == (jobs == 400)
    expected = "".join(trace.body_chunks()).encode()
    with open(tmp_path / "t", "wb") as out:
        assert trace.write_body(out, step=8192) == len(expected)
    assert (tmp_path / "t").read_bytes() == expected
    assert asked and asked[0] == (jobs == 400)
    assert all(asked) == (jobs == 400)
