"""The SimGrid platform: reading the XML, routes, and Batsim's machine numbering."""

from batsim_py.platform.machines import build_machines
from batsim_py.platform.model import Host, Link, Machine, Machines, Platform, Route
from batsim_py.platform.reader import load_platform

__all__ = [
    "Host",
    "Link",
    "Machine",
    "Machines",
    "Platform",
    "Route",
    "build_machines",
    "load_platform",
]
