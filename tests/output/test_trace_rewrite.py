"""The Pajé trace is written when every job is over, then rewritten at the exit clock (one
more message round later, in batsim timing): the rewrite copies the first write's body and
formats only the new end date, with the same bytes as formatting it all again."""

from __future__ import annotations

from pathlib import Path

from batsim_py.decision.inprocess import InProcess
from batsim_py.output.paje import PajeTrace
from batsim_py.run import RunSpec, run_simulation
from batsim_py.schedulers import get_scheduler
from batsim_py.sim.options import Options

PROJECT = Path(__file__).resolve().parents[2]


def test_rewrite_at_exit_reuses_the_body(tmp_path: Path, monkeypatch) -> None:
    formatted: list[int] = []
    body_chunks = PajeTrace.body_chunks

    def counting(self: PajeTrace, size: int = 4096):  # noqa: ANN202
        formatted.append(len(self.times))
        return body_chunks(self, size)

    monkeypatch.setattr(PajeTrace, "body_chunks", counting)
    prefix = tmp_path / "out"
    sim = run_simulation(
        RunSpec(str(PROJECT / "platforms" / "cluster128.xml"),
                [str(PROJECT / "workloads" / "gen_delay_1k_128.json")],
                Options(export_prefix=str(prefix))),
        InProcess(get_scheduler("easy")))
    assert sim.paje is not None and sim.paje.written is not None
    assert len(formatted) == 1  # the first write only: the rewrite copied it
    text = (tmp_path / "out_schedule.trace").read_text()
    assert f"{sim.engine.now:f} root root_ct" in text  # ends at the exit clock
    assert text == "".join(body_chunks(sim.paje)) + sim.paje.trailer(sim.engine.now)


def test_no_reuse_when_the_file_was_replaced(tmp_path: Path) -> None:
    """A file that is no longer the one written (another run, an edit) is formatted again."""
    from batsim_py.output.files import _copy_body

    path = tmp_path / "t.trace"
    path.write_text("x" * 100)
    st = path.stat()
    assert _copy_body(None, str(path), (str(path), 50, 3, st.st_dev, st.st_ino, 99), 3) == -1
    assert _copy_body(None, str(path), (str(path), 50, 3, st.st_dev, st.st_ino, 100), 4) == -1
    assert _copy_body(None, str(path), None, 3) == -1
