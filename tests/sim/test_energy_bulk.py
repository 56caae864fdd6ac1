"""Host energy read for many hosts at once (HostEnergy.total's numpy path, taken from 16 hosts
on: every energy trace row reads all machines) against hand-computed joules and against the
same reads host by host (`consumed`), which must give the same bits."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from batsim_py.sim.energy import HostEnergy

N = 20  # more than the bulk path's threshold


class FakeEngine:
    """The clock and per-host CPU loads (flop/s) HostEnergy reads."""

    def __init__(self, loads: dict[int, float]) -> None:
        self.now = 0.0
        self.loads = loads

    def cpu_load(self, host: int) -> float:
        return self.loads.get(host, 0.0)

    def cpu_loads(self) -> dict[int, float]:
        return dict(self.loads)


def _energy(loads: dict[int, float]) -> HostEnergy:
    names = [f"h{i}" for i in range(N)]
    # pstate 0: 1 Gflop/s, Idle 100 W, Epsilon 120 W, AllCores 200 W; pstate 1: speed 0 (a
    # sleep state: counted fully loaded), 5:5:7 W. Hosts 4 and 5 have 2 cores.
    hosts = [SimpleNamespace(name=n, properties={"wattage_per_state": "100:120:200, 5:5:7"},
                             speeds=(1e9, 0.0), cores=2 if i in (4, 5) else 1)
             for i, n in enumerate(names)]
    network = SimpleNamespace(
        host_names=names, host_index={n: i for i, n in enumerate(names)}, pstate=[0] * N,
        platform=SimpleNamespace(path="p.xml", hosts={h.name: h for h in hosts}))
    return HostEnergy(FakeEngine(loads), network, hosts)


def test_bulk_read_by_hand() -> None:
    # host 3: 0.5 Gflop/s on 1 core -> load 0.5 -> 120 + 0.5 x 80 = 160 W; host 4: 4 Gflop/s
    # on 2 cores -> load 2, capped to 1 -> 200 W; host 5: 1 Gflop/s on 2 cores -> 160 W;
    # the others idle at 100 W.
    energy = _energy({3: 0.5e9, 4: 4e9, 5: 1e9})
    energy.engine.now = 10.0
    hosts = tuple(range(N))
    assert energy.total(hosts) == np.longdouble(17 * 1000 + 1600 + 2000 + 1600)
    # Host 7 goes to the sleep pstate (speed 0: fully loaded, 5 + 1 x (7 - 5) = 7 W); the
    # pstate counts from the next update on, as in SimGrid's plugin.
    energy.network.pstate[7] = 1
    energy.engine.now = 12.0
    assert energy.total(hosts) == np.longdouble(17 * 1200 + 1920 + 2400 + 1920)
    energy.engine.now = 13.0
    assert energy.consumed(7) == 1200.0 + 7.0
    assert float(energy.total(hosts)) == 17 * 1300 + 2080 + 2600 + 2080 - 100 + 7


def test_bulk_read_equals_host_by_host() -> None:
    """Awkward dates, loads and pstates: the numpy path and `consumed` give the same bits."""
    rng = np.random.default_rng(7)
    loads = {h: float(rng.uniform(0, 2.5e9)) for h in range(0, N, 3)}
    bulk, single = _energy(loads), _energy(loads)
    now = 0.0
    for step in range(50):
        now += float(rng.uniform(0, 1000)) / 3
        for e in (bulk, single):
            e.engine.now = now
        if step % 7 == 3:  # a pstate change updates the host first, as SimGrid does
            h = int(rng.integers(N))
            for e in (bulk, single):
                e.update(h)
                e.network.pstate[h] = 1 - e.network.pstate[h]
        expected = np.longdouble(0)
        for h in range(N):
            expected += np.longdouble(single.consumed(h))
        assert bulk.total(tuple(range(N))) == expected
    assert bulk.energy.tolist() == single.energy.tolist()
    assert bulk.saved_pstate.tolist() == single.saved_pstate.tolist()
