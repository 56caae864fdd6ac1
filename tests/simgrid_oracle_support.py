"""What the SimGrid oracle tests share: Debian's python3-simgrid runs under the system Python.

The oracle scripts (run by /usr/bin/python3) import this module too: it needs nothing but the
standard library.
"""

from __future__ import annotations

import subprocess

SYSTEM_PYTHON = "/usr/bin/python3"


def simgrid_available() -> bool:
    """True when /usr/bin/python3 can import Debian's simgrid module."""
    try:
        res = subprocess.run([SYSTEM_PYTHON, "-c", "import simgrid"], capture_output=True,
                             timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return res.returncode == 0


def full_zone_xml(hosts: list[str], links: list[dict], routes: list) -> str:
    """A Full-zone SimGrid platform: `hosts` are the host elements (named h0, h1, ...), links
    l0, l1, ... (a "fatpipe" key sets the sharing policy explicitly), one-way routes
    [src, dst, [link, ...]]. Numbers are written with repr so that strtod reads them back
    exactly."""
    out = ['<?xml version="1.0"?>', '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
           '<platform version="4.1">', '<zone id="world" routing="Full">', *hosts]
    for k, link in enumerate(links):
        policy = ""
        if "fatpipe" in link:
            policy = f' sharing_policy="{"FATPIPE" if link["fatpipe"] else "SHARED"}"'
        out.append(f'<link id="l{k}" bandwidth="{link["bandwidth"]!r}Bps" '
                   f'latency="{link["latency"]!r}s"{policy}/>')
    for src, dst, hops in routes:
        ctn = "".join(f'<link_ctn id="l{k}"/>' for k in hops)
        out.append(f'<route src="h{src}" dst="h{dst}" symmetrical="NO">{ctn}</route>')
    out += ["</zone>", "</platform>"]
    return "\n".join(out)


# A fork server: the system Python imports simgrid and the oracle script once (about 0.3 s, most
# of a small case's time), then runs each case in a fork of itself, so that every case still
# gets a brand-new SimGrid engine. It reads "CASE_PATH<TAB>OUT_PATH" lines; the case's stdout
# goes to OUT_PATH, its stderr to OUT_PATH.err; it answers with the case's exit status.
_SERVER = r"""
import importlib.util, os, sys, traceback
sys.path.insert(0, os.path.dirname(sys.argv[1]))
spec = importlib.util.spec_from_file_location("oracle_script", sys.argv[1])
script = importlib.util.module_from_spec(spec)
spec.loader.exec_module(script)
import simgrid
for line in sys.stdin:
    case, out = line.rstrip("\n").split("\t")
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.dup2(os.open(out + ".err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 2)
            with open(out, "w") as sys.stdout:
                script.main(case)
            code = 0
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stderr.flush()
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    print(os.waitstatus_to_exitcode(status), flush=True)
"""


class ForkServers:
    """`n` fork servers of the oracle script `script` (its `main(path)` prints the result of
    the case file `path` as JSON): run(case) gives that JSON, as `/usr/bin/python3 script
    case.json` would, from any of `n` threads at a time. A case that takes longer than
    `timeout` seconds kills its server and raises TimeoutError (a new server takes its place)."""

    def __init__(self, script: str, n: int = 2) -> None:
        import queue

        self.script = script
        self.idle: queue.Queue[subprocess.Popen[str]] = queue.Queue()
        self.all = [self._start() for _ in range(n)]
        for proc in self.all:
            self.idle.put(proc)

    def _start(self) -> subprocess.Popen[str]:
        # its own process group, which its forks share: a timeout kills both (_kill)
        return subprocess.Popen([SYSTEM_PYTHON, "-c", _SERVER, self.script], text=True,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                start_new_session=True)

    @staticmethod
    def _kill(proc: subprocess.Popen[str]) -> None:
        import os
        import signal

        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def run(self, case: dict, timeout: float = 60.0) -> dict:
        import json
        import os
        import tempfile
        import threading

        proc = self.idle.get()
        status = ""
        try:
            with tempfile.TemporaryDirectory() as tmp:
                path, out = os.path.join(tmp, "case.json"), os.path.join(tmp, "out.json")
                with open(path, "w") as f:
                    json.dump(case, f)
                assert proc.stdin is not None and proc.stdout is not None
                expired: list[bool] = []

                def expire() -> None:
                    expired.append(True)
                    self._kill(proc)

                timer = threading.Timer(timeout, expire)
                timer.start()
                try:
                    proc.stdin.write(f"{path}\t{out}\n")
                    proc.stdin.flush()
                    status = proc.stdout.readline().strip()
                finally:
                    timer.cancel()
                if expired:
                    raise TimeoutError(f"{self.script} did not finish within {timeout} s")
                if status != "0":
                    err = open(out + ".err").read() if os.path.exists(out + ".err") else ""
                    raise RuntimeError(f"{self.script} failed (status {status or 'killed'}) on "
                                       f"{json.dumps(case)[:200]}...: {err[-2000:]}")
                with open(out) as f:
                    return json.load(f)
        finally:
            if not status:  # no answer: the server is dead or dying (its pipe closes before
                self._kill(proc)  # it can be reaped): a new server for the next case
                proc.wait()
                proc = self._start()
                self.all.append(proc)
            self.idle.put(proc)

    def close(self) -> None:
        for proc in self.all:
            if proc.poll() is None:
                assert proc.stdin is not None
                proc.stdin.close()
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    self._kill(proc)
                    proc.wait()
