"""`PREFIX_machine_states.csv`: machine counts per state after each change (§7.3)."""

from __future__ import annotations

HEADER = "time,nb_sleeping,nb_switching_on,nb_switching_off,nb_idle,nb_computing"


ROW = "%g,%d,%d,%d,%d,%d\n"  # time, then the counts in the header's order
