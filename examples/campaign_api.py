"""A campaign from Python: the grid as a dict, the metrics table as a DataFrame.

Run: python examples/campaign_api.py [OUTPUT_FOLDER]   (docs/campaigns.md)

The `if __name__ == "__main__":` guard is needed: the local Dask cluster starts its worker
processes by re-importing this script (Python's multiprocessing "spawn").
"""

import sys

import batsim_py.campaign

CAMPAIGN = {
    "name": "api",
    "platforms": ["small4"],
    "workloads": [{"generate": {"nb_jobs": 30, "nb_res": 4, "max_runtime": 600}}],
    "schedulers": ["fcfs", "easy"],
    "seeds": [1, 2, 3],
}

if __name__ == "__main__":
    output = sys.argv[1] if len(sys.argv) > 1 else "outputs/campaign-api"
    table = batsim_py.campaign.run(CAMPAIGN, output=output, workers=2)
    print(table.groupby("scheduler")[["waiting_mean", "bsld_mean"]].mean().round(2))
