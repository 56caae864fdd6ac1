"""The campaign's progress: runs done of all, failed, rate, remaining time.

On a terminal, a tqdm bar redrawn in place; elsewhere (a log file, a batch job's output) one
plain line at every tenth of the campaign, so a Slurm job's log shows the progress without
carriage returns. Runs found complete at start (a resumed campaign) are counted as done but
not in the rate. Updates arrive from Dask's event thread: a lock keeps the counters whole.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, TextIO


class CampaignProgress:
    def __init__(self, total: int, already: int, stream: TextIO | None = None,
                 enabled: bool = True) -> None:
        self.total = total
        self.already = already
        self.done = 0  # runs finished in this session (ok or failed)
        self.failed = 0
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self._t0 = time.perf_counter()
        self._lock = threading.Lock()
        self._next_tenth = 1
        self._bar: Any = None
        if enabled and _is_tty(self.stream):
            from tqdm import tqdm

            self._bar = tqdm(total=total, initial=already, file=self.stream, unit="run",
                             dynamic_ncols=True, smoothing=0.1,
                             bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} runs "
                             "[{elapsed}<{remaining}, {rate_fmt}]{postfix}")
            self._bar.set_postfix_str("failed 0")

    def start(self) -> None:
        """The runs begin now (the cluster is up): the rate counts from here."""
        self._t0 = time.perf_counter()
        if self._bar is not None:
            self._bar.start_t = self._bar.last_print_t = self._bar._time()

    def finished(self, status: str) -> None:
        """One run ended in this session ("ok" or "failed")."""
        with self._lock:
            self.done += 1
            if status != "ok":
                self.failed += 1
            if self._bar is not None:
                self._bar.set_postfix_str(f"failed {self.failed}", refresh=False)
                self._bar.update(1)
            elif self.enabled and self.total:
                count = self.already + self.done
                if count * 10 >= self._next_tenth * self.total:
                    while self._next_tenth * self.total <= count * 10:
                        self._next_tenth += 1
                    print(self.line(), file=self.stream, flush=True)

    @property
    def rate(self) -> float:
        elapsed = time.perf_counter() - self._t0
        return self.done / elapsed if elapsed > 0 else 0.0

    def line(self) -> str:
        """runs done/total, failed, rate and the remaining time, on one line."""
        count = self.already + self.done
        rate = self.rate
        left = self.total - count
        eta = f", about {_duration(left / rate)} left" if rate > 0 and left > 0 else ""
        resumed = f" ({self.already} from before)" if self.already else ""
        return (f"campaign: {count}/{self.total} runs done{resumed}, {self.failed} failed, "
                f"{rate:.2f} runs/s{eta}")

    def close(self) -> None:
        with self._lock:
            if self._bar is not None:
                self._bar.close()
                self._bar = None


def _is_tty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds // 60 % 60:02d} min"
