"""A one-task system for the kernel tests: three executors crowded on a 2-core host with a
transfer between two of them on a FATPIPE loopback (several literal solver rounds)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from batsim_py.sharing.ptask import PtaskRow, ptask_row


def one_crowded_task() -> tuple[PtaskRow, SimpleNamespace]:
    fat = np.array([True])
    row = ptask_row([0, 0, 0], [2e8, 1e8, 5e7], [[0, 1e6, 0], [0, 0, 0], [0, 0, 0]],
                    {(0, 0): [(0, 0.0)]}, fat, [1e9])
    network = SimpleNamespace(n_hosts=1, link_names=["loopback"],
                              capacity=np.array([2e9, 1e10]),
                              fatpipe=np.array([False, True]))
    return row, network
