"""Job metadata in Redis, as Batsim wrote it: for the legacy protocol's versions 2 and 3 and
for Batsim 4's `--enable-redis` JSON mode.

Keys are `PREFIX:KEY` (Batsim's `RedisStorage::build_key`):
- `nb_res`: the number of machines, a decimal string, written before the first message
  (legacy: the compute machines, 2016's `nb_machines`; JSON mode: every compute and storage
  machine, Batsim 4's `nb_machines`);
- `job_WORKLOAD!JOB`: the job's JSON object as the JSON mode forwards it (the workload's
  object, `id` set to the full id), written before the message announcing the job is sent;
- `profile_WORKLOAD!PROFILE`: the profile's JSON (legacy: always, as 2016 Batsim; JSON mode:
  with `--forward-profiles-on-submission`, as Batsim 4).
The server is either one the user runs (`--redis-hostname/--redis-port`) or a private
`redis-server` that batsim-py starts on a free port in a temporary folder and stops whatever
ends the run (`--redis-server auto`; `RedisServer`).
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Sequence
from typing import Any

from batsim_py.decision import events as ev
from batsim_py.errors import SchedulerError, UsageError
from batsim_py.protocol import batsim_json
from batsim_py.protocol.batsim_events import job_json

log = logging.getLogger(__name__)

START_TIMEOUT = 10.0  # seconds for a private redis-server to answer PING
STOP_GRACE = 5.0


def import_redis() -> Any:
    """The `redis` package, imported with SIGINT and SIGTERM held back until it is loaded.

    Why: the import takes a tenth of a second (asyncio, ssl, cryptography, opentelemetry...)
    as a run starts, and the CLI's stop signal raises KeyboardInterrupt wherever Python is: one
    landing inside those imports' C extensions made batsim-py die by SIGINT (exit -2) after
    printing its SIGTERM line, or fail with an internal TypeError. Held back, the signal is
    taken right after the import, where unwinding is safe."""
    held = {signal.SIGINT, signal.SIGTERM}
    old = signal.pthread_sigmask(signal.SIG_BLOCK, held) if hasattr(signal, "pthread_sigmask") \
        else None
    try:
        import redis
    finally:
        if old is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
    return redis


def _death_signal() -> Any:
    from batsim_py.decision.child import _death_signal as death_signal

    return death_signal()


class RedisServer:
    """A private redis-server: free port on 127.0.0.1, temporary folder, no persistence."""

    def __init__(self) -> None:
        exe = shutil.which("redis-server")
        if exe is None:
            raise UsageError(
                "--redis-server auto: the redis-server program is not installed (Debian: "
                "apt-get install redis-server); or run one yourself and give "
                "--redis-hostname/--redis-port")
        self.folder = tempfile.mkdtemp(prefix="batsim-py-redis-")
        self.process: subprocess.Popen[bytes] | None = None
        self.host = "127.0.0.1"
        self.port = 0
        try:
            for _ in range(3):  # a free port may be taken between choosing and binding it
                self.port = _free_port()
                if self._start(exe):
                    log.info("started redis-server (pid %d) on %s:%d, folder %s", self.pid,
                             self.host, self.port, self.folder)
                    return
            raise UsageError(f"--redis-server auto: redis-server did not start: "
                             f"{self._log_tail()}")
        except BaseException:
            self.stop()
            raise

    @property
    def pid(self) -> int:
        return self.process.pid if self.process is not None else -1

    def _start(self, exe: str) -> bool:
        logfile = os.path.join(self.folder, "redis.log")
        self.process = subprocess.Popen(
            [exe, "--port", str(self.port), "--bind", self.host, "--dir", self.folder,
             "--save", "", "--appendonly", "no", "--daemonize", "no", "--logfile", logfile,
             "--protected-mode", "yes"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, preexec_fn=_death_signal())
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self.process = None
                return False
            try:
                with socket.create_connection((self.host, self.port), timeout=0.5) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return True
            except OSError:
                pass
            time.sleep(0.02)
        self._kill()
        return False

    def _log_tail(self) -> str:
        try:
            with open(os.path.join(self.folder, "redis.log"), encoding="utf-8",
                      errors="replace") as f:
                lines = [line.strip() for line in f if line.strip()]
            return lines[-1] if lines else "no message"
        except OSError:
            return "no message"

    def _kill(self) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(STOP_GRACE)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def stop(self) -> None:
        """Stop the server and remove its folder (idempotent)."""
        try:
            self._kill()
        finally:
            if self.folder:
                shutil.rmtree(self.folder, ignore_errors=True)
                self.folder = ""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RedisStore:
    """Writes the metadata of each batch before it is sent; `server`: a private one to stop."""

    def __init__(self, host: str, port: int, prefix: str, *, legacy: bool,
                 forward_profiles: bool = False, server: RedisServer | None = None) -> None:
        redis = import_redis()

        self.where = f"{host}:{port}"
        self.prefix = prefix
        self.legacy = legacy
        self.forward_profiles = forward_profiles
        self.server = server
        self.profiles: dict[str, Any] = {}
        self._errors = redis.exceptions.RedisError
        self.client = redis.Redis(host=host, port=port, socket_timeout=30,
                                  socket_connect_timeout=5)
        try:
            self.client.ping()
        except self._errors as exc:
            self.close()
            raise UsageError(
                f"cannot reach the Redis server at {self.where} ({exc}); start one there, "
                "fix --redis-hostname/--redis-port, or let batsim-py start its own with "
                "--redis-server auto") from None

    def key(self, name: str) -> str:
        return f"{self.prefix}:{name}"

    def publish(self, events: Sequence[ev.Event]) -> None:
        """Set the keys the batch's events need, before the batch is sent."""
        pipe = None
        for event in events:
            kind = type(event)
            if kind is ev.JobSubmitted:
                pipe = pipe or self.client.pipeline(transaction=False)
                job = event.job  # type: ignore[union-attr]
                pipe.set(self.key(f"job_{job.id}"), batsim_json.dumps(job_json(job)))
                if self.legacy or self.forward_profiles:
                    profile = self.profiles.get(job.workload, {}).get(job.profile)
                    if profile is not None:
                        pipe.set(self.key(f"profile_{job.workload}!{job.profile}"),
                                 batsim_json.dumps(profile.description))
            elif kind is ev.SimulationBegins:
                begins: ev.SimulationBegins = event  # type: ignore[assignment]
                self.profiles = dict(begins.profiles)
                nb = begins.nb_compute_resources if self.legacy else begins.nb_resources
                pipe = pipe or self.client.pipeline(transaction=False)
                pipe.set(self.key("nb_res"), str(nb))
        if pipe is not None:
            try:
                pipe.execute()
            except self._errors as exc:
                raise SchedulerError(f"cannot write job metadata to Redis at {self.where}: "
                                     f"{exc}") from None

    def get(self, name: str) -> str | None:
        try:
            value = self.client.get(self.key(name))
        except self._errors as exc:
            raise SchedulerError(f"cannot read '{self.key(name)}' from Redis at "
                                 f"{self.where}: {exc}") from None
        return None if value is None else value.decode("utf-8", errors="replace")

    def close(self) -> None:
        try:
            self.client.close()
        finally:
            if self.server is not None:
                self.server.stop()
