"""The `batsim-py` command: Batsim 4's flags, plus `--scheduler` and `--timing`.

Every flag is declared once in `FLAGS`; the parser and `--help` come from that table. Errors of
any layer are printed on one line (no traceback) and give a non-zero exit code; outputs
simulated before an error are still written.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import logging
import math
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from batsim_py import __version__
from batsim_py.errors import BatsimPyError, NotSupportedError, UsageError
from batsim_py.output.report import OutputReport
from batsim_py.text import OneLineFormatter, printable

EXIT_ERROR = 1
DEFAULT_ENDPOINT = "tcp://localhost:28000"  # -s of the JSON mode
EXIT_USAGE = 2


@dataclass(frozen=True)
class Flag:
    names: tuple[str, ...]
    help: str
    kind: str = "flag"  # "flag" (store_true), "value", "list" (repeatable), "int"
    default: Any = None
    metavar: str | tuple[str, ...] | None = None
    supported: bool = True  # False: accepted by Batsim, refused here with a clear message


FLAGS: tuple[Flag, ...] = (
    Flag(("-p", "--platform"), "SimGrid platform XML file (required)", "value", None, "FILE"),
    Flag(("-w", "--workload"), "Batsim JSON workload; repeat for several (named w0, w1, ...)",
         "list", None, "FILE"),
    Flag(("-e", "--export"), "output prefix: files PREFIX_jobs.csv, ... (default outputs/out)",
         "value", "outputs/out", "PREFIX"),
    Flag(("--scheduler",), "run an in-process scheduler instead of connecting to -s "
         "(fcfs, easy, ...; see --list-schedulers), your own class as MODULE:CLASS or "
         "path/to/file.py:CLASS, pybatsim:NAME for a pybatsim 3.2.1 scheduler run in-process "
         "(options as JSON in --sched-cfg), or replay:FILE to answer with the replies "
         "recorded in a transcript", "value", None, "NAME"),
    Flag(("--process",), "user SimPy process: MODULE:FUNCTION or path/to/file.py:FUNCTION, "
         "called as FUNCTION(env, sim) before the run (docs/extending.md); repeatable",
         "list", None, "MODULE:FUNCTION"),
    Flag(("--list-schedulers",), "print the in-process schedulers and exit"),
    Flag(("--list-examples",), "print the shipped platforms, workloads and event files with "
         "their installed paths and exit (-p, -w and --events accept their names)"),
    Flag(("--replay-strict",), "with --scheduler replay:FILE, stop at the first message that "
         "differs from the recorded Batsim message"),
    Flag(("--record-transcript",), "write every protocol message of the run to FILE (JSON lines)",
         "value", None, "FILE"),
    Flag(("--scheduler-timeout",), "seconds to wait for each reply of an external scheduler "
         "(default 600; inf: forever)", "float", None, "SECONDS"),
    Flag(("--scheduler-connect-timeout",), "seconds to wait for an external scheduler to "
         "accept the connection at -s (default 30; inf: forever)", "float", None, "SECONDS"),
    Flag(("--scheduler-command",), "start the external scheduler: COMMAND (split like a shell "
         "line, run without a shell) must bind the -s endpoint; batsim-py stops at once if it "
         "exits early, and stops it at the end", "value", None, "COMMAND"),
    Flag(("--timing",), "batsim: reproduce Batsim's internal message delays (default); "
         "ideal: decisions and completions take effect at their own times",
         "value", "batsim", "MODE"),
    Flag(("-m", "--master-host"), "name of the master host (default master_host)", "value",
         "master_host", "NAME"),
    Flag(("-r", "--add-role-to-hosts"), "HOSTS:ROLE, HOSTS comma-separated; repeatable",
         "list", None, "HOSTS:ROLE"),
    Flag(("--mmax",), "use only the first N compute machines (0: all)", "int", 0, "N"),
    Flag(("--mmax-workload",), "use only as many compute machines as the largest nb_res of "
         "the workloads"),
    Flag(("-s", "--socket-endpoint"), "ZeroMQ endpoint of the external scheduler, used when "
         "no --scheduler is given (default tcp://localhost:28000; with --legacy-protocol: "
         "unix:PATH, default unix:/tmp/bat_socket, or zmq:ENDPOINT)", "value",
         DEFAULT_ENDPOINT, "ENDPOINT"),
    Flag(("--legacy-protocol",), "speak Batsim's 2015-2017 text protocol, version 0-3, with "
         "the scheduler at -s (docs/legacy-protocol.md)", "int", None, "VERSION"),
    Flag(("--legacy-honor-msg-time",), "legacy protocol: the scheduler is ready at its reply's "
         "header time if later than its last event (Batsim ignored that time)"),
    Flag(("--legacy-failure-stamps",), "legacy protocol 3: send F/f when machines become "
         "unavailable/available (--events) and kill the jobs running on failed machines (their "
         "C precedes the F); never sent by Batsim, pybatsim 2016 crashes on them"),
    Flag(("--enable-compute-sharing",), "allow several jobs on one compute machine"),
    Flag(("--disable-storage-sharing",), "forbid several jobs on one storage machine"),
    Flag(("--forward-profiles-on-submission",), "add the profile to JOB_SUBMITTED events"),
    Flag(("--disable-machine-state-tracing",), "do not write PREFIX_machine_states.csv"),
    Flag(("--disable-schedule-tracing",), "do not write the Pajé trace PREFIX_schedule.trace"),
    Flag(("--sched-cfg",), "string forwarded to the scheduler as config.sched-config; "
         "in-process schedulers read it as a JSON object of options", "value", None, "STR"),
    Flag(("--sched-cfg-file",), "file whose content is forwarded as config.sched-config",
         "value", None, "FILE"),
    Flag(("-v", "--verbosity"), "quiet, network-only, information (default) or debug",
         "value", "information", "LEVEL"),
    Flag(("-q", "--quiet"), "same as --verbosity quiet"),
    Flag(("--dump-execution-context",), "print the execution context as JSON and exit"),
    Flag(("--version",), "print the version, which kernel runs (compiled or pure Python) and "
         "which output writer (native C or pure Python), and exit"),
    Flag(("-E", "--energy"), "host energy model (SimGrid's plugin), energy outputs, pstates"),
    Flag(("--events",), "external events file (JSON lines: machine_(un)available, others with "
         "--forward-unknown-events); repeatable", "list", None, "FILE"),
    Flag(("-W", "--workflow"), "DAX workflow file, started at 0 (named wf0, wf1, ...); "
         "repeatable (docs/workflows.md)", "list", None, "FILE"),
    Flag(("--enable-dynamic-jobs",), "allow REGISTER_JOB / REGISTER_PROFILE; the simulation then "
         "ends only after NOTIFY registration_finished"),
    Flag(("--acknowledge-dynamic-jobs",), "answer REGISTER_JOB with JOB_SUBMITTED"),
    Flag(("--enable-profile-reuse",), "keep profiles of finished dynamic jobs (batsim-py never "
         "drops profiles; the flag sets config.profile-reuse-enabled)"),
    Flag(("--forward-unknown-events",), "forward unknown external events (ignored without "
         "--events, as in Batsim)"),
    Flag(("--enable-redis",), "job descriptions through the Redis server at "
         "--redis-hostname/--redis-port (JSON mode: as Batsim 4; --legacy-protocol 2-3: "
         "2016's job metadata)"),
    Flag(("--redis-server",), "auto: start a private redis-server on a free port (and stop it "
         "at the end); implies --enable-redis", "value", None, "auto"),
    Flag(("--redis-hostname",), "Redis host (only with --enable-redis)", "value", "127.0.0.1",
         "HOST"),
    Flag(("--redis-port",), "Redis port (only with --enable-redis)", "int", 6379, "PORT"),
    Flag(("--redis-prefix",), "Redis key prefix (only with --enable-redis; legacy protocol "
         "over a Unix socket: the socket's absolute path)", "value", "default", "PREFIX"),
    Flag(("--no-sched",), "batexec mode, no scheduler", supported=False),
    Flag(("--WS", "--workflow-start"), "DAX workflow FILE started at TIME seconds (named wfc0, "
         "wfc1, ...); several as FILE TIME FILE TIME ... (Batsim's form) or repeated", "pairs",
         None, "FILE TIME"),
    Flag(("--workflow-jobs-limit",), "max concurrent jobs per workflow", "int", 0, "N"),
    Flag(("--ignore-beyond-last-workflow",), "ignore job submissions once a workflow ended "
         "(Batsim's rule: while exactly one has ended)"),
    Flag(("--sg-cfg",), "SimGrid option NAME:VALUE; repeatable (batsim-py reads none)", "list",
         None, "NAME:VALUE", supported=False),
    Flag(("--sg-log",), "SimGrid logging option; repeatable (accepted and ignored)", "list",
         None, "OPTION"),
    Flag(("--simgrid-version",), "print which SimGrid models batsim-py reproduces and exit"),
    # Batsim 5's external decision components (batprotocol, docs/batprotocol.md); Batsim 5's
    # -s/--edc-socket-str keeps only its long name: -s is Batsim 4's socket endpoint here.
    Flag(("-l", "--edc-library-str"), "batprotocol EDC: a C library (.so) or a Python module "
         "(MODULE or path/to/edc.py), initialised with INIT_STRING", "two", None,
         ("LIB", "INIT_STRING")),
    Flag(("-L", "--edc-library-file"), "as --edc-library-str, the init data read from "
         "INIT_FILE", "two", None, ("LIB", "INIT_FILE")),
    Flag(("--edc-socket-str",), "batprotocol EDC process bound at ENDPOINT (ZeroMQ REP), "
         "initialised with INIT_STRING (Batsim 5's -s, long name only here)", "two", None,
         ("ENDPOINT", "INIT_STRING")),
    Flag(("-S", "--edc-socket-file"), "as --edc-socket-str, the init data read from "
         "INIT_FILE", "two", None, ("ENDPOINT", "INIT_FILE")),
    Flag(("--edc-library-load-method",), "dlopen (default) or dlmopen (a private link "
         "namespace per library EDC)", "value", "dlopen", "METHOD"),
    Flag(("--edc-allow-unknown-fields",), "drop (with a warning) the JSON fields the "
         "batprotocol schema does not define in an EDC's messages, instead of refusing them "
         "as Batsim 5 does"),
    Flag(("--output-layout",), "v4 (default): Batsim 4's output files; v5: Batsim 5's "
         "(PREFIX + jobs.csv, schedule.json, real_exec_info.json, no Pajé trace; default "
         "prefix out/)", "value", "v4", "LAYOUT"),
    Flag(("--lift-v5-restrictions",), "with an EDC: accept what Batsim 5.0 refuses because it "
         "is unfinished (periodic offsets, periods that do not divide each other)"),
    Flag(("--protocol",), "batsim (default): the Batsim 4 JSON protocol; flux: a Flux-style "
         "scheduler drives the run over Flux RFC 27 (docs/flux.md)", "value", "batsim",
         "NAME"),
    Flag(("--flux-scheduler",), "with --protocol flux: run a Flux client in-process (fifo, "
         "easy, MODULE:CLASS or path/to/file.py:CLASS) instead of connecting to -s",
         "value", None, "NAME"),
    Flag(("--flux-options",), "with --flux-scheduler: its options as a JSON object",
         "value", None, "JSON"),
    Flag(("--flux-granularity",), "with --protocol flux: node (default; a job's res is nodes, "
         "allocated whole) or core (res is cores; jobs share hosts)", "value", "node",
         "node|core"),
    Flag(("--flux-epoch",), "with --protocol flux: seconds added to every absolute time on "
         "the wire (default 0)", "float", 0.0, "SECONDS"),
    Flag(("--flux-tolerant",), "with --protocol flux: a scheduler fault suspends scheduling "
         "until a new hello (RFC 27) instead of stopping the run"),
    Flag(("--flux-eventlog",), "with --protocol flux: also write PREFIX_flux_eventlog.jsonl "
         "(RFC 18-style job events)"),
    Flag(("--flux-feasibility",), "with --protocol flux: check each job at submission with "
         "feasibility.check when the scheduler registered that service (flux-core's "
         "feasibility validator); a job it refuses is rejected"),
)


# `batsim-py NAME ...`: tools beside the simulator.
SUBCOMMANDS = {
    "compare": "batsim_py.output.compare",  # compare two runs' outputs
    "generate": "batsim_py.tools.genworkload",  # seeded synthetic delay workloads
    "swf2json": "batsim_py.tools.swf2json",  # Standard Workload Format -> Batsim JSON
    "report": "batsim_py.analysis.report",  # HTML page of metrics and plots of runs
    "stats": "batsim_py.analysis.stats",  # metrics of runs in the terminal
    "campaign": "batsim_py.campaign.cli",  # many runs on Dask, resumable (docs/campaigns.md)
    "cigri": "batsim_py.grid.cli",  # a grid of OAR clusters harvested by CiGri (docs/cigri.md)
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="batsim-py",
        description="Batsim-compatible HPC scheduling simulator. Subcommands: "
        "'batsim-py compare A B' compares two output prefixes or folders; "
        "'batsim-py generate OUT.json -n JOBS -r RES' writes a seeded delay workload; "
        "'batsim-py swf2json TRACE.swf OUT.json' converts an SWF trace; "
        "'batsim-py report PREFIX [PREFIX ...]' writes an HTML page of metrics and plots; "
        "'batsim-py stats PREFIX' prints the metrics; "
        "'batsim-py campaign FILE -o DIR' runs a campaign of simulations on Dask; "
        "'batsim-py cigri GRID.json' simulates a grid of OAR clusters harvested by CiGri.",
        allow_abbrev=False,
    )
    for flag in FLAGS:
        help_text = flag.help if flag.supported else flag.help + " [not yet supported]"
        kwargs: dict[str, Any] = {"help": help_text}
        if flag.kind == "flag":
            kwargs["action"] = "store_true"
        elif flag.kind == "list":
            kwargs.update(action="append", default=[], metavar=flag.metavar)
        elif flag.kind == "pairs":
            kwargs.update(action="append", default=[], nargs="+", metavar=flag.metavar)
        elif flag.kind == "two":
            kwargs.update(default=None, nargs=2, metavar=flag.metavar)
        else:
            kwargs.update(default=flag.default, metavar=flag.metavar)
            if flag.kind == "int":
                kwargs["type"] = int
            elif flag.kind == "float":
                kwargs["type"] = float
        parser.add_argument(*flag.names, **kwargs)
    return parser


def _dest(flag: Flag) -> str:
    """argparse's attribute name: the first long option, dashes as underscores."""
    first_long = next(n for n in flag.names if n.startswith("--"))
    return first_long.lstrip("-").replace("-", "_")


def _reject_unsupported(args: argparse.Namespace) -> None:
    for flag in FLAGS:
        if not flag.supported and getattr(args, _dest(flag)):
            raise NotSupportedError(
                f"option {'/'.join(flag.names)} is not yet supported by batsim-py "
                "(planned; run without it)"
            )


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:  # (the process's own command line)
        no_collection_at_exit()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in SUBCOMMANDS:
        import importlib

        module = importlib.import_module(SUBCOMMANDS[argv[0]])
        try:
            return module.main(argv[1:])
        except BrokenPipeError:
            return _stdout_closed()
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # argparse already printed the usage line
        return EXIT_USAGE if exc.code else 0
    # As Batsim 4.2.1: quiet and network-only show errors only, network-only adds every
    # protocol message (batsim_py.network, as Batsim's `network` category), which information
    # and debug show too (decision/message_log.py).
    verbosity = "quiet" if args.quiet else args.verbosity
    level = {"quiet": logging.ERROR, "network-only": logging.ERROR,
             "debug": logging.DEBUG}.get(verbosity, logging.INFO)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("batsim_py.network").setLevel(
        logging.INFO if verbosity == "network-only" else logging.NOTSET)
    for handler in logging.getLogger().handlers:  # user text in log lines stays on one line
        handler.setFormatter(OneLineFormatter("%(levelname)s %(name)s: %(message)s"))
    _STOP.clear()
    previous = {sig: signal.signal(sig, _interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}
    report = OutputReport()
    try:
        return _run(args, report)
    except BatsimPyError as exc:
        print(f"batsim-py: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        name, code = ("SIGTERM", 143) if _STOP == [signal.SIGTERM] else ("SIGINT", 130)
        if report.paths:
            what = "outputs written: " + ", ".join(report.paths)
        elif report.error is not None:
            what = f"no output written: {report.error}"
        else:
            what = "nothing was written (stopped before the simulation)"
        print(f"batsim-py: interrupted by {name}: {what}", file=sys.stderr)
        return code
    except BrokenPipeError:
        return _stdout_closed()
    except Exception as exc:  # a bug in batsim-py: still one line, the traceback in debug
        logging.getLogger("batsim_py").debug("internal error", exc_info=True)
        print(
            f"batsim-py: internal error: {type(exc).__name__}: {printable(str(exc))} (please "
            "report it; rerun with -v debug for the traceback)",
            file=sys.stderr,
        )
        return EXIT_ERROR
    finally:
        if not _STOP:  # (after a stop, later signals stay ignored until the process exits)
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def no_collection_at_exit() -> None:
    """Leave the objects alive at exit to the system: at exit CPython collects every object
    its collector tracks, and a finished simulation is millions of them (jobs, records, and
    the run's cycles: engine, actors), whose memory the process gives back anyway: 0.6-1.0 s
    of CPU after 200,000 jobs on 1,024 hosts (7.5 s in all). `gc.freeze` at exit (after
    every output is written and closed) leaves that last collection nothing to scan. Only for
    a process started as batsim-py (main called without arguments): main called from Python
    code leaves the collector alone."""
    atexit.register(gc.freeze)


def _stdout_closed() -> int:
    """The reader of our output went away (`batsim-py --list-examples | head -1`): stop quietly,
    as Unix tools do, instead of reporting an internal error; output files are not stdout."""
    import os

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error at exit
    except (OSError, ValueError):
        pass
    return 141  # 128 + SIGPIPE, what a shell reports for a tool killed by it


_STOP: list[int] = []  # the signal that stopped the run (at most one)


def _interrupt(signum: int, frame: Any) -> None:
    """SIGINT and SIGTERM stop a run: the simulation unwinds and writes its outputs.

    Only the first signal does: later ones (GNU `timeout` sends two; impatient users press
    Ctrl-C twice) are ignored, so nothing can interrupt the writing of the outputs. The exit
    code is 128 + the first signal's number, as for a process killed by it.
    """
    if _STOP:
        return
    _STOP.append(signum)
    raise KeyboardInterrupt


def _timeout(args: argparse.Namespace, name: str) -> float | None:
    value = getattr(args, name)
    flag = "--" + name.replace("_", "-")
    if value is not None and (math.isnan(value) or value <= 0):
        raise UsageError(f"{flag} must be a positive number of seconds (or inf: wait forever), "
                         f"not {value:g}")
    return value


def _run(args: argparse.Namespace, report: OutputReport) -> int:
    from batsim_py.schedulers import scheduler_names

    if args.version:
        from batsim_py.native import kernel_label
        from batsim_py.output.fixed import writer_label
        from batsim_py.workload.fast import loader_label

        print(f"batsim-py {__version__} ({kernel_label()}; {loader_label()}; {writer_label()})")
        return 0
    if args.simgrid_version:
        print("none: batsim-py reimplements the SimGrid 3.32 models Batsim 4.2.1 uses "
              "(ptask_L07 with the fair-bottleneck solver)")
        return 0
    if args.list_schedulers:
        for name in scheduler_names():
            print(name)
        return 0
    if args.list_examples:
        from batsim_py import shipped

        print(shipped.listing())
        return 0
    if args.dump_execution_context:
        import json

        print(json.dumps({
            "socket_endpoint": args.socket_endpoint,
            "redis_enabled": bool(args.enable_redis or args.redis_server),
            "redis_hostname": args.redis_hostname, "redis_port": args.redis_port,
            "redis_prefix": args.redis_prefix,
            "export_prefix": args.export,
            # (Batsim: false only with --no-sched; here also with an in-process scheduler or
            # a transcript, which need no scheduler process)
            "external_scheduler": args.scheduler is None,
        }, separators=(",", ":")))
        return 0
    _reject_unsupported(args)
    if not args.platform:
        raise UsageError("the platform is required: -p/--platform FILE")
    if args.timing not in ("batsim", "ideal"):
        raise UsageError(f"--timing must be 'batsim' or 'ideal', not '{args.timing}'")
    if args.verbosity not in ("quiet", "network-only", "information", "debug"):
        raise UsageError(
            f"--verbosity must be quiet, network-only, information or debug, not "
            f"'{args.verbosity}'"
        )
    if args.sched_cfg is not None and args.sched_cfg_file is not None:
        raise UsageError("--sched-cfg and --sched-cfg-file are mutually exclusive")
    if args.enable_profile_reuse and not args.enable_dynamic_jobs:
        raise UsageError("--enable-profile-reuse needs --enable-dynamic-jobs")
    sched_cfg = args.sched_cfg or ""
    if args.sched_cfg_file is not None:
        try:
            with open(args.sched_cfg_file, encoding="utf-8") as f:
                sched_cfg = f.read()
        except OSError as exc:
            raise UsageError(
                f"--sched-cfg-file {args.sched_cfg_file}: cannot read it ({exc.strerror})"
            ) from None
    roles = []
    for item in args.add_role_to_hosts:
        hosts, sep, role = item.partition(":")
        if not sep or ":" in role or not hosts:
            raise UsageError(f"--add-role-to-hosts '{item}': expected HOST[,HOST...]:ROLE")
        roles.append((tuple(hosts.split(",")), role))

    from batsim_py import shipped
    from batsim_py.run import RunSpec, run_simulation
    from batsim_py.sim.options import Options

    # Shipped inputs by name (`-p small4 -w delays_small`) when no such file is here.
    args.platform = shipped.resolve(args.platform, "platform")
    args.workload = [shipped.resolve(w, "workload") for w in args.workload]
    args.events = [shipped.resolve(e, "events") for e in args.events]

    if args.output_layout not in ("v4", "v5"):
        raise UsageError(f"--output-layout must be v4 or v5, not '{args.output_layout}'")
    if args.output_layout == "v5" and args.export == "outputs/out":
        args.export = "out/"  # Batsim 5's default prefix
    flux = args.protocol == "flux"
    if args.protocol not in ("batsim", "flux"):
        raise UsageError(f"--protocol must be 'batsim' or 'flux', not '{args.protocol}'")
    options = Options(
        export_prefix=args.export,
        timing=args.timing,
        # (core granularity: Flux hands out cores, several jobs share a host)
        allow_compute_sharing=args.enable_compute_sharing or (
            flux and args.flux_granularity == "core"),
        allow_storage_sharing=not args.disable_storage_sharing,
        forward_profiles_on_submission=args.forward_profiles_on_submission,
        dynamic_jobs=args.enable_dynamic_jobs,
        acknowledge_dynamic_jobs=args.acknowledge_dynamic_jobs,
        profile_reuse=args.enable_profile_reuse,
        # (a batprotocol EDC gets every event of --events: Batsim 5 has generic events only)
        forward_unknown_events=bool((args.forward_unknown_events or flux or any(
            getattr(args, n) is not None for n in _EDC_FLAGS)) and args.events),
        sched_config=sched_cfg,
        energy=args.energy,
        machine_state_tracing=not args.disable_machine_state_tracing,
        schedule_tracing=not args.disable_schedule_tracing and args.output_layout == "v4",
        output_layout=args.output_layout,
        end_in_last_batch=args.legacy_protocol is not None,
        unavailable_kills=bool(args.legacy_protocol is not None and args.legacy_failure_stamps),
    )
    spec = RunSpec(
        platform=args.platform,
        workloads=args.workload,
        options=options,
        master_host=args.master_host,
        extra_roles=roles,
        mmax=args.mmax,
        mmax_workload=args.mmax_workload,
        events=args.events,
        workflows=args.workflow,
        workflow_starts=_workflow_starts(args.WS),
        workflow_jobs_limit=args.workflow_jobs_limit,
        ignore_beyond_last_workflow=args.ignore_beyond_last_workflow,
        progress=not (args.quiet or args.verbosity == "quiet") and sys.stderr.isatty(),
    )
    if args.mmax < 0:
        raise UsageError(f"--mmax must be >= 0, not {args.mmax}")
    setup = _process_setup(args.process, spec)  # (user code errors before any socket opens)
    if flux:
        _edc_choice(args)  # (refuses an EDC option beside --protocol flux)
        from batsim_py.decision.flux_peer import from_cli_args

        decision = from_cli_args(args, _timeout(args, "scheduler_timeout"),
                                 _timeout(args, "scheduler_connect_timeout"))
    else:
        decision = make_decision_process(args)  # last: it may start a scheduler process
    sim = run_simulation(spec, decision, setup, report)
    logging.getLogger("batsim_py").info(
        "simulation ended at t=%f: %d jobs", sim.engine.now, len(sim.job_records)
    )
    return 0


def _workflow_starts(groups: Sequence[Sequence[str]]) -> list[tuple[str, float]]:
    """The (file, start time) pairs of --WS: Batsim takes them after one --WS (`--WS F1 T1 F2
    T2`, docopt's `(<cut_workflow_file> <start_time>)...`); a repeated --WS is also taken."""
    items = [x for group in groups for x in group]
    if len(items) % 2:
        raise UsageError(f"--workflow-start takes FILE TIME pairs, got {' '.join(items)}")
    return [(items[k], _start_time(items[k], items[k + 1])) for k in range(0, len(items), 2)]


def _start_time(path: str, text: str) -> float:
    """A --WS start time, read as Batsim's std::stod reads it (its numeric prefix); it must
    be a finite number >= 0."""
    from batsim_py.workload.dax import strtod_prefix

    value = strtod_prefix(text)
    if value is None:
        raise UsageError(f"--workflow-start {path} {text}: cannot read the start time "
                         f"'{text}' as a number")
    if not 0 <= value < float("inf"):
        raise UsageError(f"--workflow-start {path} {text}: the start time must be a finite "
                         "number >= 0")
    return value


def _process_setup(refs: Sequence[str], spec: Any) -> Any:
    """`--process` targets, loaded and called as FUNCTION(env, sim) once the simulation is
    built (None without any: the run has no SimPy code at all)."""
    if not refs:
        return None
    from batsim_py.plugins import check_process_function, load_object

    functions = [(ref, check_process_function(load_object(ref, "process"), ref)) for ref in refs]

    def setup(sim: Any) -> None:
        import inspect

        from batsim_py.api import Simulator
        from batsim_py.plugins import call_user

        api = Simulator.around(sim, spec)
        for ref, function in functions:
            result = call_user(function, f"process '{ref}'", api.env, api)
            if inspect.isgenerator(result):
                api.env.process(result)

    return setup


def _scheduler_options(args: argparse.Namespace) -> dict[str, Any]:
    """In-process schedulers take their options from --sched-cfg as a JSON object."""
    text = args.sched_cfg
    if not text:
        return {}
    import json

    try:
        options = json.loads(text)
    except ValueError:
        options = None
    if not isinstance(options, dict):
        raise UsageError(
            f"--sched-cfg {text!r}: in-process schedulers take a JSON object of options, "
            'e.g. \'{"idle_timeout": 120}\''
        )
    return options


def make_decision_process(args: argparse.Namespace) -> Any:
    """The peer the engine talks to: in-process, replayed transcript or ZeroMQ (each
    imported only when chosen: ZeroMQ's modules alone take ~40 ms to import)."""
    from batsim_py.decision.message_log import with_message_log

    edc = _edc_choice(args)
    if edc is not None:
        return _edc_peer(args, *edc)
    if args.replay_strict and not (args.scheduler or "").startswith("replay:"):
        raise UsageError("--replay-strict needs --scheduler replay:FILE")
    reply_timeout = _timeout(args, "scheduler_timeout")
    connect_timeout = _timeout(args, "scheduler_connect_timeout")
    if args.scheduler is not None and args.scheduler_command is not None:
        raise UsageError("--scheduler-command starts an external scheduler (at -s): it cannot "
                         "go with --scheduler")
    if args.legacy_protocol is not None:
        from batsim_py.decision.legacy_setup import make_legacy_peer

        return make_legacy_peer(args, reply_timeout, connect_timeout)
    if args.scheduler is None:
        from batsim_py.decision.zmq_peer import ZmqPeer

        decision = ZmqPeer(args.socket_endpoint, reply_timeout, connect_timeout,
                           command=args.scheduler_command)
        if args.enable_redis or args.redis_server:
            from batsim_py.decision.legacy_setup import make_redis_json_peer

            return make_redis_json_peer(args, decision)  # (logs its own messages)
    elif args.enable_redis or args.redis_server:
        raise UsageError("--enable-redis/--redis-server pass job descriptions to an external "
                         "scheduler (-s): not with --scheduler")
    elif args.scheduler.startswith("replay:"):
        from batsim_py.decision.transcript import ReplayPeer

        decision = ReplayPeer(args.scheduler[len("replay:"):], strict=args.replay_strict)
    elif args.scheduler.startswith("pybatsim:"):
        from batsim_py.decision.pybatsim_peer import PybatsimPeer

        decision = PybatsimPeer(args.scheduler[len("pybatsim:"):], _scheduler_options(args))
    else:
        from batsim_py.decision.inprocess import InProcess
        from batsim_py.schedulers import get_scheduler

        decision = InProcess(get_scheduler(args.scheduler, _scheduler_options(args)))
    decision = with_message_log(decision, "quiet" if args.quiet else args.verbosity,
                                external=args.scheduler is None
                                or args.scheduler.startswith("replay:"))
    if args.record_transcript:
        from batsim_py.decision.transcript import RecordingPeer

        try:
            decision = RecordingPeer(decision, args.record_transcript)
        except BaseException:
            decision.close()
            raise
    return decision


_EDC_FLAGS = ("edc_library_str", "edc_library_file", "edc_socket_str", "edc_socket_file")


def _edc_choice(args: argparse.Namespace) -> tuple[str, str, bytes] | None:
    """(kind, target, init data) of the batprotocol EDC the command line names, if any."""
    given = [name for name in _EDC_FLAGS if getattr(args, name, None) is not None]
    if not given:
        if args.lift_v5_restrictions or args.edc_allow_unknown_fields:
            raise UsageError("--lift-v5-restrictions and --edc-allow-unknown-fields apply to "
                             "a batprotocol EDC: give one with --edc-library-str, "
                             "--edc-socket-str, ...")
        return None
    if len(given) > 1:
        raise UsageError("exactly one EDC per simulation (Batsim 5 too): give only one of "
                         + ", ".join("--" + n.replace("_", "-") for n in given))
    name = given[0]
    target, init = getattr(args, name)
    if name.endswith("_file"):
        try:
            with open(init, "rb") as f:
                data = f.read()
        except OSError as exc:
            raise UsageError(f"--{name.replace('_', '-')}: cannot read the init file "
                             f"'{init}' ({exc.strerror})") from None
    else:
        data = init.encode("utf-8")
    if getattr(args, "protocol", "batsim") != "batsim" or getattr(args, "legacy_protocol",
                                                                  None) is not None:
        raise UsageError(f"--{name.replace('_', '-')} (a batprotocol EDC) does not go with "
                         "--protocol or --legacy-protocol: one protocol per run")
    for other in ("scheduler", "scheduler_command", "record_transcript"):
        if getattr(args, other) is not None:
            raise UsageError(f"--{other.replace('_', '-')} does not go with a batprotocol EDC "
                             f"(--{name.replace('_', '-')})")
    return ("socket" if "socket" in name else "library"), target, data


def _edc_peer(args: argparse.Namespace, kind: str, target: str, init: bytes) -> Any:
    from batsim_py.decision.edc_peer import EdcPeer, EdcSettings
    from batsim_py.decision.edc_transports import LibraryEdc, ProcessEdc, PythonEdc

    settings = EdcSettings(
        init_data=init, strict_fields=not args.edc_allow_unknown_fields,
        lift_restrictions=args.lift_v5_restrictions, arguments=list(sys.argv),
        context={"export_prefix": args.export, "edc": target, "edc_kind": kind,
                 "lift_v5_restrictions": args.lift_v5_restrictions},
        log_level=logging.INFO if "quiet" != args.verbosity != "debug" and not args.quiet
        and (kind == "socket" or args.verbosity == "network-only") else logging.DEBUG)
    transport: Any
    if kind == "socket":
        transport = ProcessEdc(target, _timeout(args, "scheduler_timeout"),
                               _timeout(args, "scheduler_connect_timeout"))
    elif target.endswith((".so", ".dylib")) or ".so." in target:
        transport = LibraryEdc(target, args.edc_library_load_method)
    else:
        transport = PythonEdc(target)
    return EdcPeer(transport, settings)


if __name__ == "__main__":
    sys.exit(main())
