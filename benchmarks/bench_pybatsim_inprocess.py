"""pybatsim's `easyBackfill` in-process (`--scheduler pybatsim:easyBackfill`) vs over ZeroMQ.

In one run, alternating (ZeroMQ, in-process, ZeroMQ, ...), each run a fresh batsim-py process
(and, over ZeroMQ, a fresh `pybatsim` process) timed from start to exit: f_10k (the reference
workload of the corpus shipped in tests/conformance/reference, --mmax-workload). Prints the
medians, their ratio (the target is >= 3x), each as a ratio of the plain-SimPy yardstick sampled
before and after, and checks that both modes wrote the same jobs.csv and machine_states.csv and
that they equal Batsim's. CPU times are printed too (over ZeroMQ: batsim-py's and pybatsim's
processes, each from its own rusage), because on a loaded machine the wall time of two processes
that hand messages back and forth swells with every wait for a core.

With `--split`, one more in-process run (not counted above) says where its CPU time goes:
pybatsim's own code (its `Batsim` object, and the scheduler's callbacks within it), ours inside
the exchange (building the decoded message, reading the reply), and the rest (loading,
the kernel, writing outputs), each also per message.

    python benchmarks/bench_pybatsim_inprocess.py [--case f_10k|f_50k] [--repeat 3] [--split]

Needs pybatsim 3.2.1 (`pip install --no-deps pybatsim==3.2.1 procset sortedcontainers docopt`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import free_port, reference
from yardstick import Yardstick

ROOT = Path(__file__).resolve().parents[1]
CASES = {"f_10k": "f_10k_easy_cluster128_quiet", "f_50k": "f_50k_easy_cluster128_quiet"}
SCHEDULER = "easyBackfill"


def inputs(case: str) -> tuple[list[str], Path]:
    """The CLI's input arguments, and the folder of Batsim's expected outputs."""
    folder = reference() / CASES[case]
    spec = json.loads((folder / "case.json").read_text())
    return (["-p", str(folder / spec["platform"]), "-w", str(folder / spec["workloads"][0]),
             *spec["batsim_args"]], folder / "expected" / "out")


def one_run(args: list[str], zeromq: bool, out: str) -> tuple[float, float, float]:
    """Wall time of one whole run, process start to exit, and the CPU time of batsim-py's
    process and of pybatsim's (0 in-process)."""
    cli = [sys.executable, "-m", "batsim_py.cli", "-q", *args, "-e", f"{out}/out"]
    t0 = time.perf_counter()
    if zeromq:
        port = free_port()
        sched = subprocess.Popen(
            [shutil.which("pybatsim") or "pybatsim", SCHEDULER, "-s", f"tcp://127.0.0.1:{port}",
             "-t", "0", "-v", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=out,
        )
        sim = subprocess.Popen([*cli, "-s", f"tcp://127.0.0.1:{port}"], cwd=ROOT)
        sim_cpu = _wait(sim)
        sched_cpu = _wait(sched)
    else:
        sim = subprocess.Popen([*cli, "--scheduler", f"pybatsim:{SCHEDULER}"],
                               cwd=out,  # (pybatsim's batsim.sched layer writes in the cwd)
                               env={**os.environ, "PYTHONPATH": str(ROOT)})  # this tree's
        sim_cpu, sched_cpu = _wait(sim), 0.0
    return time.perf_counter() - t0, sim_cpu, sched_cpu


def _wait(process: subprocess.Popen) -> float:
    """Wait for a child; its CPU time (user + system), from its own rusage."""
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{process.args[:3]}... exited with {process.returncode}")
    return usage.ru_utime + usage.ru_stime


def split_run(args: list[str], out: str) -> str:
    """One in-process run in a child process instrumented by `_split_child`; its report."""
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--split-child",
                           json.dumps(args), f"{out}/out"], cwd=out, check=True,
                          capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": f"{ROOT}:{ROOT / 'benchmarks'}"})
    return done.stdout


def _split_child(args: list[str], prefix: str) -> None:
    """Run in-process, timing (CPU) pybatsim's `Batsim._read_bat_msg` (all of pybatsim's
    work for a message, the scheduler's callbacks included), the callbacks alone and our
    `exchange` around them. The timers add a little to each part."""
    import batsim.batsim as pybatsim

    from batsim_py.cli import main as cli
    from batsim_py.decision.pybatsim_peer import PybatsimPeer

    clock = time.process_time
    spent = {"exchange": 0.0, "pybatsim": 0.0, "callbacks": 0.0, "messages": 0}
    exchange, read = PybatsimPeer.exchange, pybatsim.Batsim._read_bat_msg

    messages = []  # (now, events, reply) of the run, replayed to pybatsim alone afterwards

    def timed_exchange(self, now, events):  # noqa: ANN001, ANN202
        t0 = clock()
        try:
            return exchange(self, now, events)
        finally:
            spent["exchange"] += clock() - t0  # (the recording below is not counted)
            spent["messages"] += 1
            messages.append((now, list(events), self.network.outbox))

    def timed_read(self):  # noqa: ANN001, ANN202
        scheduler = self.scheduler
        if "timed" not in scheduler.__dict__:  # the scheduler's callbacks, on the instance
            scheduler.timed = True
            for name in dir(pybatsim.BatsimScheduler):
                if name.startswith("on") and name != "onAfterBatsimInit":
                    setattr(scheduler, name, _timed(getattr(scheduler, name), spent, clock))
        t0 = clock()
        try:
            return read(self)
        finally:
            spent["pybatsim"] += clock() - t0

    PybatsimPeer.exchange = timed_exchange
    pybatsim.Batsim._read_bat_msg = timed_read
    c0 = clock()
    if cli(["-q", *args, "--scheduler", f"pybatsim:{SCHEDULER}", "-e", prefix]) != 0:
        raise SystemExit("the instrumented run failed")
    total = clock() - c0
    n = spent["messages"]
    ours = spent["exchange"] - spent["pybatsim"]
    own = spent["pybatsim"] - spent["callbacks"]

    def line(what: str, seconds: float) -> str:
        return (f"  {what:44s} {seconds:6.2f} s  {seconds / total:4.0%}  "
                f"{seconds / n * 1e6:6.1f} us/message")

    print(f"  in-process CPU split ({n} messages, {total:.2f} s CPU in the run itself):")
    print(line("pybatsim's code: the scheduler's callbacks", spent["callbacks"]))
    print(line("pybatsim's code: its Batsim object", own))
    print(line("ours in the exchange (message, reply)", ours))
    print(line("the rest (load, kernel, outputs)", total - spent["exchange"]))
    alone = _pybatsim_alone(messages)
    print(line("pybatsim alone, replaying the run's messages", alone))
    print(line("ours alone (messages built, replies read)", _ours_alone(messages)))


def _ours_alone(messages: list) -> float:
    """CPU time of the stand-in's own work on the run's messages and replies, without timers
    around each: building every message pybatsim reads, reading every reply it gave."""
    from batsim_py.decision import pybatsim_peer

    t0 = time.process_time()
    for now, events, reply in messages:
        sent = pybatsim_peer._message(now, events)["now"]
        if pybatsim_peer._fast_reply(reply, sent) is None:
            pybatsim_peer._decode(reply, SCHEDULER)
    return time.process_time() - t0


def _pybatsim_alone(messages: list) -> float:
    """CPU time of a fresh pybatsim `Batsim` object and scheduler reading the run's messages,
    already built (as the stand-in hands them), without batsim-py around: the part of a
    run no change on batsim-py's side can remove. Its replies are checked to be the run's."""
    import batsim.batsim as pybatsim

    from batsim_py.decision import pybatsim_peer

    built = [pybatsim_peer._message(now, events) for now, events, _ in messages]
    peer = pybatsim_peer.PybatsimPeer(SCHEDULER, {})
    network = peer.network
    t0 = time.process_time()
    original = pybatsim.NetworkHandler
    pybatsim.NetworkHandler = lambda *args, **kwargs: network
    network.inbox = built[0]
    bs = pybatsim.Batsim(peer.scheduler, "in-process", 0)
    pybatsim.NetworkHandler = original
    replies = [network.outbox]
    for message in built[1:]:
        network.inbox = message
        bs.do_next_event()
        replies.append(network.outbox)
    spent = time.process_time() - t0
    if replies != [reply for _, _, reply in messages]:
        raise SystemExit("pybatsim alone did not reply as in the run")
    return spent


def _timed(method, spent: dict, clock):  # noqa: ANN001, ANN202
    def timed(*args):  # noqa: ANN002, ANN202
        t0 = clock()
        try:
            return method(*args)
        finally:
            spent["callbacks"] += clock() - t0
    return timed


def digest(out: str) -> str:
    h = hashlib.sha256()
    for name in ("jobs", "machine_states"):
        h.update(Path(f"{out}/out_{name}.csv").read_bytes())
    return h.hexdigest()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", default="f_10k", choices=sorted(CASES))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--split", action="store_true",
                        help="one more in-process run, saying where its CPU time goes")
    parser.add_argument("--split-child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.split_child:
        _split_child(json.loads(args.split_child[0]), args.split_child[1])
        return 0
    if shutil.which("pybatsim") is None:
        print("needs pybatsim 3.2.1: pip install --no-deps pybatsim==3.2.1 procset "
              "sortedcontainers docopt")
        return 1
    cli_args, expected = inputs(args.case)
    label = args.case
    stick = Yardstick()
    stick.sample()
    walls: dict[bool, list[float]] = {True: [], False: []}
    cpus: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    digests: set[str] = set()
    same_as_batsim = True
    for _ in range(args.repeat):
        for zeromq in (True, False):
            with tempfile.TemporaryDirectory() as out:
                wall, sim_cpu, sched_cpu = one_run(cli_args, zeromq, out)
                walls[zeromq].append(wall)
                cpus[zeromq].append((sim_cpu, sched_cpu))
                digests.add(digest(out))
                cmp = subprocess.run([sys.executable, "-m", "batsim_py.cli", "compare",
                                      str(expected), f"{out}/out"], capture_output=True,
                                     cwd=ROOT)
                same_as_batsim &= cmp.returncode == 0
    split = ""
    if args.split:
        with tempfile.TemporaryDirectory() as out:
            split = split_run(cli_args, out)
    stick.sample()
    zmq, inproc = statistics.median(walls[True]), statistics.median(walls[False])
    zmq_cpu = statistics.median(a + b for a, b in cpus[True])
    inproc_cpu = statistics.median(a for a, _ in cpus[False])
    sim_cpu = statistics.median(a for a, _ in cpus[True])
    sched_cpu = statistics.median(b for _, b in cpus[True])
    print(f"{label}: pybatsim {SCHEDULER}, medians of {args.repeat} alternated runs "
          "(wall s, process start to exit)")
    print(f"  over ZeroMQ   {zmq:7.2f}   {stick.ratio(zmq)}   "
          f"(runs {', '.join(f'{w:.2f}' for w in walls[True])})")
    print(f"  in-process    {inproc:7.2f}   {stick.ratio(inproc)}   "
          f"(runs {', '.join(f'{w:.2f}' for w in walls[False])})")
    print(f"  in-process is {zmq / inproc:.2f}x faster (target >= 3x)")
    print(f"  CPU time (medians): over ZeroMQ {zmq_cpu:.2f} s (batsim-py {sim_cpu:.2f} + "
          f"pybatsim {sched_cpu:.2f}), in-process {inproc_cpu:.2f} s "
          f"({inproc_cpu / min(stick.cpu_samples):.3g} x the yardstick's CPU time): "
          f"{zmq_cpu / inproc_cpu:.2f}x less")
    if split:
        print(split, end="")
    print(f"  outputs: {'identical in both modes' if len(digests) == 1 else 'DIFFERENT'}, "
          f"{'equal to' if same_as_batsim else 'DIFFERENT from'} Batsim's")
    print(f"  {stick.summary()}")
    return 0 if len(digests) == 1 and same_as_batsim else 1


if __name__ == "__main__":
    sys.exit(main())
