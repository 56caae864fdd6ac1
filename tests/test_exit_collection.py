"""A process started as batsim-py (or batsim) skips CPython's last garbage collection: the
objects alive at exit are frozen first (cli.no_collection_at_exit), since scanning and freeing
a finished million-job simulation cost seconds for memory the system takes back anyway. Called
from Python code, main leaves the collector alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from batsim_py import batsim_alias, cli

ROOT = Path(__file__).resolve().parents[1]

# Reports at exit, after every other handler (registered first, it runs last), whether the
# objects were frozen; then batsim-py's main runs as the process's own command line.
_PROBE = """
import atexit, gc, sys
atexit.register(lambda: print("frozen at exit:", gc.get_freeze_count() > 0, file=sys.stderr))
from batsim_py.cli import main
sys.argv = {argv!r}
sys.exit(main())
"""


def test_a_run_ends_without_collecting(tmp_path: Path) -> None:
    argv = ["batsim-py", "-q", "-p", str(ROOT / "platforms" / "small4.xml"), "-w",
            str(ROOT / "workloads" / "delays_small.json"), "-e", str(tmp_path / "out"),
            "--scheduler", "fcfs"]
    done = subprocess.run([sys.executable, "-c", _PROBE.format(argv=argv)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "frozen at exit: True" in done.stderr
    jobs = (tmp_path / "out_jobs.csv").read_text().splitlines()
    assert len(jobs) > 1 and all(line.count(",") >= 16 for line in jobs)


def test_main_called_from_python_leaves_the_collector_alone(monkeypatch, capsys) -> None:  # noqa: ANN001
    registered: list[object] = []
    monkeypatch.setattr(cli.atexit, "register", registered.append)
    assert cli.main(["--version"]) == 0
    assert batsim_alias.main(["--version"]) == 0
    assert registered == []
    monkeypatch.setattr(sys, "argv", ["batsim-py", "--version"])
    assert cli.main() == 0
    assert registered == [cli.gc.freeze]
    monkeypatch.setattr(sys, "argv", ["batsim", "--version"])  # (the alias: the same)
    assert batsim_alias.main() == 0
    assert registered == [cli.gc.freeze] * 2
