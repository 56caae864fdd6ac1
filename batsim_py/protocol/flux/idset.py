"""RFC 22 idsets (`"0-3,7"`) and the RFC 29 hostlists of R's `nodelist` (`"node[0-3]"`).

Flux prints idsets sorted, comma-separated, with ranges `a-b` (RFC 22 also allows brackets
around the whole set: `"[0-3,7]"`, accepted on input). Batsim's interval sets are the same
numbers with spaces (`batsim_py.intervalset`): the two never mix on one wire.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from batsim_py.intervalset import ranges

MAX_IDS = 1_000_000  # far beyond any platform: a bigger set from the wire is refused unbuilt


def decode(text: str) -> tuple[int, ...]:
    """Sorted unique ids of an RFC 22 idset; ValueError says what is wrong."""
    if not isinstance(text, str):
        raise ValueError(f"an idset is a string like \"0-3,7\", not {type(text).__name__}")
    body = text.strip()
    if body.startswith("[") and body.endswith("]"):
        body = body[1:-1]
    if not body:
        return ()
    ids: set[int] = set()
    for token in body.split(","):
        lo, sep, hi = token.partition("-")
        if not lo.isdigit() or (sep and not hi.isdigit()):
            raise ValueError(f"idset {text!r}: '{token}' is not an id or a range a-b")
        a, b = int(lo), int(hi) if sep else int(lo)
        if b < a:
            raise ValueError(f"idset {text!r}: '{token}' is a decreasing range")
        if len(ids) + b - a + 1 > MAX_IDS:
            raise ValueError(f"idset {text!r}: more than {MAX_IDS:,} ids")
        ids.update(range(a, b + 1))
    return tuple(sorted(ids))


def encode(ids: Iterable[int]) -> str:
    """Canonical RFC 22 text: sorted, merged ranges, comma-separated (`""` when empty)."""
    return ",".join(ranges(ids))


_NUMBERED = re.compile(r"^(.*?)(\d+)$")


def hostlist(names: Iterable[str]) -> str:
    """An RFC 29 hostlist of `names` in their order: runs of one prefix with consecutive
    numbers (same width) fold into `prefix[a-b]`, anything else is listed as is."""
    groups: list[tuple[str, list[tuple[int, int]], int] | str] = []
    for name in names:
        m = _NUMBERED.match(name)
        if m is None or (len(m.group(2)) > 1 and m.group(2).startswith("0")):
            groups.append(name)
            continue
        prefix, number = m.group(1), int(m.group(2))
        last = groups[-1] if groups else None
        if (not isinstance(last, str) and last is not None and last[0] == prefix
                and last[1][-1][1] + 1 == number):
            last[1][-1] = (last[1][-1][0], number)
        elif not isinstance(last, str) and last is not None and last[0] == prefix:
            last[1].append((number, number))
        else:
            groups.append((prefix, [(number, number)], 0))
    out = []
    for group in groups:
        if isinstance(group, str):
            out.append(group)
            continue
        prefix, ranges, _ = group
        if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
            out.append(f"{prefix}{ranges[0][0]}")
        else:
            out.append(prefix + "[" + ",".join(
                str(a) if a == b else f"{a}-{b}" for a, b in ranges) + "]")
    return ",".join(out)


def expand_hostlist(text: str) -> list[str]:
    """The host names of an RFC 29 hostlist (`"node[0-2],login"`), in order."""
    names: list[str] = []
    for part in re.findall(r"[^,\[]+(?:\[[^\]]*\])?|(?<=,),", text):
        part = part.strip(",")
        if not part:
            continue
        m = re.fullmatch(r"(.*)\[([^\]]*)\](.*)", part)
        if m is None:
            names.append(part)
            continue
        for token in m.group(2).split(","):
            lo, sep, hi = token.partition("-")
            width = len(lo) if lo.startswith("0") else 0
            for n in range(int(lo), int(hi if sep else lo) + 1):
                names.append(f"{m.group(1)}{n:0{width}d}{m.group(3)}")
    return names
