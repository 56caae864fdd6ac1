"""The Pajé trace is written when every job is over, then rewritten at the exit clock (one
more message round later, in batsim timing): the rewrite reuses the first write's body (a
clone, a copy in the kernel, or by blocks: whichever the system offers) and formats only the
new end date, with the same bytes as formatting it all again, into a new file renamed over
the old one (never written in place)."""

from __future__ import annotations

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


@pytest.mark.parametrize("means", ["clone", "kernel", "blocks"])
def test_rewrite_at_exit_reuses_the_body(tmp_path: Path, monkeypatch, means: str) -> None:
    formatted: list[int] = []
    body_bytes = PajeTrace.body_bytes

    def counting(self: PajeTrace, limit: int = 1 << 22):  # noqa: ANN202
        formatted.append(len(self.times))
        return body_bytes(self, limit)

    monkeypatch.setattr(PajeTrace, "body_bytes", counting)
    used: list[str] = []
    block_copy = files._block_copy
    if means != "clone":  # (a clone is refused on ext4, tmpfs...: the next means then)
        monkeypatch.setattr(files, "_clone", lambda src, dst: False)
    if means == "blocks":
        monkeypatch.setattr(files, "_kernel_copy", lambda src, dst, count: False)
    monkeypatch.setattr(files, "_block_copy",
                        lambda *a: used.append("blocks") or block_copy(*a))
    old = tmp_path / "out_schedule.trace"
    sim = _run(tmp_path / "out")
    assert sim.paje is not None and sim.paje.written is not None
    assert len(formatted) == 1  # the first write only: the rewrite reused its body
    assert (means == "blocks") == (used == ["blocks"])
    text = old.read_text()
    assert f"{sim.engine.now:f} root root_ct" in text  # ends at the exit clock
    assert text == "".join(sim.paje.body_chunks()) + sim.paje.trailer(sim.engine.now)
    assert not list(tmp_path.glob(".batsim-py-*"))  # no temporary file left


def test_rewrite_writes_a_new_file(tmp_path: Path, monkeypatch) -> None:
    """The first write's file is never modified: a reader holding it open (or a crash in the
    middle of the rewrite) sees a complete trace ending at the first end date."""
    opened: list = []
    write_outputs = files.write_outputs

    def keep_first(sim, prefix, *args, **kw):  # noqa: ANN001, ANN202
        paths = write_outputs(sim, prefix, *args, **kw)
        if not opened:
            opened.append(open(f"{prefix}_schedule.trace", "rb"))  # noqa: SIM115
        return paths

    monkeypatch.setattr(run_module, "write_outputs", keep_first)
    sim = _run(tmp_path / "out")
    with opened[0] as first:
        old = first.read().decode()
    new = (tmp_path / "out_schedule.trace").read_text()
    assert old != new and old.rpartition("# End of events")[0] == new.rpartition(
        "# End of events")[0]
    assert f"{sim.engine.now:f} root root_ct" in new


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
