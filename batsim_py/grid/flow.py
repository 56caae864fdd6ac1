"""Flow control: how many jobs CiGri's runner submits to a cluster per cycle.

- `taps` (CiGri 3's default, `lib/cigri-runnerlib.rb` class `Tap`, used by
  `modules/runner.rb`): one tap per (cluster, campaign), opened or closed by what the runner
  sees, its rate multiplied by 1.5 after a successful submission and divided by 1.5 while
  jobs keep waiting (after a grace period).
- `simple`, `tcp`, `two_way`, `adaptive_down_exp_up`: CiGri 2.x's job-ratio predictors
  (`stable-1.4:Spritz/spritzCigri.pl`, research §3.4) and the seed's third algorithm; a job
  ratio `jr` per (campaign, cluster), turned into a number of jobs by `jobratio_to_absolute`
  (`Iolib/iolibCigri.pm`): `jr × (free + max_waiting)`, floored here (the Perl scheduler
  passes the float on).
- `pi`: Guilloteau's proportional-integral controller (`GuilloteauQ/cigri` branch
  `controllers/PI`, `ctrl_cigri_conf.json`): the number of jobs per cycle follows
  `n += kp·e + ki·Σe` with `e = reference − waiting`.

The predictors are pure functions, unit-tested on the worked inputs of research §3.4.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


# ---------------------------------------------------------------------------- taps (CiGri 3)
@dataclass(slots=True)
class Tap:
    """`Cigri::Tap` (lib/cigri-runnerlib.rb): a rate and an open/closed state."""

    rate: int
    is_open: bool = True
    close_date: float | None = None

    def open(self) -> bool:
        """Re-open (Tap#open); True if it was closed."""
        if self.is_open:
            return False
        self.is_open = True
        return True

    def close(self, now: float) -> bool:
        """Close (Tap#close): only an open tap is closed and gets a new `close_date`."""
        if not self.is_open:
            return False
        self.is_open = False
        self.close_date = now
        return True

    def increase(self, factor: float, maximum: int) -> bool:
        """Tap#increase: `rate = min(max, floor(rate × factor))` (Ruby's `to_i`)."""
        if self.rate >= maximum:
            return False
        self.rate = min(maximum, int(self.rate * factor))
        return True

    def decrease(self, now: float, factor: float, minimum: int, grace: float) -> bool:
        """Tap#decrease: nothing within `grace` seconds of the last close, else
        `rate = max(minimum, floor(rate / factor))`."""
        if self.close_date is not None and now - self.close_date < grace:
            return False
        if self.rate <= minimum:
            return False
        self.rate = max(minimum, int(self.rate / factor))
        return True


# ---------------------------------------------------------------------------- 2.x predictors
def max_waiting_jobs(cluster_max_weight: int, flood_rate: float = 0.5) -> int:
    """`get_max_waiting_jobs_by_cluster`: floor(cluster weight × FLOOD_RATE), FLOOD_RATE 0.5
    when unset or not > 0."""
    if not flood_rate > 0:
        flood_rate = 0.5
    return math.floor(cluster_max_weight * flood_rate)


def jobratio_to_absolute(jr: float, free: int, max_waiting: int) -> int:
    """`jobratio_to_absolute`: jr × (free + max_waiting) jobs, floored (ours)."""
    return max(0, math.floor(jr * (free + max_waiting)))


def simple_ratio(average_resources_per_job: float) -> float:
    """SIMPLE: 1 / average resources per job, 0.5 at campaign start (no job yet)."""
    if average_resources_per_job == 0:
        return 0.5
    return 1.0 / average_resources_per_job


def tcp_ratio(old_jr: float, waiting: int, free: int, max_waiting: int) -> float:
    """TCP slow start: 0 when flooded, else 1/free from 0, else doubled.
    (Perl divides by zero when `free` = 0 and `old_jr` = 0; we return 0 there.)"""
    if waiting > max_waiting:
        return 0.0
    if old_jr == 0:
        return 1.0 / free if free > 0 else 0.0
    return old_jr * 2


def _adaptive_down(old_jr: float, waiting: int, free: int, max_waiting: int) -> float:
    submitted = old_jr * free
    if submitted > 0:
        return (submitted - (waiting - max_waiting)) / submitted
    return 0.0


def two_way_ratio(old_jr: float, waiting: int, running: int, free: int, max_waiting: int,
                  perl_uninitialised: bool = False) -> float:
    """TWO_WAY_ADAPTATIVE. Decrease when flooded: (old_jr·free − excess) / (old_jr·free);
    else 1 from 0, else old_jr·free / running. When old_jr·free or running is 0, Perl
    multiplies an uninitialised `$jobratio` by 2, which gives 0; the intent was
    `old_jr × 2`, which we use unless `perl_uninitialised`. Negative ratios become 0."""
    if waiting > max_waiting:
        jr = _adaptive_down(old_jr, waiting, free, max_waiting)
    elif old_jr == 0:
        jr = 1.0
    elif old_jr * free > 0 and running > 0:
        jr = 1.0 / (running / (old_jr * free))
    else:
        jr = 0.0 if perl_uninitialised else old_jr * 2
    return max(jr, 0.0)


def adaptive_down_exp_up_ratio(old_jr: float, waiting: int, free: int,
                               max_waiting: int) -> float:
    """The seed's "adaptive-down, exponential-up" (never selectable in CiGri): the two-way
    decrease when flooded, the TCP increase (×2, or 1/free from 0) otherwise."""
    if waiting > max_waiting:
        return max(_adaptive_down(old_jr, waiting, free, max_waiting), 0.0)
    if old_jr == 0:
        return 1.0 / free if free > 0 else 0.0
    return old_jr * 2


@dataclass(slots=True)
class PiController:
    """Guilloteau's PI controller (controllers/PI): `n += kp·e + ki·Σe`, e = reference −
    waiting jobs; the runner submits floor(n) jobs (n kept >= 0)."""

    n: float = 10.0
    reference: float = 10.0
    kp: float = 0.01
    ki: float = 0.01
    integral: float = 0.0

    def update(self, waiting: int) -> int:
        error = self.reference - waiting
        self.integral += error
        self.n = max(0.0, self.n + self.kp * error + self.ki * self.integral)
        return math.floor(self.n)
