"""Speed of Batsim 5 EDCs (batprotocol) against the Batsim-4-protocol in-process schedulers.

On the f_50k reference workload (cluster512 platform, --mmax-workload, as bench_delay_easy.py),
each variant in a fresh process, variants alternated, median wall time per variant:
- `easy`: the in-process EASY scheduler (Batsim 4 protocol, no serialisation);
- `edc-easy-json`: batsim_py.edcs.easy as an in-process Python EDC, JSON messages;
- `edc-easy-binary`: the same EDC speaking binary flatbuffers;
- `edc-easy-objects`: the same EDC exchanging Python dicts (batsim-py's flag 0x4: no
  serialisation, the schema's checks kept);
- `fcfs`: the in-process FCFS scheduler (Batsim 4 protocol);
- `edc-c-fcfs`: examples/edc/fcfs_edc.c compiled with cc, a C library EDC (JSON);
- `edc-py-fcfs`: batsim_py.edcs.fcfs, the same policy as a Python EDC (JSON).
Ratios: each EDC against the in-process scheduler of its policy.

    python benchmarks/bench_edc.py [--cases f_50k] [--repeat 3] [--variants ...]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import reference

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this tree's batsim_py, not an installed one

CASES = {"f_10k": "f_10k_easy_cluster128_quiet", "f_50k": "f_50k_easy_cluster128_quiet"}
VARIANTS = ["easy", "edc-easy-json", "edc-easy-binary", "edc-easy-objects", "fcfs",
            "edc-c-fcfs", "edc-py-fcfs"]
BASELINE = {"edc-easy-json": "easy", "edc-easy-binary": "easy", "edc-easy-objects": "easy",
            "edc-c-fcfs": "fcfs", "edc-py-fcfs": "fcfs"}


def one_run(variant: str, platform: str, workload: str, library: str) -> dict:
    from batsim_py.decision.edc_peer import EdcPeer, EdcSettings
    from batsim_py.decision.edc_transports import LibraryEdc, PythonEdc
    from batsim_py.decision.inprocess import InProcess
    from batsim_py.run import RunSpec, run_simulation
    from batsim_py.schedulers import get_scheduler
    from batsim_py.sim.options import Options

    if variant in ("easy", "fcfs"):
        decision = InProcess(get_scheduler(variant))
    elif variant == "edc-c-fcfs":
        decision = EdcPeer(LibraryEdc(library), EdcSettings(init_data=b"{}"))
    else:
        module = "batsim_py.edcs.easy" if "easy" in variant else "batsim_py.edcs.fcfs"
        init = (b'{"format_binary": true}' if variant.endswith("binary") else
                b'{"format_objects": true}' if variant.endswith("objects") else b"{}")
        decision = EdcPeer(PythonEdc(module), EdcSettings(init_data=init))
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        sim = run_simulation(
            RunSpec(platform=platform, workloads=[workload],
                    options=Options(export_prefix=os.path.join(out, "out")),
                    mmax_workload=True), decision)
        wall = time.perf_counter() - t0
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"wall": wall, "jobs": len(sim.job_records), "peak_mib": peak_kib / 1024,
            "exchanges": getattr(decision, "nb_exchanges", None)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="*", default=["f_50k"])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--variants", nargs="*", default=VARIANTS)
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(one_run(*args.child)))
        return 0
    from batsim_py.native import kernel_label

    print(kernel_label())
    library = ""
    if "edc-c-fcfs" in args.variants:
        cc = shutil.which("cc")
        if cc is None:
            print("no C compiler: edc-c-fcfs skipped")
            args.variants.remove("edc-c-fcfs")
        else:
            library = str(Path(tempfile.mkdtemp()) / "libfcfs_edc.so")
            subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", library,
                            str(ROOT / "examples" / "edc" / "fcfs_edc.c")], check=True)
    corpus = reference()
    for key in args.cases:
        folder = corpus / CASES[key]
        spec = json.loads((folder / "case.json").read_text())
        platform = str(folder / spec["platform"])
        workload = str(folder / spec["workloads"][0])
        walls: dict[str, list[float]] = {v: [] for v in args.variants}
        info: dict[str, dict] = {}
        for _ in range(args.repeat):
            for variant in args.variants:  # alternated: load changes hit every variant
                out = subprocess.run([sys.executable, __file__, "--child", variant, platform,
                                      workload, library or "-"],
                                     check=True, capture_output=True, text=True, cwd=ROOT)
                result = json.loads(out.stdout.strip().splitlines()[-1])
                walls[variant].append(result["wall"])
                info[variant] = result
        print(f"\n{key}: median of {args.repeat} alternated runs")
        print(f"{'variant':16} {'jobs':>7} {'exchanges':>9} {'median (s)':>10} "
              f"{'best (s)':>9} {'peak MiB':>9} {'x in-process':>12}")
        medians = {v: sorted(w)[len(w) // 2] for v, w in walls.items()}
        for variant in args.variants:
            base = BASELINE.get(variant)
            ratio = (f"{medians[variant] / medians[base]:.2f}" if base in medians else "")
            r = info[variant]
            print(f"{variant:16} {r['jobs']:>7} {r['exchanges'] or '':>9} "
                  f"{medians[variant]:>10.2f} {min(walls[variant]):>9.2f} "
                  f"{r['peak_mib']:>9.1f} {ratio:>12}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
