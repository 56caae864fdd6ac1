"""Multi-cluster grids: one OAR-like resource manager per cluster, CiGri on top (seed 003).

`run.run_grid` simulates a grid description (`inputs.py`); `oar.py` is one cluster's OAR,
`rjms.py` all of them as the run's decision process, `cigri.py` CiGri 3's modules as SimPy
processes, `flow.py` the flow controls, `metrics.py` and `outputs.py` what a run yields,
`cli.py` `batsim-py cigri`. The user's guide is docs/cigri.md.
"""
