"""The Pajé trace is written when every job is over, then rewritten at the exit clock (one
more message round later, in batsim timing). Only its trailer (the end date) changes: the
rewrite at exit neither formats nor copies the body (the complete file is moved aside, given
its new trailer, and moved back: never a partial trace under its name), and a rewrite of all
the files reuses the first write's body (a clone, a copy in the kernel, or by blocks). Same
bytes as formatting it all again, every time."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from batsim_py import run as run_module
from batsim_py.decision.inprocess import InProcess
from batsim_py.output import files
from batsim_py.output.paje import PajeTrace
from batsim_py.run import RunSpec, run_simulation
from batsim_py.schedulers import get_scheduler
from batsim_py.sim.options import Options

PROJECT = Path(__file__).resolve().parents[2]


def _run(prefix: Path):  # noqa: ANN202
    return run_simulation(
        RunSpec(str(PROJECT / "platforms" / "cluster128.xml"),
                [str(PROJECT / "workloads" / "gen_delay_1k_128.json")],
                Options(export_prefix=str(prefix))),
        InProcess(get_scheduler("easy")))


def _counting(monkeypatch) -> list[int]:
    """Count the formattings of the trace's body."""
    formatted: list[int] = []
    write_body = PajeTrace.write_body

    def counting(self: PajeTrace, out, step: int = 8 << 20):  # noqa: ANN001, ANN202
        formatted.append(len(self.times))
        return write_body(self, out, step)

    monkeypatch.setattr(PajeTrace, "write_body", counting)
    return formatted


def test_rewrite_at_exit_changes_only_the_trailer(tmp_path: Path, monkeypatch) -> None:
    formatted = _counting(monkeypatch)
    inodes: list[int] = []
    write_outputs = files.write_outputs

    def note_inode(sim, prefix, *args, **kw):  # noqa: ANN001, ANN202
        paths = write_outputs(sim, prefix, *args, **kw)
        inodes.append(os.stat(f"{prefix}_schedule.trace").st_ino)
        return paths

    monkeypatch.setattr(run_module, "write_outputs", note_inode)
    final = tmp_path / "out_schedule.trace"
    sim = _run(tmp_path / "out")
    assert sim.paje is not None and sim.paje.written is not None
    assert len(formatted) == 1  # the first write only
    assert len(inodes) == 2 and inodes[0] == inodes[1]  # the same file: its body not copied
    text = final.read_text()
    assert f"{sim.engine.now:f} root root_ct" in text  # ends at the exit clock
    assert text == "".join(sim.paje.body_chunks()) + sim.paje.trailer(sim.engine.now)
    assert not list(tmp_path.glob(".batsim-py-*"))  # no temporary file left


def test_rewrite_never_shows_a_partial_trace(tmp_path: Path, monkeypatch) -> None:
    """While the trailer is being replaced the trace is not under its name (absent, never
    cut); a write error then makes the trace be written again in full from its records."""
    final = tmp_path / "out_schedule.trace"
    seen: list[bool] = []
    trailer = PajeTrace.trailer

    def failing(self: PajeTrace, end_time: float) -> str:
        seen.append(final.exists())
        if len(seen) == 2:  # the rewrite at exit (the first call is the first write's)
            raise OSError(28, "No space left on device")
        return trailer(self, end_time)

    monkeypatch.setattr(PajeTrace, "trailer", failing)
    formatted = _counting(monkeypatch)
    sim = _run(tmp_path / "out")
    assert seen[1] is False  # the rewrite: nothing at the trace's name meanwhile
    assert len(formatted) == 2  # then written again in full
    monkeypatch.setattr(PajeTrace, "trailer", trailer)
    assert final.read_text() == ("".join(sim.paje.body_chunks())
                                 + trailer(sim.paje, sim.engine.now))
    assert not list(tmp_path.glob(".batsim-py-*"))


@pytest.mark.parametrize("means", ["clone", "kernel", "blocks"])
def test_a_full_rewrite_reuses_the_body(tmp_path: Path, monkeypatch, means: str) -> None:
    """All files written again with no new record: the trace's body is taken from the old
    file (cloned, else copied by the kernel, else by blocks) into the new one."""
    sim = _run(tmp_path / "out")
    formatted = _counting(monkeypatch)
    used: list[str] = []
    block_copy = files._block_copy
    if means != "clone":  # (a clone is refused on ext4, tmpfs...: the next means then)
        monkeypatch.setattr(files, "_clone", lambda src, dst: False)
    if means == "blocks":
        monkeypatch.setattr(files, "_kernel_copy", lambda src, dst, count: False)
    monkeypatch.setattr(files, "_block_copy",
                        lambda *a: used.append("blocks") or block_copy(*a))
    sim.engine.now += 1.0
    files.write_outputs(sim, str(tmp_path / "out"), 1.0)
    assert formatted == [] and (means == "blocks") == (used == ["blocks"])
    text = (tmp_path / "out_schedule.trace").read_text()
    assert text == "".join(sim.paje.body_chunks()) + sim.paje.trailer(sim.engine.now)
    assert not list(tmp_path.glob(".batsim-py-*"))


def test_no_reuse_when_the_file_was_replaced(tmp_path: Path) -> None:
    """A file that is no longer the one written (another run, an edit) is formatted again."""
    from batsim_py.output.files import _reuse_body

    path = tmp_path / "t.trace"
    path.write_text("x" * 100)
    st = path.stat()
    with open(tmp_path / "new", "wb") as out:
        assert _reuse_body(out, str(path), (str(path), 50, 3, st.st_dev, st.st_ino, 99),
                           3) == -1
        assert _reuse_body(out, str(path), (str(path), 50, 3, st.st_dev, st.st_ino, 100),
                           4) == -1
        assert _reuse_body(out, str(path), None, 3) == -1
        assert out.tell() == 0
        assert _reuse_body(out, str(path), (str(path), 50, 3, st.st_dev, st.st_ino, 100),
                           3) == 50
    assert (tmp_path / "new").read_bytes() == b"x" * 50
