"""How Batsim reads a JSON number (workloads, scheduler replies): RapidJSON's default (not
full-precision) conversion, which can differ from the correctly rounded value by an ulp or more.

Schedulers such as pybatsim print floats with Python's shortest repr, up to 17 significant
digits (`100000000000.00003`). RapidJSON keeps at most the digits that fit its fast path, then
multiplies or divides by a power of ten once; for long numbers the result may be a neighbour of
the nearest double. Batsim then sleeps until that slightly different `now`, which shows in the
sixth decimal of its outputs at large dates. Mirroring the conversion keeps batsim-py on the
same dates. (Read from RapidJSON's reader.h, `ParseNumber` and `StrtodNormalPrecision`.)
"""

from __future__ import annotations

import math

_U32_LIMIT = 429496729  # (2^32 - 1) // 10
_U64_LIMIT = 1844674407370955161  # (2^64 - 1) // 10
_FAST_PATH_MAX = (1 << 53) - 1


def _pow10(n: int) -> float:
    return float(f"1e{n}")


def _fast_path(significand: float, exp: int) -> float:
    if exp < -308:
        return 0.0
    if exp >= 0:
        return significand * _pow10(exp)
    return significand / _pow10(-exp)


def rapidjson_double(text: str) -> float:
    """The double RapidJSON's default `ParseNumber` gives for the JSON number `text`."""
    n = len(text)
    pos = 0
    minus = text.startswith("-")
    if minus:
        pos = 1

    def digit(k: int) -> int:
        c = text[k] if k < n else ""
        return ord(c) - 48 if "0" <= c <= "9" else -1

    i = 0  # what RapidJSON holds in `i` (32 bits), `i64` or `d`, as Python int / float
    use64 = False
    use_double = False
    d = 0.0
    significand_digits = 0
    if digit(pos) == 0:
        pos += 1
    else:
        i = digit(pos)
        pos += 1
        limit, last = (214748364, 8) if minus else (_U32_LIMIT, 5)
        while digit(pos) >= 0:
            if i >= limit and (i != limit or digit(pos) > last):
                use64 = True
                break
            i = i * 10 + digit(pos)
            significand_digits += 1
            pos += 1
    if use64:
        limit, last = (922337203685477580, 8) if minus else (_U64_LIMIT, 5)
        while digit(pos) >= 0:
            if i >= limit and (i != limit or digit(pos) > last):
                d = float(i)
                use_double = True
                break
            i = i * 10 + digit(pos)
            significand_digits += 1
            pos += 1
    if use_double:
        while digit(pos) >= 0:
            d = d * 10.0 + digit(pos)
            pos += 1
    exp_frac = 0
    if pos < n and text[pos] == ".":
        pos += 1
        if not use_double:
            while digit(pos) >= 0:
                if i > _FAST_PATH_MAX:
                    break
                i = i * 10 + digit(pos)
                exp_frac -= 1
                if i != 0:
                    significand_digits += 1
                pos += 1
            d = float(i)
            use_double = True
        while digit(pos) >= 0:
            if significand_digits < 17:
                d = d * 10.0 + digit(pos)
                exp_frac -= 1
                if d > 0.0:
                    significand_digits += 1
            pos += 1
    exp = 0
    if pos < n and text[pos] in "eE":
        pos += 1
        if not use_double:
            d = float(i)
            use_double = True
        exp_minus = False
        if pos < n and text[pos] in "+-":
            exp_minus = text[pos] == "-"
            pos += 1
        while digit(pos) >= 0:
            exp = exp * 10 + digit(pos)
            pos += 1
        if exp_minus:
            exp = -exp
    if not use_double:
        return float(-i if minus else i)
    p = exp + exp_frac
    if p < -308:
        d = _fast_path(_fast_path(d, -308), p + 308)
    else:
        d = _fast_path(d, p)
    if math.isinf(d):
        raise ValueError(f"number too big: {text}")
    return -d if minus else d


def wire_value(x: float) -> float:
    """What Batsim reads when a scheduler prints `x` with Python's repr (as pybatsim does):
    `batsim_py.wire.read_back`, kept under this name for existing callers."""
    from batsim_py.wire import read_back  # (wire imports this module)

    return read_back(x)
