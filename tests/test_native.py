"""The compiled kernel (mypyc) gives the pure-Python kernel's outputs byte for byte, and a
compiled module older than its source is never used."""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from batsim_py import native

PROJECT = Path(__file__).resolve().parents[1]
REFERENCE = PROJECT / "tests" / "conformance" / "reference"
F_10K = REFERENCE / "f_10k_easy_cluster128_quiet"

E3 = "tests/conformance/reference/e3_kill_batsched_killer2_delays_small"
RUNS = {
    # delay and composed jobs, EASY, messages over a real network
    "easy_1k": ["-p", "platforms/cluster128.xml", "-w", "workloads/gen_delay_1k_128.json",
                "--scheduler", "easy"],
    # energy, sleeping and waking machines (the engine's activity hooks and tasks)
    "energy": ["-p", "platforms/energy8.xml", "-w", "workloads/delays_small.json", "-E",
               "--scheduler", "fcfs_sleep", "--sched-cfg", '{"idle_timeout": 30}'],
    "mixed": ["-p", "platforms/small4.xml", "-w", "workloads/mixed_small.json",
              "--scheduler", "fcfs"],
    # parallel tasks on shared machines
    "sharing": ["-p", "platforms/cluster128.xml", "-w", "workloads/parallel_small.json",
                "--scheduler", "easy", "--enable-compute-sharing", "--timing", "ideal"],
    # kills with progress reports, profiles forwarded (a recorded batsched run, replayed)
    "kills": ["-p", f"{E3}/small_platform.xml", "-w", f"{E3}/test_delays.json",
              "--forward-profiles-on-submission", "--scheduler",
              f"replay:{E3}/transcript.jsonl"],
    # machines becoming unavailable (an --events file), a user scheduler class
    "events": ["-p", "platforms/small4.xml", "-w", "workloads/delays_small.json",
               "--events", "workloads/events_small.jsonl",
               "--scheduler", "examples/inprocess_fcfs.py:AvailabilityFcfs"],
    # the peers that call the simulation's methods: Flux, batprotocol EDC, legacy, pybatsim
    "flux": ["-p", "platforms/small4.xml", "-w", "workloads/delays_small.json",
             "--protocol", "flux", "--flux-scheduler", "easy"],
    "edc": ["-p", "platforms/small4.xml", "-w", "workloads/delays_small.json",
            "-l", "batsim_py.edcs.easy", "{}"],
    "legacy": ["-p", "platforms/small4.xml", "-w", "workloads/delays_small.json",
               "--legacy-protocol", "1", "-s", "unix:{tmp}/sock", "--scheduler-command",
               "python -m batsim_py.legacy_client.fcfs -s unix:{tmp}/sock --version 1 "
               "-w workloads/delays_small.json"],
    "pybatsim": ["-p", "platforms/small4.xml", "-w", "workloads/delays_small.json",
                 "--scheduler", "pybatsim:easyBackfill"],
}


def _outputs(tmp: Path, args: list[str], pure: bool) -> dict[str, bytes]:
    env = dict(os.environ)
    env.pop("BATSIM_PY_PURE", None)
    if pure:
        env["BATSIM_PY_PURE"] = "1"
    prefix = tmp / ("pure" if pure else "compiled")
    args = [a.replace("{tmp}", str(tmp)) for a in args]
    subprocess.run([sys.executable, "-m", "batsim_py.cli", *args, "-q", "-e", str(prefix)],
                   cwd=PROJECT, env=env, check=True, capture_output=True)
    return {p.name.split("_", 1)[1]: p.read_bytes() for p in tmp.glob(prefix.name + "_*")}


@pytest.mark.skipif(not native.compiled_modules(), reason="installed without a compiled kernel")
@pytest.mark.parametrize("case", sorted(RUNS))
def test_compiled_and_pure_outputs_are_identical(tmp_path: Path, case: str) -> None:
    if case == "kills" and not (PROJECT / E3).is_dir():
        pytest.skip("needs the reference corpus")
    if case == "pybatsim" and importlib.util.find_spec("batsim") is None:
        pytest.skip("pybatsim is not installed")
    compiled = _outputs(tmp_path, RUNS[case], pure=False)
    pure = _outputs(tmp_path, RUNS[case], pure=True)
    assert "jobs.csv" in compiled and compiled.keys() == pure.keys()
    for name in compiled:
        if name == "schedule.csv":  # its wall-clock columns differ from run to run
            compiled[name], pure[name] = (_without_clock(compiled[name]),
                                          _without_clock(pure[name]))
        assert compiled[name] == pure[name], name


@pytest.mark.skipif(not native.compiled_modules(), reason="installed without a compiled kernel")
@pytest.mark.skipif(not F_10K.is_dir(), reason="needs the reference corpus")
def test_compiled_and_pure_agree_on_ten_thousand_jobs(tmp_path: Path) -> None:
    """The f_10k reference workload on 512 hosts: long EASY queues, block machine updates."""
    args = ["-p", str(F_10K / "cluster512.xml"), "-w",
            str(F_10K / "gen_delay_10k_128_seed42_load0.7.json"), "--mmax-workload",
            "--scheduler", "easy"]
    compiled = _outputs(tmp_path, args, pure=False)
    pure = _outputs(tmp_path, args, pure=True)
    assert compiled["jobs.csv"] == pure["jobs.csv"]
    assert compiled["machine_states.csv"] == pure["machine_states.csv"]
    assert _without_clock(compiled["schedule.csv"]) == _without_clock(pure["schedule.csv"])


@pytest.mark.skipif(not native.compiled_modules(), reason="installed without a compiled kernel")
def test_compiled_lean_kernel_takes_its_shortcuts(tmp_path: Path) -> None:
    """The lean --timing ideal kernel, compiled, takes its shortcuts (an identity test on a
    Final tuple once made them never apply compiled, unseen: outputs stay right either way)
    and gives the pure kernel's outputs."""
    args = ["-p", "platforms/cluster128.xml", "-w", "workloads/gen_delay_1k_128.json",
            "--scheduler", "easy", "--timing", "ideal"]
    compiled = _outputs(tmp_path, args, pure=False)
    pure = _outputs(tmp_path, args, pure=True)
    assert compiled.keys() == pure.keys()
    for name in compiled:
        if name == "schedule.csv":
            compiled[name], pure[name] = (_without_clock(compiled[name]),
                                          _without_clock(pure[name]))
        assert compiled[name] == pure[name], name
    env = {k: v for k, v in os.environ.items() if k != "BATSIM_PY_PURE"}
    out = subprocess.run([sys.executable, "-m", "batsim_py.cli", *args, "-v", "debug", "-e",
                          str(tmp_path / "log")], cwd=PROJECT, env=env, check=True,
                         capture_output=True, text=True).stderr
    line = next(x for x in out.splitlines() if "scheduler replies applied without rounds" in x)
    replies, wakes, steps = (int(w) for w in line.split() if w.isdigit())
    assert replies > 1000 and wakes > 1000 and steps > 1000, line


def _without_clock(schedule: bytes) -> list[list[str]]:
    header, row = schedule.decode().splitlines()
    names, values = header.split(","), row.split(",")
    clock = {"simulation_time", "scheduling_time"}
    return [[n, v] for n, v in zip(names, values, strict=True) if n not in clock]


def _run_mypy(api, args: list[str]) -> tuple[str, str, int]:
    """mypy in this process, leaving the recursion limit as it was: mypy raises it to 16,384
    for good, and later tests in the same process (the JSON nesting checks of
    tests/fuzz/test_fuzz_events.py) then see a different interpreter."""
    limit = sys.getrecursionlimit()
    try:
        return api.run(args)
    finally:
        sys.setrecursionlimit(limit)


def test_compiled_modules_type_check(tmp_path: Path) -> None:
    """mypyc compiles only what type-checks: a type error in a kernel module would silently
    leave it pure Python (the install only warns), so it fails here."""
    api = pytest.importorskip("mypy.api")
    files = [str(PROJECT / native.source_of(name)) for name in native.COMPILED]
    out, err, status = _run_mypy(api, [*files, "--config-file", str(PROJECT / "pyproject.toml"),
                                       "--cache-dir", str(tmp_path / "cache")])
    assert status == 0, out + err


def test_pure_environment_runs_the_sources() -> None:
    code = ("import sys; from batsim_py import native; print(native.compiled_modules(), "
            "all(sys.modules[n].__file__.endswith('.py') for n in native.COMPILED))")
    env = dict(os.environ, BATSIM_PY_PURE="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True,
                         capture_output=True, text=True).stdout
    assert out.split() == ["[]", "True"]


def _fake_package(tmp: Path, monkeypatch, record: str | None) -> None:
    """A package whose module has both a source and an 'extension' (bytes that cannot load:
    importing it fails, so a passing import shows the source was chosen), with the build's
    record of the compiled source's hash (`record`: "same", "other" or None for no record)."""
    pkg = tmp / "fakepkg_native"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    source = pkg / "mod.py"
    source.write_text("WHERE = 'source'\n")
    (pkg / ("mod" + importlib.machinery.EXTENSION_SUFFIXES[0])).write_bytes(b"not an ELF file")
    if record is not None:
        compiled = source.read_bytes() if record == "same" else b"WHERE = 'before the edit'\n"
        (pkg / native.RECORD).write_text(
            f"fakepkg_native.mod {hashlib.sha256(compiled).hexdigest()}\n")
    monkeypatch.syspath_prepend(str(tmp))
    monkeypatch.setattr(native, "COMPILED", ("fakepkg_native.mod",))
    monkeypatch.delenv("BATSIM_PY_PURE", raising=False)
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    for name in ("fakepkg_native", "fakepkg_native.mod"):
        monkeypatch.delitem(sys.modules, name, raising=False)


def test_edited_source_is_run_instead_of_its_stale_extension(tmp_path: Path, monkeypatch) -> None:
    _fake_package(tmp_path, monkeypatch, record="other")
    with pytest.warns(UserWarning, match="changed since compiled"):
        native.choose_modules()
    import fakepkg_native.mod

    assert fakepkg_native.mod.WHERE == "source"


@pytest.mark.parametrize("record", ["same", None])
def test_extension_of_this_source_is_imported(tmp_path: Path, monkeypatch, record) -> None:
    _fake_package(tmp_path, monkeypatch, record=record)
    native.choose_modules()
    with pytest.raises(ImportError):  # the 'extension' is what Python imports
        import fakepkg_native.mod  # noqa: F401


def test_one_changed_source_sends_the_whole_group_to_sources(tmp_path: Path,
                                                            monkeypatch) -> None:
    """Compiled modules call each other natively: running one from its source beside its
    compiled partners would still run their old code for those calls."""
    _fake_package(tmp_path, monkeypatch, record="same")
    pkg = tmp_path / "fakepkg_native"
    (pkg / "other.py").write_text("WHERE = 'source'\n")
    (pkg / ("other" + importlib.machinery.EXTENSION_SUFFIXES[0])).write_bytes(b"not an ELF")
    with open(pkg / native.RECORD, "a") as f:
        f.write(f"fakepkg_native.other {hashlib.sha256(b'edited since').hexdigest()}\n")
    monkeypatch.setattr(native, "COMPILED", ("fakepkg_native.mod", "fakepkg_native.other"))
    with pytest.warns(UserWarning, match="other.py changed since compiled"):
        native.choose_modules()
    import fakepkg_native.mod
    import fakepkg_native.other

    assert fakepkg_native.mod.WHERE == fakepkg_native.other.WHERE == "source"


# -- a fresh install compiles, and a pure kernel does not go unnoticed ----------------------


def test_compiled_modules_type_check_as_pip_builds_them(tmp_path: Path) -> None:
    """pip builds in an isolated environment holding only the build requirements: mypyc's
    type check must pass there. A fresh install stayed pure Python, silently, when it did not
    (numpy missing for sharing/solver.py; later the Python API's pandas and simpy)."""
    import re

    api = pytest.importorskip("mypy.api")
    tomllib = pytest.importorskip("tomllib")  # (Python 3.11+)
    requires = tomllib.loads((PROJECT / "pyproject.toml").read_text())["build-system"][
        "requires"]
    names = [re.split(r"[<>=!~ \[;]", r)[0] for r in requires]
    # A Python whose site-packages holds the build requirements' libraries and nothing else.
    venv = tmp_path / "build-env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; "
                           "print(sysconfig.get_paths()['purelib'])"], check=True,
                          capture_output=True, text=True).stdout.strip()
    for name in names:
        if name in ("setuptools", "mypy"):  # the build's tools, not libraries it reads
            continue
        module = importlib.import_module(name)
        Path(site, name).symlink_to(Path(module.__file__).parent)
    files = [str(PROJECT / native.source_of(name)) for name in native.COMPILED]
    out, err, status = _run_mypy(api, [*files, "--config-file", str(PROJECT / "pyproject.toml"),
                                       "--python-executable", str(python),
                                       "--cache-dir", str(tmp_path / "cache")])
    assert status == 0, out + err


def test_version_names_the_kernel() -> None:
    out = subprocess.run([sys.executable, "-m", "batsim_py.cli", "--version"], cwd=PROJECT,
                         check=True, capture_output=True, text=True).stdout
    assert out.startswith("batsim-py 0.1.0 (kernel: ")
    expected = "compiled by mypyc" if native.compiled_modules() else "pure Python"
    assert expected in out
    from batsim_py.workload import fast

    # (the run sees BATSIM_PY_PURE as the tests set it: tests/conftest.py sets it in a tree
    # whose kernel is not compiled, even where the C loader is built and imported here)
    pure = bool(os.environ.get("BATSIM_PY_PURE"))
    loader = "native (C)" if fast.NATIVE is not None and not pure else "pure Python"
    assert f"; workload loader: {loader}" in out


def _run_logs(monkeypatch, caplog, tmp_path: Path, compiled: list[str]) -> list[str]:
    from batsim_py.cli import main

    monkeypatch.setattr(native, "compiled_modules", lambda: compiled)
    monkeypatch.setattr(native, "_logged", False)
    monkeypatch.setattr(native, "_stale", False)
    monkeypatch.chdir(PROJECT)
    with caplog.at_level("INFO"):
        for _ in range(2):  # (once per process)
            assert main(["-p", "platforms/small4.xml", "-w", "workloads/delays_small.json",
                         "--scheduler", "fcfs", "-e", str(tmp_path / "out")]) == 0
    return [r.getMessage() for r in caplog.records if "pure-Python kernel" in r.getMessage()]


def test_a_run_on_the_pure_kernel_says_so_once(monkeypatch, caplog, tmp_path: Path) -> None:
    monkeypatch.delenv("BATSIM_PY_PURE", raising=False)
    lines = _run_logs(monkeypatch, caplog, tmp_path, compiled=[])
    assert len(lines) == 1
    assert "pure-Python kernel" in lines[0] and "pip install -v ." in lines[0]
    assert "BATSIM_PY_PURE=1" in lines[0]


def test_no_notice_when_asked_for_or_compiled(monkeypatch, caplog, tmp_path: Path) -> None:
    monkeypatch.setenv("BATSIM_PY_PURE", "1")
    assert _run_logs(monkeypatch, caplog, tmp_path, compiled=[]) == []
    monkeypatch.delenv("BATSIM_PY_PURE")
    assert _run_logs(monkeypatch, caplog, tmp_path, compiled=list(native.COMPILED)) == []


def test_the_build_leaves_why_it_did_not_compile(tmp_path: Path, monkeypatch) -> None:
    """setup.py writes the reason into the built package; the kernel label reports it."""
    import shutil

    tree = tmp_path / "tree"  # (a copy: the build leaves files beside setup.py)
    tree.mkdir()
    for name in ("setup.py", "pyproject.toml", "README.md"):
        shutil.copy(PROJECT / name, tree / name)
    for name in ("platforms", "workloads"):  # (the build ships their files: none here)
        (tree / name).mkdir()
    shutil.copytree(PROJECT / "batsim_py", tree / "batsim_py",
                    ignore=shutil.ignore_patterns("__pycache__", "*.so", "_kernel_*"))
    built = tmp_path / "built"
    env = dict(os.environ, BATSIM_PY_PURE="1")
    subprocess.run([sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(built)],
                   cwd=tree, env=env, check=True, capture_output=True)
    note = (built / "batsim_py" / native.NOT_COMPILED).read_text()
    assert note.strip() == "not compiled at install: BATSIM_PY_PURE was set"
    monkeypatch.setattr(native, "__file__", str(built / "batsim_py" / "native.py"))
    monkeypatch.setattr(native, "compiled_modules", lambda: [])
    monkeypatch.setattr(native, "_stale", False)
    monkeypatch.delenv("BATSIM_PY_PURE", raising=False)
    assert native.kernel_label() == ("kernel: pure Python (not compiled at install: "
                                     "BATSIM_PY_PURE was set)")
