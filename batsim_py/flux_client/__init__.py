"""A Python client library for Flux-style schedulers driving batsim-py (RFC 27, seed 004).

`Scheduler` mirrors flux-core's Python scheduler API; `fifo` (sched-simple-like) and `easy`
(EASY backfilling with `t_estimate`) are shipped policies, runnable as processes:
`python -m batsim_py.flux_client fifo -s tcp://*:28000`. docs/flux.md is the guide.
"""

from batsim_py.flux_client.pool import InfeasibleRequest, InsufficientResources, ResourcePool
from batsim_py.flux_client.scheduler import (
    AllocRequest,
    ExpirationRefused,
    PendingJob,
    Scheduler,
    load_scheduler,
)

__all__ = ["AllocRequest", "ExpirationRefused", "InfeasibleRequest", "InsufficientResources",
           "PendingJob", "ResourcePool", "Scheduler", "load_scheduler"]
