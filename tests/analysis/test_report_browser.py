"""The report as a person sees it: opened in headless Chromium, screenshot taken, no console
error, and the figures on the screenshot (skipped without Chromium; CI installs it)."""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from matplotlib.image import imread

PROJECT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

# Flags for a sandboxed machine without network (see the environment notes): no sandbox as
# root, no GPU, no background connections.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-logging=stderr", "--v=0", "--hide-scrollbars"]


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_report_in_headless_chromium(four_jobs: str, four_jobs_easy: str, tmp_path: Path) -> None:
    easy = four_jobs_easy
    page = tmp_path / "report.html"
    subprocess.run([sys.executable, "-m", "batsim_py.cli", "report", four_jobs, easy, "-o",
                    str(page)], check=True, cwd=PROJECT, timeout=300, capture_output=True)
    shot = tmp_path / "shot.png"
    done = subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1300,3000",
         f"--screenshot={shot}", page.as_uri()],
        capture_output=True, text=True, timeout=120)
    assert shot.exists(), done.stderr[-2000:]
    console = [line for line in done.stderr.splitlines()
               if "CONSOLE" in line or "Failed to load" in line or "ERR_" in line]
    assert not console, console
    image = imread(io.BytesIO(shot.read_bytes()))[:, :, :3]
    assert image.shape[:2] == (3000, 1300)
    colours = len(np.unique((image * 255).astype(np.uint8).reshape(-1, 3), axis=0))
    assert colours > 200  # the figures' colours, not just text on white
    # the comparison figure's top is in the first screen: blue and orange curves there
    top = image[:1500]
    blue = ((top[:, :, 2] > 0.6) & (top[:, :, 0] < 0.3)).sum()
    assert blue > 500
