"""External event files: validation with file:line messages, Batsim's ordering."""

from __future__ import annotations

from pathlib import Path

import pytest

from batsim_py.errors import WorkloadError
from batsim_py.workload.events import load_events


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "events.txt"
    path.write_text(text)
    return str(path)


def test_events_are_sorted_by_time_then_type(tmp_path: Path) -> None:
    path = write(tmp_path, "\n".join([
        '{"type": "machine_unavailable", "resources": "0-1", "timestamp": 5}',
        '{"type": "custom", "timestamp": 5, "x": 1}',
        '{"type": "machine_available", "resources": "2", "timestamp": 5}',
        "",
        '{"type": "machine_available", "resources": "0 1", "timestamp": 1}',
    ]))
    events = load_events(path, "we0", forward_unknown=True).events
    assert [(e.timestamp, e.type) for e in events] == [
        (1.0, "machine_available"), (5.0, "machine_available"), (5.0, "machine_unavailable"),
        (5.0, "generic"),
    ]
    assert events[0].resources == (0, 1)
    assert events[3].description == {"type": "custom", "timestamp": 5, "x": 1}


@pytest.mark.parametrize(
    "line, message",
    [
        ('{"type": "custom", "timestamp": 1}', r"events.txt:1: unknown event type 'custom'"),
        ('{"type": "machine_available", "timestamp": 1}', r"events.txt:1: .* needs 'resources'"),
        ('{"type": "machine_available", "resources": "2-1", "timestamp": 1}',
         r"events.txt:1: 'resources' '2-1'"),
        ('{"type": "machine_available", "resources": "1", "timestamp": -1}',
         r"events.txt:1: the timestamp must be >= 0"),
        ('{"type": "machine_available", "resources": "1"}', r"needs a numeric 'timestamp'"),
        ("[1, 2]", r"events.txt:1: an event must be a JSON object"),
        ("{nope", r"events.txt:1: not a JSON object"),
    ],
)
def test_bad_events(tmp_path: Path, line: str, message: str) -> None:
    with pytest.raises(WorkloadError, match=message):
        load_events(write(tmp_path, line), "we0")


def test_missing_events_file(tmp_path: Path) -> None:
    with pytest.raises(WorkloadError, match="events file not found"):
        load_events(str(tmp_path / "none.txt"), "we0")
