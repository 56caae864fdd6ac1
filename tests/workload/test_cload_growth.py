"""The native loader's interning tables (workload/_cload.c, `table_keep`) when they cannot grow.

scan_jobs keeps one object per distinct profile name, walltime and size above 256 in small
tables that double as they fill.  A doubling that fails (no memory) must end the scan with a
MemoryError and leave every reference count as it was.  Before `table_keep`, the object was
put in the table first, and on a failed growth the caller released it and the table released
it again: one reference too few, an object freed while still in use.

No allocation fails on demand in a normal build, so this test compiles _cload.c once more with
a header that makes every PyMem_Malloc above 64 KiB fail (the tables start at 1,024 entries
of 48 bytes, below it; their first doubling asks for 96 KiB, above it) and loads that build
under a private name.  The profile names are interned by the test beforehand, so the loader's
names are the test's own objects and their reference counts tell.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from types import ModuleType

import pytest

from batsim_py.workload.jobs import _JOB_SLOTS, _shape_of
from batsim_py.workload.model import Job

SOURCE = Path(__file__).resolve().parents[2] / "batsim_py" / "workload" / "_cload.c"
HOOK = """\
#define PY_SSIZE_T_CLEAN
#include <Python.h>
static void *mend_test_malloc(size_t n) { return n > 65536 ? NULL : PyMem_Malloc(n); }
#define PyMem_Malloc mend_test_malloc
"""
JOBS = 700  # distinct keys: more than the 511 a table of 1,024 entries holds before it doubles


@pytest.fixture(scope="module")
def starved(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    """_cload built so that its tables cannot grow."""
    cc = shutil.which("cc") or shutil.which("gcc")
    include = sysconfig.get_paths()["include"]
    if cc is None or not (Path(include) / "Python.h").exists():
        pytest.skip("no C compiler or no Python headers to build workload/_cload.c")
    folder = tmp_path_factory.mktemp("cload")
    (folder / "hook.h").write_text(HOOK)
    target = folder / ("_cload" + sysconfig.get_config_var("EXT_SUFFIX"))
    subprocess.run([cc, "-O1", "-shared", "-fPIC", "-I", include, "-include",
                    str(folder / "hook.h"), str(SOURCE), "-o", str(target)], check=True,
                   timeout=120)
    loader = importlib.machinery.ExtensionFileLoader("_cload", str(target))
    spec = importlib.util.spec_from_file_location("_cload", target, loader=loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def _workload(jobs: list[dict]) -> bytes:
    profiles = {j["profile"]: {"type": "delay", "delay": 1} for j in jobs}
    return json.dumps({"nb_res": 4096, "jobs": jobs, "profiles": profiles}).encode()


def _job(i: int, **values: object) -> dict:
    return {"id": i, "subtime": 0, "walltime": 100, "res": 1, "profile": "p", **values}


def test_a_table_that_cannot_grow_fails_cleanly_profiles(starved):
    names = [sys.intern(f"mend_p{i}") for i in range(JOBS)]
    before = [sys.getrefcount(n) for n in names]
    data = _workload([_job(i, profile=names[i]) for i in range(JOBS)])
    with pytest.raises(MemoryError):
        starved.scan_jobs(data, "w0", Job, _JOB_SLOTS, _shape_of)
    assert [sys.getrefcount(n) for n in names] == before  # (one too few before the fix)


@pytest.mark.parametrize("key, value", [("walltime", lambda i: 100 + i),
                                        ("walltime", lambda i: 0.5 + i),
                                        ("res", lambda i: 300 + i)])
def test_a_table_that_cannot_grow_fails_cleanly_numbers(starved, key, value):
    data = _workload([_job(i, **{key: value(i)}) for i in range(JOBS)])
    with pytest.raises(MemoryError):
        starved.scan_jobs(data, "w0", Job, _JOB_SLOTS, _shape_of)
    # below the growth, the same build reads the same text
    small = _workload([_job(i, **{key: value(i)}) for i in range(400)])
    jobs = starved.scan_jobs(small, "w0", Job, _JOB_SLOTS, _shape_of)[2]
    assert [getattr(j, key if key == "walltime" else "res") for j in jobs] == [
        value(i) for i in range(400)]
