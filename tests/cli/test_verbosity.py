"""-v/--verbosity as Batsim 4.2.1 (src/batsim.cpp, configure_batsim_logging_output): quiet and
network-only show errors only, network-only adds every protocol message (`Sending '...'`,
`Received '...'`, Batsim's `network` category at info), information and debug show them too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from batsim_py.decision.message_log import MessageLog
from batsim_py.protocol.codec import encode_batsim_message

PROJECT = Path(__file__).resolve().parents[2]
SMALL4 = str(PROJECT / "platforms" / "small4.xml")
DELAYS = str(PROJECT / "workloads" / "delays_small.json")


def _transcript(tmp_path: Path) -> tuple[Path, int]:
    """A transcript of an FCFS run on the small inputs (recorded here), and its exchanges."""
    path = tmp_path / "t.jsonl"
    subprocess.run([sys.executable, "-m", "batsim_py.cli", "-q", "-p", SMALL4, "-w", DELAYS,
                    "--scheduler", "fcfs", "-e", str(tmp_path / "rec"),
                    "--record-transcript", str(path)], cwd=PROJECT, check=True,
                   capture_output=True)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return path, sum(1 for line in lines if line["from"] == "batsim")


def _stderr(tmp_path: Path, scheduler: str, *flags: str) -> list[str]:
    env = dict(os.environ)
    env.pop("BATSIM_PY_PURE", None)
    done = subprocess.run([sys.executable, "-m", "batsim_py.cli", "-p", SMALL4, "-w", DELAYS,
                           "--scheduler", scheduler, "-e", str(tmp_path / "out"), *flags],
                          cwd=PROJECT, env=env, check=True, capture_output=True, text=True)
    return done.stderr.splitlines()


def _messages(lines: list[str]) -> tuple[list[str], list[str]]:
    sent = [line for line in lines if line.startswith("INFO batsim_py.network: Sending '{")]
    received = [line for line in lines if line.startswith("INFO batsim_py.network: Received '{")]
    return sent, received


def test_network_only_logs_every_message_and_nothing_else(tmp_path: Path) -> None:
    transcript, exchanges = _transcript(tmp_path)
    lines = _stderr(tmp_path, f"replay:{transcript}", "-v", "network-only")
    sent, received = _messages(lines)
    assert len(sent) == len(received) == exchanges > 2
    assert '"type":"SIMULATION_BEGINS"' in sent[0] and '"SIMULATION_ENDS"' in sent[-1]
    assert len(lines) == 2 * exchanges, lines  # no information, no warning


@pytest.mark.parametrize("flags", [("-q",), ("-v", "quiet")])
def test_quiet_shows_nothing_but_errors(tmp_path: Path, flags) -> None:
    transcript, _ = _transcript(tmp_path)
    assert _stderr(tmp_path, f"replay:{transcript}", *flags) == []


def test_information_logs_an_external_peer_s_messages(tmp_path: Path) -> None:
    transcript, exchanges = _transcript(tmp_path)
    lines = _stderr(tmp_path, f"replay:{transcript}")
    sent, received = _messages(lines)
    assert len(sent) == len(received) == exchanges
    assert any("outputs written" in line for line in lines)


def test_in_process_messages_are_logged_when_asked_for(tmp_path: Path) -> None:
    """An in-process scheduler exchanges no bytes: they are encoded for -v network-only and
    debug, not at the default verbosity."""
    _, exchanges = _transcript(tmp_path)
    assert _messages(_stderr(tmp_path, "fcfs")) == ([], [])
    for level in ("network-only", "debug"):
        sent, received = _messages(_stderr(tmp_path, "fcfs", "-v", level))
        assert len(sent) == len(received) == exchanges


def test_a_wire_reply_is_logged_verbatim(caplog) -> None:
    class Wire:
        def exchange_text(self, message: str) -> str:
            return '{"now":  0, "events": [] }'

        def close(self) -> None:
            pass

    peer = MessageLog(Wire())  # type: ignore[arg-type]
    with caplog.at_level("INFO", logger="batsim_py.network"):
        reply = peer.exchange(0.0, [])
    assert reply.decisions == ()
    assert [r.getMessage() for r in caplog.records] == [
        f"Sending '{encode_batsim_message(0.0, [])}'",
        "Received '{\"now\":  0, \"events\": [] }'"]
