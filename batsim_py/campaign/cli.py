"""`batsim-py campaign FILE -o DIR`: run a campaign file on Dask, resumably.

Exit codes: 0 when every run is recorded (failed runs included: they are results, counted in
the summary line), 1 on an error (bad campaign file, unreachable scheduler, tasks Dask could
not run: rerun to resume), 2 on a usage error, 130/143 when interrupted by SIGINT/SIGTERM
(the runs finished so far are kept and the table is written: rerun to resume).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence
from typing import Any

from batsim_py.errors import BatsimPyError

EXIT_ERROR = 1
EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="batsim-py campaign",
        description="Run every run of a campaign file (a grid of platforms, workloads, "
        "schedulers, timing, energy, seeds, replications) in-process on a dask.distributed "
        "cluster: a LocalCluster sized to this machine by default. Finished runs are recorded "
        "as they end: rerun the same command to resume an interrupted campaign.",
        epilog="example: batsim-py campaign examples/campaign.yaml -o outputs/campaign "
        "(docs/campaigns.md)",
    )
    parser.add_argument("file", metavar="FILE", help="campaign file (YAML or JSON)")
    parser.add_argument("-o", "--output", metavar="DIR", help="campaign folder: per-run "
                        "outputs, metrics.parquet, metrics.csv, report.html (default "
                        "outputs/campaign-NAME)")
    parser.add_argument("--scheduler-address", metavar="ADDRESS",
                        help="use the Dask scheduler at ADDRESS (tcp://host:8786) instead of "
                        "a local cluster; its workers must see DIR")
    parser.add_argument("--workers", type=int, metavar="N", help="local cluster: N worker "
                        "processes (default: one per core)")
    parser.add_argument("--batch-size", type=int, metavar="N", help="runs per Dask task "
                        "(default: about 4 tasks per worker, at most 50 runs)")
    parser.add_argument("--retry-failed", action="store_true", help="run again the runs "
                        "recorded as failed or timed out (by default they are results and "
                        "kept)")
    parser.add_argument("--run-time-limit", type=float, metavar="SECONDS", help="stop a run "
                        "after SECONDS of wall time and record it as timed out (its partial "
                        "outputs removed); each run then goes to a process of its own "
                        "(default: the file's run_time_limit, else no limit)")
    parser.add_argument("--no-report", action="store_true",
                        help="do not write DIR/report.html")
    parser.add_argument("--list", action="store_true", help="print the runs (id, factors, "
                        "status) and exit without running anything")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress display")
    return parser


_STOP: list[int] = []


def _interrupt(signum: int, frame: Any) -> None:
    """The first SIGINT/SIGTERM stops the campaign (the table is still written); later ones
    are ignored so that nothing interrupts the clean-up."""
    if _STOP:
        return
    _STOP.append(signum)
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:
        return 0 if exc.code == 0 else EXIT_USAGE
    _STOP.clear()
    previous = {sig: signal.signal(sig, _interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}
    root = None
    try:
        from batsim_py.campaign import store
        from batsim_py.campaign.spec import load_spec

        spec = load_spec(args.file)
        root = args.output or os.path.join("outputs", f"campaign-{spec.name}")
        if args.list:
            _list(spec, root)
            return 0
        from batsim_py.campaign.execute import run_campaign

        frame = run_campaign(spec, root, scheduler_address=args.scheduler_address,
                             workers=args.workers, batch_size=args.batch_size,
                             retry_failed=args.retry_failed, progress=not args.quiet,
                             run_time_limit=args.run_time_limit)
        written = [os.path.join(root, "metrics.parquet"), os.path.join(root, "metrics.csv")]
        if not args.no_report:
            from batsim_py.campaign.report import write_campaign_report

            written.append(write_campaign_report(frame, root, spec.name))
        counts = frame["status"].value_counts()
        timed_out = counts.get(store.STATUS_TIMEOUT, 0)
        print(f"campaign {spec.name}: {len(frame)} runs, {counts.get(store.STATUS_OK, 0)} ok, "
              f"{counts.get(store.STATUS_FAILED, 0)} failed"
              f"{f', {timed_out} timed out' if timed_out else ''}; written: "
              f"{', '.join(written)}")
        return 0
    except BatsimPyError as exc:
        print(f"batsim-py: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:  # `--list | head`: batsim-py's main() ends quietly
        raise
    except OSError as exc:  # the campaign folder (a full disk, no permission)
        print(f"batsim-py: error: campaign folder {root}: {exc.strerror or exc} "
              f"({getattr(exc, 'filename', None) or ''}); free space or choose another -o",
              file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        name, code = ("SIGTERM", 143) if _STOP == [signal.SIGTERM] else ("SIGINT", 130)
        where = f" in {root}" if root else ""
        print(f"batsim-py: campaign interrupted by {name}: the finished runs are recorded"
              f"{where}; rerun the same command to resume", file=sys.stderr)
        return code
    except Exception as exc:  # a bug in batsim-py: one line all the same
        from batsim_py.text import printable

        print(f"batsim-py: internal error: {type(exc).__name__}: {printable(str(exc))} "
              "(please report it)", file=sys.stderr)
        return EXIT_ERROR
    finally:
        if not _STOP:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def _list(spec: Any, root: str) -> None:
    from batsim_py.campaign import store

    for r in spec.runs:
        record = store.read_marker(root, r.run_id)
        status = store.STATUS_PENDING if record is None else record["status"]
        factors = " ".join(f"{k}={v}" for k, v in r.factors().items()
                           if v not in (None, "", False) or k == "energy")
        print(f"{r.run_id}  {status:<7}  {factors}")
    if spec.dropped_duplicates:
        print(f"({spec.dropped_duplicates} duplicate(s) of these runs dropped: seeds and "
              "replications only apply to generated workloads)")


if __name__ == "__main__":
    sys.exit(main())
