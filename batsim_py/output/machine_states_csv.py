"""`PREFIX_machine_states.csv`: machine counts per state after each change (§7.3)."""

from __future__ import annotations

HEADER = "time,nb_sleeping,nb_switching_on,nb_switching_off,nb_idle,nb_computing"


def format_row(time: float, sleeping: int, on: int, off: int, idle: int, computing: int) -> str:
    return "%g,%d,%d,%d,%d,%d" % (time, sleeping, on, off, idle, computing)
