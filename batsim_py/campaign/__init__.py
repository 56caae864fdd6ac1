"""Campaigns: many simulations on Dask, from a laptop to a Slurm or OAR cluster.

    import batsim_py.campaign

    table = batsim_py.campaign.run("examples/campaign.yaml", output="outputs/campaign")
    table.groupby("scheduler")["waiting_mean"].mean()

A campaign file (YAML or JSON: `spec.py`) is a grid of factors; each run has a stable id (a
hash of its resolved configuration). Runs execute in-process, batched, on a
`dask.distributed` cluster (`execute.py`: a LocalCluster by default, an existing scheduler, or
any client, e.g. dask-jobqueue's); their outputs and a completion marker land in one folder per
run (`store.py`), so an interrupted campaign resumes where it stopped. The metrics table
(Parquet and CSV) has one row per run. `batsim-py campaign FILE -o DIR` is the command line
(`cli.py`); docs/campaigns.md the user's guide.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from batsim_py.campaign.execute import CampaignIncomplete
from batsim_py.campaign.lock import CampaignBusy
from batsim_py.campaign.spec import CampaignError, CampaignSpec, RunConfig, load_spec

__all__ = ["CampaignBusy", "CampaignError", "CampaignIncomplete", "CampaignSpec", "RunConfig",
           "load_spec", "run"]


def run(spec: str | os.PathLike[str] | Mapping[str, Any] | CampaignSpec, client: Any = None,
        *, output: str | None = None, scheduler_address: str | None = None,
        workers: int | None = None, batch_size: int | None = None,
        retry_failed: bool = False, progress: bool = False,
        run_time_limit: float | None = None) -> Any:
    """Run a campaign (a file, a mapping with the file's keys, or a loaded `CampaignSpec`);
    its metrics table as a pandas DataFrame, one row per run.

    `client`: a `distributed.Client` to run on (default: a LocalCluster sized to the machine,
    or the scheduler at `scheduler_address`). `output`: the campaign folder (default
    `outputs/campaign-NAME`); runs already complete there are not run again.
    `run_time_limit`: seconds of wall time per run (default: the file's), after which a run is
    stopped and recorded as timed out. Another campaign process on the same folder raises
    `CampaignBusy`."""
    from batsim_py.campaign.execute import run_campaign

    if not isinstance(spec, CampaignSpec):
        spec = load_spec(spec)
    root = output or os.path.join("outputs", f"campaign-{spec.name}")
    return run_campaign(spec, root, client=client, scheduler_address=scheduler_address,
                        workers=workers, batch_size=batch_size, retry_failed=retry_failed,
                        progress=progress, run_time_limit=run_time_limit)
