"""The campaign's progress lines when stderr is not a terminal (a log file, a batch job)."""

from __future__ import annotations

import io

from batsim_py.campaign.progress import CampaignProgress, _duration


def test_one_line_per_tenth_with_failed_count_and_resumed_runs() -> None:
    out = io.StringIO()
    meter = CampaignProgress(total=20, already=5, stream=out)
    meter.start()
    for i in range(15):
        meter.finished("failed" if i == 3 else "ok")
    meter.close()
    lines = out.getvalue().splitlines()
    # 6/20 .. 20/20: a line each time a tenth is crossed (8, 10, ..., 20 of 20)
    counts = [int(line.split()[1].split("/")[0]) for line in lines]
    assert counts == [6, 8, 10, 12, 14, 16, 18, 20]
    assert lines[-1].startswith("campaign: 20/20 runs done (5 from before), 1 failed, ")
    assert lines[-1].endswith(" runs/s")  # nothing left: no remaining time
    assert "left" in lines[0] and meter.done == 15 and meter.failed == 1


def test_quiet_prints_nothing() -> None:
    out = io.StringIO()
    meter = CampaignProgress(total=3, already=0, stream=out, enabled=False)
    for _ in range(3):
        meter.finished("ok")
    assert out.getvalue() == ""


def test_durations() -> None:
    assert _duration(42.4) == "42 s"
    assert _duration(125) == "2 min 05 s"
    assert _duration(3 * 3600 + 7 * 60) == "3 h 07 min"
