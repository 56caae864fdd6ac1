"""The README's third set-up line, `batsim-py report outputs/example`, works on the run its
first set-up command makes (the docs harness cannot chain them: the first one installs)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]


def test_readme_report_line(tmp_path: Path) -> None:
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```sh\n(.*?)```", readme, re.S)
    install = next(b for b in blocks if "pip install -e . &&" in b)
    run = shlex.split(install.split("&&", 1)[1])
    report = shlex.split(next(b for b in blocks if b.strip().startswith("batsim-py report")))
    assert report == ["batsim-py", "report", "outputs/example"]
    for name in ("platforms", "workloads"):
        (tmp_path / name).symlink_to(PROJECT / name)
    for command in (run, report):
        assert command[0] == "batsim-py"
        done = subprocess.run([sys.executable, "-m", "batsim_py.cli", *command[1:]],
                              cwd=tmp_path, capture_output=True, text=True, timeout=300,
                              env={"PYTHONPATH": str(PROJECT), "PATH": "/usr/bin:/bin"})
        assert done.returncode == 0, done.stderr
    page = (tmp_path / "outputs" / "example_report.html").read_text()
    assert page.count("data:image/png;base64,") == 3  # Gantt, utilisation, machine states
    assert "<th>jobs</th><td>1,000</td>" in page
