"""SimGrid's fair-bottleneck LMM solver, reproduced round for round with numpy.

Batsim always runs SimGrid's ptask_L07 model, whose LMM system is solved by
`FairBottleneck::do_solve` (simgrid-models §3.3), not by max-min: its quirks (stale increments,
the FATPIPE "smallest increment" rule, an absolute 1e-5 snap of remaining capacities) change
completion dates, so they are reproduced on purpose. Each round is vectorised over elements;
the rounds themselves stay sequential because each depends on the previous one.

Order dependence. Within a round every quantity depends only on the previous round, so the
result does not depend on the order of constraints or variables. The one place where order
matters is floating-point rounding: SimGrid subtracts the increments of a SHARED constraint's
elements one by one, in the order of its enabled-element list (the most recently created or
enabled element first). `fair_bottleneck` subtracts in the order of the elements in `Usage`,
bit for bit like a sequential loop, so a caller wanting SimGrid's exact rounding lists the
elements of each resource newest first. Rounding decides the exact-equality test `x == bound`
and the 1e-5 snap, hence whether a variable leaves the round early.

Long and endless rounds. SimGrid loops until no variable is active, and the FATPIPE rule can
make that take very long or forever: a FATPIPE loses only the smallest increment among its
elements each round, often a stale one; if that is small, an unbounded variable on it gains
R/w per round for R/d rounds (thousands of rounds: SimGrid finishes; 1e15 rounds or an
increment that vanishes: real SimGrid, hence Batsim, spins forever; the oracle found such
cases among random ptask sets). Here:
- runs of rounds that only drain FATPIPEs by a constant amount are skipped in closed form
  (`_drain`), so the literal result comes out without iterating them;
- a round that changes nothing at all is a fixed point: the values are final;
- a round that changes only values (no capacity moves) repeats forever: unbounded variables
  that still grow get `inf` (their limit), bounded ones jump to their bound (`_repeat`).
`SolveInfo.converged` is False when SimGrid would not have finished (more than SPIN_ROUNDS
rounds, a fixed point, or an infinite limit); a rate of `inf` means the activity's work is
done within the current step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from batsim_py.errors import SimulationError

#: `precision/work-amount` (`maxmin/precision`): absolute snap of remaining capacities.
WORKAMOUNT_PRECISION = 1e-5

#: Bound on the literal rounds of one solve (a few seconds of numpy). Rounds that remove a
#: variable or a constraint are at most one per variable and constraint; the others drain
#: capacities, and the long drains are skipped in closed form, so real cases stay far below
#: it (at most 139 in 300 runs of the issue-21 family, 83 in 1000 random oracle cases).
#: Reaching it raises `SimulationError`: never a silent spin.
MAX_ROUNDS = 100_000
#: A solve needing more rounds than this (skipped in closed form) is one SimGrid does not
#: finish in practice: `SolveInfo.converged` is False for it.
SPIN_ROUNDS = 1_000_000_000

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class Usage:
    """The elements of an LMM system: one (activity, resource, weight) triple per element.

    An activity may have several elements on one resource: SimGrid's L07 model creates one CPU
    element per executor (forced creation), and the solver counts each of them as a separate
    sharer of the resource, which changes the result (see `batsim_py.sharing.ptask`).
    """

    activity: IntArray
    resource: IntArray
    weight: FloatArray
    n_activities: int
    n_resources: int

    @classmethod
    def from_elements(
        cls,
        activity: ArrayLike,
        resource: ArrayLike,
        weight: ArrayLike,
        n_activities: int,
        n_resources: int,
    ) -> Usage:
        act = np.asarray(activity, dtype=np.int64).ravel()
        res = np.asarray(resource, dtype=np.int64).ravel()
        w = np.asarray(weight, dtype=np.float64).ravel()
        if not (act.shape == res.shape == w.shape):
            raise ValueError("activity, resource and weight must have the same length")
        if act.size and (act.min() < 0 or act.max() >= n_activities):
            raise ValueError("activity index out of range")
        if res.size and (res.min() < 0 or res.max() >= n_resources):
            raise ValueError("resource index out of range")
        if w.size and w.min() < 0:
            raise ValueError("weights must be >= 0")
        return cls(act, res, w, int(n_activities), int(n_resources))

    @classmethod
    def from_dense(cls, matrix: ArrayLike) -> Usage:
        """One element per non-zero entry of an (activities x resources) matrix."""
        m = np.asarray(matrix, dtype=np.float64)
        act, res = np.nonzero(m)
        return cls.from_elements(act, res, m[act, res], m.shape[0], m.shape[1])


@dataclass(frozen=True, slots=True)
class SolveInfo:
    """How a solve ended: `rounds` literal rounds, `converged` False if cut (see module doc)."""

    rounds: int
    converged: bool
    literal: int = 0  # rounds actually iterated (the others were skipped in closed form)


def fair_bottleneck(
    usage: Usage,
    capacity: ArrayLike,
    fatpipe: ArrayLike,
    bound: ArrayLike | None = None,
    enabled: ArrayLike | None = None,
) -> FloatArray:
    """Rates of the activities (variable values) as SimGrid's fair-bottleneck solver gives them.

    `bound[a]` <= 0 or inf means no bound (SimGrid applies a bound only when it is > 0);
    disabled activities get 0; enabled activities without any non-zero weight get 1.
    """
    return fair_bottleneck_info(usage, capacity, fatpipe, bound, enabled)[0]


def fair_bottleneck_info(
    usage: Usage,
    capacity: ArrayLike,
    fatpipe: ArrayLike,
    bound: ArrayLike | None = None,
    enabled: ArrayLike | None = None,
) -> tuple[FloatArray, SolveInfo]:
    """`fair_bottleneck` plus how the rounds ended."""
    n_var, n_cnst = usage.n_activities, usage.n_resources
    cap = np.broadcast_to(np.asarray(capacity, dtype=np.float64), (n_cnst,))
    fat = np.broadcast_to(np.asarray(fatpipe, dtype=bool), (n_cnst,))
    if bound is None:
        bnd = np.full(n_var, np.inf)
    else:
        bnd = np.broadcast_to(np.asarray(bound, dtype=np.float64), (n_var,))
    if enabled is None:
        on = np.ones(n_var, dtype=bool)
    else:
        on = np.broadcast_to(np.asarray(enabled, dtype=bool), (n_var,))
    return _solve(usage, cap, fat, bnd, on)


def _solve(
    usage: Usage, cap: FloatArray, fat: BoolArray, bnd: FloatArray, on: BoolArray
) -> tuple[FloatArray, SolveInfo]:
    # Extreme but accepted numbers overflow on purpose (an infinite share, see `_rounds`);
    # no floating-point warning is meaningful to a user.
    with np.errstate(all="ignore"):
        return _rounds(usage, cap, fat, bnd, on)


def _rounds(
    usage: Usage, cap: FloatArray, fat: BoolArray, bnd: FloatArray, on: BoolArray
) -> tuple[FloatArray, SolveInfo]:
    n_var, n_cnst = usage.n_activities, usage.n_resources
    x = np.zeros(n_var)
    # Only the elements of enabled variables are in a constraint's enabled-element list.
    keep = on[usage.activity]
    e_var, e_cnst, e_w = usage.activity[keep], usage.resource[keep], usage.weight[keep]

    loads = np.zeros(n_var, dtype=bool)
    loads[e_var[e_w != 0.0]] = True
    active = on & loads
    x[on & ~loads] = 1.0  # enabled but loading nothing: SimGrid gives it 1 and skips it
    if not active.any():
        return x, SolveInfo(0, True, 0)

    has_bound = (bnd > 0.0) & np.isfinite(bnd)
    # SimGrid's "no bound" is -1, which no value ever equals; inf would equal a diverged value.
    literal_bound = np.where(np.isinf(bnd), -1.0, bnd)
    remaining = cap.astype(np.float64, copy=True)
    # An infinite capacity (cores x speed beyond the floats) never saturates: it stays inf
    # instead of becoming inf - inf = nan.
    boundless = np.isinf(remaining)
    in_list = np.ones(n_cnst, dtype=bool)
    positive = e_w > 0.0
    # Increments are never reset: a variable that left the active set keeps its last one
    # and SHARED constraints keep subtracting it (stale increments, §3.3 quirk a).
    mu = np.zeros(n_var)
    prev_mu = np.zeros(n_var)
    diverged = np.zeros(n_var, dtype=bool)
    drop = np.zeros(n_cnst)  # last round's decrement of each remaining capacity
    rounds = 0
    literal = 0
    while True:
        rounds += 1
        literal += 1
        if literal > MAX_ROUNDS:
            raise SimulationError(
                f"the fair-bottleneck sharing did not settle after {MAX_ROUNDS} rounds "
                f"({usage.n_activities} activities on {usage.n_resources} resources); SimGrid "
                "would loop here too: please report the inputs")
        # (a) equal share of each remaining constraint among its active sharers (1 if FATPIPE).
        sharer = positive & active[e_var]
        nb = np.bincount(e_cnst[sharer], minlength=n_cnst).astype(np.float64)
        np.minimum(nb, 1.0, out=nb, where=fat)
        emptied = in_list & (nb == 0.0)
        if emptied.any():
            remaining[emptied] = 0.0
            in_list &= ~emptied
            kept = in_list[e_cnst]
            e_var, e_cnst, e_w = e_var[kept], e_cnst[kept], e_w[kept]
            positive, sharer = positive[kept], sharer[kept]
        share = np.zeros(n_cnst)
        np.divide(remaining, nb, out=share, where=in_list)

        # (b) each active variable grows by its smallest share per unit of weight, capped by
        # what is left below its bound; reaching the bound exactly takes it out.
        inc = np.full(n_var, np.inf)
        np.minimum.at(inc, e_var[sharer], share[e_cnst[sharer]] / e_w[sharer])
        act_idx = np.flatnonzero(active)
        step = inc[act_idx]
        capped = has_bound[act_idx]
        step[capped] = np.minimum(step[capped], bnd[act_idx[capped]] - x[act_idx[capped]])
        prev_mu[act_idx] = mu[act_idx]
        mu[act_idx] = step
        before = x[act_idx]
        x[act_idx] = before + step
        moved = bool(np.any(x[act_idx] != before))
        hit = act_idx[x[act_idx] == literal_bound[act_idx]]
        active[hit] = False
        # An infinite increment (every resource it loads offers an infinite share per unit
        # of weight: infinite capacities, or weights so small that the quotient overflows)
        # is outside SimGrid's defined answers: the activity is done within the step (inf,
        # see the module doc) and consumes nothing from then on (its work takes no time).
        endless = act_idx[np.isinf(step)]
        if endless.size:
            x[endless] = np.inf
            mu[endless] = 0.0
            active[endless] = False
            diverged[endless] = True

        # (c) remaining capacities. SHARED: subtract w*mu of every element, active or not, one
        # by one (bincount accumulates in array order, so rounding is that of a sequential
        # loop). FATPIPE: subtract only min(share, smallest w*mu over its elements).
        incr = e_w * mu[e_var]
        on_fat = fat[e_cnst]
        listed = np.flatnonzero(in_list)
        idx = np.concatenate((listed, e_cnst[~on_fat]))
        val = np.concatenate((remaining[listed], -incr[~on_fat]))
        new_rem = np.bincount(idx, weights=val, minlength=n_cnst)
        fat_listed = in_list & fat
        if fat_listed.any():
            smallest = share.copy()
            np.minimum.at(smallest, e_cnst[on_fat], incr[on_fat])
            new_rem[fat_listed] = remaining[fat_listed] - smallest[fat_listed]
        new_rem[new_rem < WORKAMOUNT_PRECISION] = 0.0
        new_rem[boundless] = np.inf
        last_drop = drop
        drop = np.zeros(n_cnst)
        drop[listed] = remaining[listed] - new_rem[listed]
        drop[boundless] = 0.0
        drained = bool(np.any(drop[listed] != 0.0))
        remaining[listed] = new_rem[listed]
        saturated = in_list & (remaining <= 0.0)
        if saturated.any():
            in_list &= ~saturated
            sat_elem = saturated[e_cnst] & positive
            active[e_var[sat_elem]] = False
            kept = in_list[e_cnst]
            e_var, e_cnst, e_w, positive = e_var[kept], e_cnst[kept], e_w[kept], positive[kept]

        if not (active & ~diverged).any():
            return x, SolveInfo(rounds, not diverged.any() and rounds <= SPIN_ROUNDS, literal)
        if hit.size or endless.size or saturated.any() or emptied.any():
            continue
        if drained:
            if np.array_equal(drop[listed], last_drop[listed]):
                rounds += _drain(x, mu, prev_mu, remaining, drop, in_list, fat,
                                 active & ~diverged, e_var, e_cnst, e_w, positive, has_bound,
                                 bnd, nb)
            continue
        # Nothing changed but the values: the next rounds repeat this one exactly.
        if not moved:
            return x, SolveInfo(rounds, False, literal)
        _repeat(x, mu, active, has_bound, bnd, diverged)


def _drain(
    x: FloatArray,
    mu: FloatArray,
    prev_mu: FloatArray,
    remaining: FloatArray,
    drop: FloatArray,
    in_list: BoolArray,
    fat: BoolArray,
    moving: BoolArray,
    e_var: IntArray,
    e_cnst: IntArray,
    e_w: FloatArray,
    positive: BoolArray,
    has_bound: BoolArray,
    bnd: FloatArray,
    nb: FloatArray,
) -> int:
    """Jump over a run of rounds that only drain constraints by constant amounts; return it.

    The FATPIPE rule subtracts only the smallest increment on the constraint, often a stale
    one: then its remaining capacity R falls by the same d every round (d may be a few ulps
    of R, or 0) while each variable bound there gains R/w per round, for up to R/d rounds:
    thousands with a small stale increment on a fast link (SimGrid grinds through them),
    1e15 and more when d is a rounding residue (SimGrid never returns). When every constraint
    lost the same d in the last two rounds, the next J rounds are known in closed form: R - j*d
    and increments min over the variable's constraints of (R - j*d)/(n w) (n = 1 on a
    FATPIPE, the number of active sharers on a SHARED constraint). J stops two rounds short of
    the first saturation and is halved until, over the jump, each variable keeps the same
    binding constraint, no active increment undercuts a FATPIPE's stale minimum, and no bounded
    variable reaches its bound (all linear in j, so checking both ends suffices). SHARED
    constraints under moving variables must not drain at all: their increments only shrink,
    so a subtraction that leaves R unchanged keeps leaving it unchanged. The literal rounds
    then finish. Rounding differs from SimGrid's sequential sums by about J ulps, far below
    the tolerance on dates.
    """
    act = np.flatnonzero(moving)
    if act.size == 0:
        return 0
    sharer = positive & moving[e_var]
    var, cnst, w = e_var[sharer], e_cnst[sharer], e_w[sharer]
    on_fat = fat[cnst]
    if np.any(drop[cnst[~on_fat]] != 0.0):
        return 0
    draining = np.flatnonzero(in_list & (drop > 0.0))
    if draining.size == 0:
        return 0
    d = drop[draining]
    jump = float(np.min(np.floor((remaining[draining] - WORKAMOUNT_PRECISION) / d))) - 2.0
    share = remaining[cnst] / nb[cnst]  # (nb is 1 on a FATPIPE: the division is exact)
    start = share / w
    start_min = np.full(x.size, np.inf)
    np.minimum.at(start_min, var, start)
    binding = np.flatnonzero(start == start_min[var])
    binding = binding[np.unique(var[binding], return_index=True)[1]]  # one per variable
    bv, bc, bw = var[binding], cnst[binding], w[binding]
    r0, dc = share[binding], drop[bc] / nb[bc]
    capped = has_bound[bv]
    while jump >= 2.0:
        last = jump - 1.0
        end = (remaining[cnst] - last * drop[cnst]) / nb[cnst] / w
        end_min = np.full(x.size, np.inf)
        np.minimum.at(end_min, var, end)
        gain = (jump * r0 - dc * (jump * (jump - 1.0) / 2.0)) / bw
        if not (np.any(end[binding] > end_min[bv])
                or np.any(on_fat & (w * end_min[var] < drop[cnst]))
                or np.any(x[bv[capped]] + gain[capped] + 2.0 * start_min[bv[capped]]
                          >= bnd[bv[capped]])):
            break
        jump = np.floor(jump / 2.0)
    if jump < 2.0:
        return 0
    last = jump - 1.0
    x[bv] += gain
    prev_mu[bv] = (r0 - (last - 1.0) * dc) / bw
    mu[bv] = (r0 - last * dc) / bw
    listed = np.flatnonzero(in_list)
    remaining[listed] -= jump * drop[listed]
    return int(jump)


def _repeat(
    x: FloatArray,
    mu: FloatArray,
    active: BoolArray,
    has_bound: BoolArray,
    bnd: FloatArray,
    diverged: BoolArray,
) -> None:
    """Jump over rounds that repeat identically (no remaining capacity changes).

    Every active variable then gains the same increment each round: one without a bound grows
    forever (SimGrid never leaves its loop; its limit is inf), one with a bound reaches it
    after a computable number of rounds, which we skip at once.
    """
    moving = active & ~diverged & (mu > 0.0)
    grow = moving & ~has_bound
    x[grow] = np.inf
    diverged |= grow
    capped = np.flatnonzero(moving & has_bound)
    if capped.size:
        skip = np.floor((bnd[capped] - x[capped]) / mu[capped]) - 1.0
        k = float(skip.min())
        if k >= 1.0:
            x[capped] += k * mu[capped]
