"""What the SimGrid oracle tests share: Debian's python3-simgrid runs under the system Python.

The oracle scripts (run by /usr/bin/python3) import this module too: it needs nothing but the
standard library.
"""

from __future__ import annotations

import subprocess

SYSTEM_PYTHON = "/usr/bin/python3"


def simgrid_available() -> bool:
    """True when /usr/bin/python3 can import Debian's simgrid module."""
    try:
        res = subprocess.run([SYSTEM_PYTHON, "-c", "import simgrid"], capture_output=True,
                             timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return res.returncode == 0


def full_zone_xml(hosts: list[str], links: list[dict], routes: list) -> str:
    """A Full-zone SimGrid platform: `hosts` are the host elements (named h0, h1, ...), links
    l0, l1, ... (a "fatpipe" key sets the sharing policy explicitly), one-way routes
    [src, dst, [link, ...]]. Numbers are written with repr so that strtod reads them back
    exactly."""
    out = ['<?xml version="1.0"?>', '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
           '<platform version="4.1">', '<zone id="world" routing="Full">', *hosts]
    for k, link in enumerate(links):
        policy = ""
        if "fatpipe" in link:
            policy = f' sharing_policy="{"FATPIPE" if link["fatpipe"] else "SHARED"}"'
        out.append(f'<link id="l{k}" bandwidth="{link["bandwidth"]!r}Bps" '
                   f'latency="{link["latency"]!r}s"{policy}/>')
    for src, dst, hops in routes:
        ctn = "".join(f'<link_ctn id="l{k}"/>' for k in hops)
        out.append(f'<route src="h{src}" dst="h{dst}" symmetrical="NO">{ctn}</route>')
    out += ["</zone>", "</platform>"]
    return "\n".join(out)
