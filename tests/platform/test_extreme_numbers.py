"""Extreme numbers in a platform (issue 12 item 2, load-time half): what SimGrid's parser
refuses (strtod's ERANGE: beyond a double, or denormal) and what cannot be simulated (infinite
speeds, bandwidths and latencies, bandwidth 0, non-finite or negative watts, switch pstates of
speed 0, a host starting asleep) is refused at load with one line naming file, element and fix;
finite extremes are accepted (the run-time solver's to simulate)."""

from __future__ import annotations

from pathlib import Path

import pytest

from batsim_py.errors import PlatformError
from batsim_py.platform.reader import load_platform
from batsim_py.platform.units import out_of_range, parse_speed, strtod_prefix


def platform(tmp_path: Path, speed: str = "1Gf", bw: str = "1GBps", lat: str = "10us") -> str:
    path = tmp_path / "p.xml"
    path.write_text(f'''<?xml version="1.0"?>
<platform version="4.1"><zone id="z" routing="Full">
<host id="master_host" speed="1Gf"/>
<host id="n0" speed="{speed}"/>
<link id="l" bandwidth="{bw}" latency="{lat}"/>
<route src="master_host" dst="n0"><link_ctn id="l"/></route>
</zone></platform>''')
    return str(path)


REFUSED = [
    ({"speed": "inf"}, ':4: <host id="n0">: speed inf cannot be simulated'),
    ({"speed": "1e308Gf"}, ':4: <host id="n0">: speed inf cannot be simulated'),
    ({"speed": "1e-320f"}, ":4: <host id=\"n0\">: speed '1e-320f' is out of range"),
    ({"speed": "1e999f"}, ":4: <host id=\"n0\">: speed '1e999f' is out of range"),
    ({"speed": "0x1p99999f"}, ":4: <host id=\"n0\">: speed '0x1p99999f' is out of range"),
    ({"speed": "1e-400f"}, ":4: <host id=\"n0\">: speed '1e-400f' is out of range"),
    ({"speed": "nan"}, ':4: <host id="n0">: speed nan must be non-negative'),
    ({"bw": "0Bps"}, ":5: <link id=\"l\">: link 'l': bandwidth 0: no byte would ever cross"),
    ({"bw": "inf"}, ":5: <link id=\"l\">: link 'l': bandwidth inf cannot be simulated"),
    ({"bw": "1e308GBps"}, ":5: <link id=\"l\">: link 'l': bandwidth inf cannot be simulated"),
    ({"bw": "1e-320Bps"}, ":5: <link id=\"l\">: bandwidth '1e-320Bps' is out of range"),
    ({"lat": "infs"}, ":5: <link id=\"l\">: link 'l': latency inf cannot be simulated"),
    ({"lat": "1e-320s"}, ":5: <link id=\"l\">: latency '1e-320s' is out of range"),
    ({"lat": "-1s"}, ":5: <link id=\"l\">: latency '-1s' must be a non-negative number"),
]


@pytest.mark.parametrize(("fields", "message"), REFUSED, ids=[str(f) for f, _ in REFUSED])
def test_refused_at_load(tmp_path: Path, fields: dict, message: str) -> None:
    path = platform(tmp_path, **fields)
    with pytest.raises(PlatformError) as info:
        load_platform(path)
    assert str(info.value).startswith(path + message), str(info.value)
    assert "\n" not in str(info.value)


ACCEPTED = [{"speed": "1e308f"}, {"speed": "2.3e-308f"}, {"speed": "0f"}, {"speed": "0e-999f"},
            {"bw": "1e308Bps"}, {"bw": "1e-300Bps"}, {"lat": "0"}, {"lat": "1e308s"},
            {"lat": "1e-300ps"}]


@pytest.mark.parametrize("fields", ACCEPTED, ids=[str(f) for f in ACCEPTED])
def test_finite_extremes_are_accepted(tmp_path: Path, fields: dict) -> None:
    load_platform(platform(tmp_path, **fields))


def test_out_of_range_is_strtod_erange() -> None:
    for text, expected in [("1e308", False), ("1e309", True), ("2.2250738585072014e-308", False),
                           ("1e-310", True), ("5e-324", True), ("0", False), ("0.000e-500", False),
                           ("1e-500", True), ("inf", False), ("-nan", False), ("0x1p-1080", True)]:
        value, rest = strtod_prefix(text)  # type: ignore[misc]
        assert out_of_range(text, value) is expected, text
    assert parse_speed("1e308f") == 1e308
