"""Workload inputs: Batsim JSON reading and validation, SWF conversion, generation.

`load_workload(path, name)` is the entry point the simulator uses; the records are in
`batsim_py.workload.model`.
"""

from batsim_py.workload.reader import load_workload

__all__ = ["load_workload"]
