"""Write a scheduler for Batsim's legacy text protocol the way a 2016 user did.

Subclass `LegacyScheduler`, react to `on_job_submission` / `on_job_completion` (and the other
`on_*` hooks) by calling `start_jobs`, `reject_job`, `wake_me_up_at`, `change_pstates` or
`request_consumed_energy`, and hand it to `run_scheduler`. The library speaks the protocol
itself (framing, stamps, the reply of dated events: `network.py`) and knows jobs from the
workload file (versions 0-3) or from Redis (versions 2-3, `--redis-port`), as the schedulers
of that time did. `fcfs.py` and `easy.py` are complete examples, runnable with
`python -m batsim_py.legacy_client.fcfs --help`. docs/legacy-protocol.md is the guide.
"""

from batsim_py.legacy_client.network import Job, LegacyScheduler, run_scheduler

__all__ = ["Job", "LegacyScheduler", "run_scheduler"]
