"""Writes every output file of a simulation under one prefix (`PREFIX_jobs.csv`, ...).

Results must never be lost nor half-written, so:
- `check_prefix` is called before anything is simulated: a prefix that cannot be written (a
  read-only folder, a file in the way, a name too long for the file system) is an error then,
  not after an hour of simulation;
- every file is first written in full to a hidden temporary file of the output folder, and only
  when all of them are complete are they renamed to their final names (an atomic `rename`):
  a signal, a full disk or a crash in the middle leaves the previous files untouched and no
  truncated one, and every write error names its file;
- `OutputReport` tells the caller exactly which files exist at the end, so the CLI's last line
  can say what was written (and nothing when nothing was).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from typing import Any, BinaryIO, TextIO

from batsim_py.errors import OutputError
from batsim_py.output import jobs_csv, machine_states_csv
from batsim_py.output.jobs_csv import JobTimes
from batsim_py.output.report import OutputReport
from batsim_py.output.schedule_csv import format_schedule

# Every suffix batsim-py may write after PREFIX (the longest decides whether a prefix fits).
SUFFIXES = ("_jobs.csv", "_schedule.csv", "_machine_states.csv", "_consumed_energy.csv",
            "_pstate_changes.csv", "_schedule.trace")
TEMP_PREFIX = ".batsim-py-"  # temporary files: `.batsim-py-XXXXXXXX.tmp` beside the outputs


def _folder(prefix: str) -> str:
    return os.path.dirname(prefix) or "."


def check_prefix(prefix: str) -> None:
    """Raise OutputError unless the files PREFIX_*.csv can be created (before simulating).

    Creates the output folder (as the writer would) and a temporary file in it, which is
    removed at once; existing outputs are not touched.
    """
    folder = _folder(prefix)
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        blocker = _file_in_the_way(folder)
        why = (f"'{blocker}' is a file, not a folder" if blocker is not None
               else f"cannot create the folder '{folder}' ({exc.strerror})")
        raise OutputError(f"-e {prefix}: {why}; choose another output prefix with -e") from None
    base = os.path.basename(prefix)
    try:
        name_max = os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError):
        name_max = 255
    longest = max((base + s for s in SUFFIXES), key=lambda n: len(os.fsencode(n)))
    if len(os.fsencode(longest)) > name_max:
        raise OutputError(
            f"-e {prefix[:60]}{'...' if len(prefix) > 60 else ''}: the output file name "
            f"'{base[:20]}...{longest[-20:]}' is {len(os.fsencode(longest))} bytes long, more "
            f"than the file system allows ({name_max}); choose a shorter prefix with -e"
        )
    for suffix in SUFFIXES:
        if os.path.isdir(prefix + suffix):
            raise OutputError(
                f"-e {prefix}: '{prefix + suffix}' is a folder, the output file cannot replace "
                "it; remove it or choose another prefix with -e"
            )
    try:
        fd, probe = tempfile.mkstemp(dir=folder, prefix=TEMP_PREFIX, suffix=".tmp")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise OutputError(
            f"-e {prefix}: cannot write in the folder '{folder}' ({exc.strerror}); choose a "
            "writable place with -e"
        ) from None


def _file_in_the_way(folder: str) -> str | None:
    """The first ancestor of `folder` (as the user wrote it) that exists and is no folder."""
    ancestors = []
    path = os.path.normpath(folder)
    while path and path not in ancestors:
        ancestors.append(path)
        path = os.path.dirname(path)
    for p in reversed(ancestors):
        if os.path.exists(p) and not os.path.isdir(p):
            return p
    return None


def write_outputs(sim: Any, prefix: str, simulation_time: float,
                  report: OutputReport | None = None,
                  only: frozenset[str] | None = None) -> list[str]:
    """Write the files (all complete, or none replaced); return their paths.

    `only`: write just these suffixes (e.g. {"schedule.trace"}), the others being up to date.

    Raises OutputError naming the file that could not be written (its temporary files are
    removed; the previous outputs under this prefix, if any, stay as they were).
    """
    report = OutputReport() if report is None else report
    folder = _folder(prefix)
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{folder}: cannot create the output folder ({exc.strerror})") from None
    ms = sim.machine_states
    times: list[Any] = []

    def jobs(f: TextIO) -> None:
        times.append(jobs_csv.write_rows(sim.job_records, f))

    def schedule(f: TextIO) -> None:
        # (popped: a million jobs' long double columns, 70 MB, need not live while the trace
        # is formatted)
        f.write(schedule_text(sim, times.pop(), simulation_time))

    files: list[tuple[str, Callable[[TextIO], None]]] = [
        ("jobs.csv", jobs), ("schedule.csv", schedule)]
    v5 = getattr(sim.options, "output_layout", "v4") == "v5"
    if v5:  # Batsim 5's files (output/v5_layout.py)
        from batsim_py.output import v5_layout

        files = v5_layout.files(sim, simulation_time, schedule_text)
    trace = sim.energy_trace
    if trace is not None:
        files.append(("consumed_energy.csv", lambda f: f.write(
            "time,energy,event_type,wattmin,epower\n" + "".join(r + "\n" for r in trace.rows))))
        files.append(("pstate_changes.csv", lambda f: f.write(
            "time,machine_id,new_pstate\n" + "".join(r + "\n" for r in trace.pstate_rows))))
    paje = sim.paje
    if paje is not None and not v5:
        def schedule_trace(f: TextIO) -> None:
            final = f"{prefix}_schedule.trace"
            f.flush()
            out = f.buffer  # type: ignore[attr-defined]  # (bytes: the native writer's)
            body_end = _reuse_body(out, final, paje.written, len(paje.times))
            if body_end < 0:
                body_end = paje.write_body(out)
            out.write(paje.trailer(sim.engine.now).encode())
            out.flush()
            st = os.fstat(f.fileno())
            # What a rewrite at a later clock reuses (run.py rewrites the trace at exit).
            paje.written = (final, body_end, len(paje.times), st.st_dev, st.st_ino, st.st_size)
        files.append(("schedule.trace", schedule_trace))
    if sim.options.machine_state_tracing:
        def machine_states(f: TextIO) -> None:
            f.write(machine_states_csv.HEADER + "\n")
            for text in ms.text_chunks(jobs_csv.CHUNK):
                f.write(text)
        files.append(("machine_states.csv", machine_states))

    if only is not None:
        files = [(suffix, fill) for suffix, fill in files if suffix in only]
    if ([suffix for suffix, _ in files] == ["schedule.trace"] and paje is not None
            and _retrail(paje, f"{prefix}_schedule.trace", folder, sim.engine.now)):
        final = f"{prefix}_schedule.trace"
        if final not in report.paths:
            report.paths.append(final)
        return [final]
    mode = _file_mode()
    temps: list[tuple[str, str]] = []  # (temporary, final)
    try:
        for suffix, fill in files:
            final = f"{prefix}{suffix}" if v5 else f"{prefix}_{suffix}"
            try:
                fd, temp = tempfile.mkstemp(dir=folder, prefix=TEMP_PREFIX, suffix=".tmp")
            except OSError as exc:
                raise OutputError(f"{final}: cannot write it ({exc.strerror}){_none()}") from None
            temps.append((temp, final))
            try:
                os.fchmod(fd, mode)
                with open(fd, "w", encoding="utf-8", newline="") as f:
                    fill(f)
            except OSError as exc:
                raise OutputError(f"{final}: cannot write it ({exc.strerror}){_none()}") from None
        for temp, final in temps:
            try:
                os.replace(temp, final)
            except OSError as exc:
                raise OutputError(
                    f"{final}: cannot write it ({exc.strerror}); written: "
                    f"{', '.join(report.paths) or 'nothing'}") from None
            if final not in report.paths:
                report.paths.append(final)
    except BaseException as exc:
        for temp, _ in temps:
            try:
                os.unlink(temp)
            except OSError:
                pass  # already renamed, or never created
        if isinstance(exc, OutputError):
            report.error = str(exc)
        raise
    return [final for _, final in temps]


def _retrail(paje: Any, final: str, folder: str, end_time: float) -> bool:
    """Rewrite the trace at `final` with a new trailer (its end date) and nothing else, when
    it is still the file written last time and no record was added since (run.py rewrites it
    at the exit clock in batsim timing): without formatting or copying its body (a million
    jobs on 1,024 hosts: 13 GB). False (nothing changed) when it cannot; then the caller
    writes the whole trace as usual.

    Never is a truncated trace left under its name: the complete file is first renamed to a
    temporary name (atomic: `final` is then absent), cut at the end of its body and given the
    new trailer there, then renamed back (atomic). A crash in between leaves no file at
    `final` (and a hidden temporary one), never a partial one; a write error in between
    removes the temporary file and the caller writes the trace again from its records."""
    written = paje.written
    if written is None:
        return False
    path, body_end, records, dev, ino, size = written
    if path != final or records != len(paje.times):
        return False
    try:
        st = os.lstat(final)  # (a symbolic link put there is not the file written)
        fd, temp = tempfile.mkstemp(dir=folder, prefix=TEMP_PREFIX, suffix=".tmp")
        os.close(fd)
    except OSError:
        return False
    if (st.st_dev, st.st_ino, st.st_size) != (dev, ino, size) or size < body_end:
        os.unlink(temp)
        return False
    try:
        os.replace(final, temp)  # the complete trace leaves its name
    except OSError:
        os.unlink(temp)
        return False
    try:
        with open(temp, "r+b") as f:
            moved = os.fstat(f.fileno())
            if (moved.st_dev, moved.st_ino, moved.st_size) != (dev, ino, size):
                # (replaced between the check and the rename: put it back as it was)
                os.replace(temp, final)
                return False
            f.truncate(body_end)
            f.seek(body_end)
            f.write(paje.trailer(end_time).encode())
            f.flush()
            new_size = os.fstat(f.fileno()).st_size
        os.replace(temp, final)
    except OSError:
        try:
            os.unlink(temp)
        except OSError:
            pass
        return False
    paje.written = (final, body_end, records, dev, ino, new_size)
    return True


def _reuse_body(out: BinaryIO, final: str, written: Any, nb_records: int) -> int:
    """Put into the empty temporary file `out` the body of the trace written last time at
    `final`, if that file is still the one written then (same file, size) and no record was
    added since: only its trailer (the end date) can differ, and formatting a million-job
    trace again costs seconds. The body's length in bytes, or -1 (then the caller formats it).

    The body is not copied through Python: the whole file is cloned (FICLONE: copy-free on
    file systems sharing blocks, btrfs, XFS, ...), else copied by the kernel
    (`copy_file_range`: no pass through user space; a reflink on some file systems and a
    server-side copy on NFS 4.2), else read and written by blocks; the clone is then cut at
    the end of the body, for the new trailer. The old file is never written to: the new one
    replaces it by the usual atomic rename, so a crash leaves one complete trace or the other
    (rewriting the trailer in place would leave a truncated trace if interrupted)."""
    if written is None:
        return -1
    path, body_end, records, dev, ino, size = written
    if path != final or records != nb_records:
        return -1
    out.flush()
    dst = out.fileno()
    try:
        with open(final, "rb") as src:
            st = os.fstat(src.fileno())  # (the file opened, not a name that may have moved)
            if (st.st_dev, st.st_ino, st.st_size) != (dev, ino, size) or size < body_end:
                return -1
            if not _clone(src.fileno(), dst) and not _kernel_copy(src.fileno(), dst, body_end):
                _block_copy(src, dst, body_end)
            if os.fstat(dst).st_size < body_end:
                raise OSError("trace shorter than recorded")
            os.ftruncate(dst, body_end)
    except OSError:
        os.ftruncate(dst, 0)  # start again: the caller formats the body
        out.seek(0)
        return -1
    out.seek(body_end)
    return body_end


_FICLONE = 0x40049409  # Linux's ioctl cloning a whole file (linux/fs.h)


def _clone(src: int, dst: int) -> bool:
    """Share `src`'s blocks with the empty `dst` (copy-free); False where not supported."""
    try:
        import fcntl

        fcntl.ioctl(dst, _FICLONE, src)
    except (OSError, ImportError, AttributeError):
        return False
    return True


def _kernel_copy(src: int, dst: int, count: int) -> bool:
    """Copy `count` bytes from the start of `src` into `dst` in the kernel; False when
    `copy_file_range` is not there or refuses these files (then nothing was written)."""
    copy = getattr(os, "copy_file_range", None)
    if copy is None:
        return False
    done = 0
    while done < count:
        try:
            n = copy(src, dst, count - done, done, done)
        except OSError:
            if done:
                raise
            return False
        if n == 0:  # end of the source before `count`
            raise OSError("trace shorter than recorded")
        done += n
    return True


def _block_copy(src: BinaryIO, dst: int, count: int) -> None:
    left = count
    os.lseek(dst, 0, os.SEEK_SET)
    while left > 0:
        block = src.read(min(left, 1 << 20))
        if not block:
            raise OSError("trace shorter than recorded")
        view = memoryview(block)
        while view:
            view = view[os.write(dst, view):]
        left -= len(block)


def _none() -> str:
    return "; no output file was written (the previous ones, if any, are unchanged)"


def _file_mode() -> int:
    """The mode `open` would give a new file (mkstemp makes it private)."""
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


def schedule_text(sim: Any, times: JobTimes, simulation_time: float) -> str:
    """schedule.csv of `sim` (header and row), from the job metrics jobs.csv computed."""
    return format_schedule(
        times=times,
        nb_machines=len(sim.machines),
        time_in_state=sim.machine_states.time_in(),
        consumed_joules=(sim.energy_trace.consumed_joules()
                         if sim.energy_trace is not None else 0.0),
        nb_grouped_switches=sim.nb_grouped_switches,
        nb_machine_switches=sim.nb_machine_switches,
        scheduling_time=sim.scheduling_time,
        simulation_time=simulation_time,
        version=sim.options.version,
    )
