"""The order in which a workload's jobs are submitted: Batsim sorts them by (subtime, id), the
id compared as a string (`w0!10` before `w0!9`): `submission_order` must give exactly that
order (the definition, `sorted` by that key, is the reference), including where it skips
the sort (non-decreasing subtimes: only runs of equal ones are sorted)."""

from __future__ import annotations

import math
import random

import pytest

from batsim_py.sim.submitter import submission_order
from batsim_py.workload.model import Job, Workload


def workload(pairs: list[tuple[float, str]]) -> Workload:
    jobs = tuple(Job(f"w0!{name}", "w0", name, subtime, -1.0, 1, "p") for subtime, name in pairs)
    return Workload(name="w0", path="/w0.json", nb_res=1, jobs=jobs, profiles={})


def batsim_order(w: Workload) -> list[str]:
    """The order by definition: (subtime, id as a string), a stable sort."""
    return [j.id for j in sorted(w.jobs, key=lambda j: (j.subtime, j.id))]


def order(w: Workload) -> list[str]:
    return [j.id for j in submission_order(w)]


def test_ties_are_ordered_by_id_as_strings():
    # 10 and 9 submitted at once: "w0!10" < "w0!9" as strings
    w = workload([(0.0, "1"), (5.0, "9"), (5.0, "10"), (5.0, "2"), (7.0, "3"), (7.0, "30")])
    assert order(w) == ["w0!1", "w0!10", "w0!2", "w0!9", "w0!3", "w0!30"]


def test_a_nan_subtime_is_sorted_as_the_definition_sorts():
    w = workload([(1.0, "2"), (math.nan, "1"), (1.0, "0")])
    assert order(w) == batsim_order(w)


def test_increasing_subtimes_keep_file_order():
    w = workload([(float(t), str(100 - t)) for t in range(50)])
    assert order(w) == [j.id for j in w.jobs]


@pytest.mark.parametrize("seed", range(40))
def test_same_order_as_the_definition(seed):
    rng = random.Random(seed)
    n = rng.randrange(0, 60)
    kind = seed % 4
    subtimes: list[float] = []
    t = 0.0
    for _ in range(n):
        if kind == 0:  # non-decreasing with many ties (generated workloads)
            t += rng.choice([0.0, 0.0, 1.0, 2.5])
            subtimes.append(t)
        elif kind == 1:  # any order
            subtimes.append(float(rng.randrange(6)))
        elif kind == 2:  # non-decreasing: infinities around -0.0 and 0.0 mixed
            third = len(subtimes) * 3 // max(1, n)
            subtimes.append([-math.inf, rng.choice([-0.0, 0.0]), math.inf][third])
        else:  # non-decreasing with one step back somewhere
            t += rng.choice([0.0, 1.0])
            subtimes.append(t)
    if kind == 3 and n > 2:
        subtimes[rng.randrange(1, n)] -= 3.0
    names = [str(rng.randrange(1000)) + "x" * rng.randrange(2) for _ in range(n)]
    names = [f"{name}_{i}" if names.index(name) != i else name for i, name in enumerate(names)]
    w = workload(list(zip(subtimes, names, strict=True)))
    assert order(w) == batsim_order(w)
