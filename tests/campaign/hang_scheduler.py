"""An in-process scheduler that never answers (a bug in a user's policy): the subject of the
per-run time limit's tests."""

from __future__ import annotations

import time
from collections.abc import Sequence

from batsim_py.decision.decisions import Reply
from batsim_py.decision.events import Event
from batsim_py.decision.interface import DecisionProcess


class Hang(DecisionProcess):
    def exchange(self, now: float, events: Sequence[Event]) -> Reply:
        while True:
            time.sleep(0.05)
