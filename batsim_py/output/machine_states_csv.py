"""`PREFIX_machine_states.csv`: machine counts per state after each change (§7.3)."""

from __future__ import annotations

HEADER = "time,nb_sleeping,nb_switching_on,nb_switching_off,nb_idle,nb_computing"

# A row: the date, then the counts in the header's order. sim/machines.py formats the counts of
# each distinct row once and reuses the text, so a row is DATE % date + COUNTS % counts.
DATE = "%g"
COUNTS = ",%d,%d,%d,%d,%d\n"
ROW = DATE + COUNTS
