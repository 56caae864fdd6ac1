"""The --edc-* options: Batsim 5's names, `-s` kept as Batsim 4's, clear usage errors."""

from __future__ import annotations

import pytest

from batsim_py.cli import build_parser, main
from edc.helpers import PROJECT

SMALL = ["-p", str(PROJECT / "platforms/small4.xml"), "-w",
         str(PROJECT / "workloads/delays_small.json")]


def test_s_is_still_batsim4_socket_endpoint():
    args = build_parser().parse_args(["-s", "tcp://localhost:1234"])
    assert args.socket_endpoint == "tcp://localhost:1234" and args.edc_socket_str is None
    args = build_parser().parse_args(["--edc-socket-str", "ipc:///tmp/x", "{}",
                                      "-S", "ipc:///tmp/y", "f.json", "-l", "lib.so", "",
                                      "-L", "lib.so", "init.json"])
    assert args.edc_socket_str == ["ipc:///tmp/x", "{}"]
    assert args.edc_socket_file == ["ipc:///tmp/y", "f.json"]
    assert args.edc_library_str == ["lib.so", ""]
    assert args.edc_library_file == ["lib.so", "init.json"]


@pytest.mark.parametrize("extra, message", [
    (["-l", "batsim_py.edcs.fcfs", "{}", "--edc-socket-str", "ipc:///tmp/x", "{}"],
     "exactly one EDC per simulation"),
    (["--lift-v5-restrictions"], "apply to a batprotocol EDC"),
    (["-l", "batsim_py.edcs.fcfs", "{}", "--scheduler", "fcfs"], "--scheduler does not go"),
    (["-L", "batsim_py.edcs.fcfs", "/no/such/init.json"], "cannot read the init file"),
    (["-l", "no_such_edc_module", "{}"], "Python EDC 'no_such_edc_module'"),
    (["-l", "/no/such/libedc.so", "{}"], "no such file"),
    (["-l", "batsim_py.edcs.fcfs", "{}", "--output-layout", "v6"], "--output-layout must be"),
    (["-l", "batsim_py.edcs.fcfs", "{}", "--protocol", "flux"], "one protocol per run"),
])
def test_usage_errors(capsys, tmp_path, extra, message):
    assert main([*SMALL, "-e", str(tmp_path / "o"), "-q", *extra]) == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_init_file_is_read(tmp_path):
    init = tmp_path / "init.json"
    init.write_text('{"format_binary": true}')
    assert main([*SMALL, "-e", str(tmp_path / "o"), "-q", "-L", "batsim_py.edcs.easy",
                 str(init)]) == 0
    assert len((tmp_path / "o_jobs.csv").read_text().splitlines()) == 21
