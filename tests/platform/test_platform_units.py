import math

import pytest

from batsim_py.platform.units import (
    parse_bandwidth,
    parse_int_prefix,
    parse_size,
    parse_speed,
    parse_speed_list,
    parse_time,
    strtod_prefix,
)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1f", 1.0),
        ("1kf", 1e3),
        ("98.095Mf", 98.095 * 1e6),
        ("1Gf", 1e9),
        ("2Tf", 2e12),
        ("1e-9Mf", 1e-9 * 1e6),
        ("0.1639344262295082f", 0.1639344262295082),
        ("3flops", 3.0),
        ("1megaflops", 1e6),
        ("1zetaflops", 1e21),
        ("1yottaflops", 1e24),
        ("0", 0.0),
        ("1e3", 1e3),  # unit-less: default unit, with a warning
    ],
)
def test_speed(text: str, value: float) -> None:
    assert parse_speed(text) == value


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1Bps", 1.0),
        ("125MBps", 125e6),
        ("41.279125MBps", 41.279125 * 1e6),
        ("2.25GBps", 2.25e9),
        ("10Gbps", 1.25e9),
        ("1Mibps", 131072.0),
        ("1KiBps", 1024.0),
        ("1GiBps", 1024.0**3),
        ("8bps", 1.0),
        ("1kbps", 125.0),
        ("1EBps", 1e18),  # 'E' is a prefix here, not an exponent
        ("1e3kBps", 1e6),
    ],
)
def test_bandwidth(text: str, value: float) -> None:
    assert parse_bandwidth(text) == value


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1s", 1.0),
        ("1ms", 1e-3),
        ("500us", 500 * 1e-6),
        ("1ns", 1e-9),
        ("1ps", 1e-12),
        ("2m", 120.0),
        ("1h", 3600.0),
        ("1d", 86400.0),
        ("1w", 604800.0),
        ("0", 0.0),
        ("0s", 0.0),
        ("-1.5s", -1.5),
    ],
)
def test_time(text: str, value: float) -> None:
    assert parse_time(text) == value


def test_100us_is_a_double_multiplication() -> None:
    assert parse_time("100us") == 100 * 1e-6 == 9.999999999999999e-05
    assert parse_time("100us") != 1e-4


def test_size() -> None:
    assert parse_size("1KiB") == 1024.0
    assert parse_size("1MB") == 1e6
    assert parse_size("16b") == 2.0


@pytest.mark.parametrize(
    ("parse", "text", "why"),
    [
        (parse_bandwidth, "1KBps", "unknown unit 'KBps'"),
        (parse_speed, "1Kf", "unknown unit 'Kf'"),
        (parse_speed, "1Gflops", "unknown unit 'Gflops'"),
        (parse_bandwidth, "10 MBps", "no space allowed"),
        (parse_bandwidth, "10MBps ", "no space allowed"),
        (parse_time, "1min", "unknown unit 'min'"),
        (parse_time, "1µs", "unknown unit"),
        (parse_time, "1kus", "unknown unit"),
        (parse_speed, "fast", "must start with a number"),
        (parse_speed, "", "must start with a number"),
        (parse_bandwidth, "1Bps/s", "unknown unit"),
    ],
)
def test_errors(parse, text: str, why: str) -> None:
    with pytest.raises(ValueError, match=why) as info:
        parse(text)
    assert f"'{text}'" in str(info.value)


def test_speed_list_items_are_trimmed() -> None:
    assert parse_speed_list("100.0Mf, 50.0Mf,1e-9Mf") == (100e6, 50e6, 1e-9 * 1e6)
    with pytest.raises(ValueError):
        parse_speed_list("1Gf,,2Gf")


def test_strtod_prefix() -> None:
    assert strtod_prefix("  12.5e3xyz") == (12.5e3, "xyz")
    assert strtod_prefix("1e") == (1.0, "e")  # exponent needs digits
    assert strtod_prefix("1EBps") == (1.0, "EBps")
    assert strtod_prefix(".5") == (0.5, "")
    assert strtod_prefix("0x10") == (16.0, "")
    inf = strtod_prefix("inf")
    assert inf is not None and math.isinf(inf[0])
    assert strtod_prefix("x1") is None


def test_int_prefix() -> None:
    assert parse_int_prefix("0.0") == 0
    assert parse_int_prefix(" 12;5") == 12
    with pytest.raises(ValueError):
        parse_int_prefix("x")
