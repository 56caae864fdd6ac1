"""The campaign file: a grid of factors, expanded into runs, each with a stable id.

Why a hash of the *resolved* configuration: resuming a campaign must know which runs are
already done, and only a run whose inputs are unchanged may be skipped. The id is the SHA-256
of a canonical JSON object holding everything that decides the run's outputs: the platform's
and the workload files' contents (their SHA-256, not their paths: the campaign folder may
move), a generator's parameters and seed, the scheduler and its options, the timing mode and
energy. Editing a workload file changes the ids of its runs (they are run again); adding a
scheduler to the grid adds runs and keeps the others' ids.

A run is one platform x one workload entry x one scheduler x one timing x one energy value
x one seed x one replication. Seeds and replications only reach generated workloads: runs
whose workloads are all files do not depend on them, and are run once (the duplicates share
an id and are dropped).
"""

from __future__ import annotations

import hashlib
import inspect
import itertools
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from batsim_py import shipped
from batsim_py.errors import UsageError
from batsim_py.workload.generate import generate_delay_workload

ID_LENGTH = 16
"""Hex digits of a run id (64 bits of the SHA-256: collisions are out of reach)."""

KEYS = ("name", "platforms", "workloads", "schedulers", "timing", "energy", "seeds",
        "replications", "batch_size", "run_time_limit")
"""The keys a campaign file may have (anything else is refused: a typo must not silently
drop a factor)."""

GENERATOR_KEYS = tuple(p for p in inspect.signature(generate_delay_workload).parameters
                       if p != "seed")
"""Parameters of a `generate:` workload entry (those of `generate_delay_workload`, seed aside:
it comes from the run's seed)."""


class CampaignError(UsageError):
    """The campaign file is missing, malformed or names inputs that do not exist."""


@dataclass(frozen=True)
class InputFile:
    """A platform or workload file: its path here and the SHA-256 of its content."""

    name: str  # as written in the campaign file (shown in the table)
    path: str  # absolute
    sha256: str


@dataclass(frozen=True)
class Generated:
    """A workload drawn by `batsim_py.workload.generate.generate_delay_workload`."""

    params: tuple[tuple[str, Any], ...]  # sorted (name, value) pairs, seed excluded

    @property
    def label(self) -> str:
        return "generate(" + ",".join(f"{k}={v}" for k, v in self.params) + ")"


@dataclass(frozen=True)
class RunConfig:
    """One run of the campaign, fully resolved (picklable: it travels to Dask workers)."""

    run_id: str
    index: int  # position in the expanded grid (the table's order)
    platform: InputFile
    workloads: tuple[InputFile | Generated, ...]
    scheduler: str
    sched_options: tuple[tuple[str, Any], ...]
    timing: str
    energy: bool
    seed: int | None  # None: no generated workload, the run does not depend on it
    replication: int | None
    workload_seed: int | None  # the seed given to the generators (see `workload_seed`)

    @property
    def options_json(self) -> str:
        """The scheduler options as the command line's `--sched-cfg` takes them."""
        return json.dumps(dict(self.sched_options), sort_keys=True, separators=(",", ":"))

    def factors(self) -> dict[str, Any]:
        """The run's factor levels, as the metrics table shows them."""
        return {
            "platform": self.platform.name,
            "workload": "+".join(w.name if isinstance(w, InputFile) else w.label
                                 for w in self.workloads),
            "scheduler": self.scheduler,
            "sched_options": self.options_json if self.sched_options else "",
            "timing": self.timing,
            "energy": self.energy,
            "seed": self.seed,
            "replication": self.replication,
            "workload_seed": self.workload_seed,
        }


@dataclass
class CampaignSpec:
    name: str
    runs: list[RunConfig]
    source: str  # the file it came from ("" for a dict)
    batch_size: int | None = None
    dropped_duplicates: int = 0
    run_time_limit: float | None = None  # seconds of wall time per run (None: no limit)
    raw: dict[str, Any] = field(default_factory=dict)


def workload_seed(seed: int, replication: int) -> int:
    """The generators' seed of replication `replication` of seed `seed`: `seed` itself for
    replication 0 (so a one-replication campaign draws what `batsim-py generate --seed`
    draws), else 31 bits of SHA-256 of "seed:replication" (independent streams; adding
    replications keeps the earlier ones' seeds and ids)."""
    if replication == 0:
        return seed
    digest = hashlib.sha256(f"{seed}:{replication}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFF_FFFF


def load_spec(source: str | os.PathLike[str] | Mapping[str, Any]) -> CampaignSpec:
    """Read a campaign file (YAML or JSON; JSON is YAML) or take a dict; expand its grid."""
    if isinstance(source, Mapping):
        return expand(dict(source), base=os.getcwd(), source="")
    path = os.fspath(source)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as exc:
        raise CampaignError(f"campaign file {path}: cannot read it ({exc.strerror})") from None
    from batsim_py.campaign.deps import need

    yaml = need("yaml", "PyYAML reads campaign files")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise CampaignError(f"{path}{where}: not valid YAML/JSON: {problem}") from None
    if not isinstance(data, dict):
        raise CampaignError(f"{path}: a campaign file is a mapping (platforms:, workloads:, "
                            f"schedulers:, ...), not {type(data).__name__}")
    return expand(data, base=os.path.dirname(os.path.abspath(path)), source=path)


def _list(data: Mapping[str, Any], key: str, default: Sequence[Any] | None, where: str
          ) -> list[Any]:
    value = data.get(key, default)
    if value is None:
        raise CampaignError(f"{where}: '{key}' is required (a list)")
    if not isinstance(value, list):
        value = [value]
    if not value:
        raise CampaignError(f"{where}: '{key}' is an empty list: give at least one value")
    return value


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _input(given: Any, kind: str, base: str, where: str) -> InputFile:
    if not isinstance(given, str) or not given:
        raise CampaignError(f"{where}: a {kind} is a file path or a shipped name, not {given!r}")
    candidate = given if os.path.isabs(given) else os.path.join(base, given)
    if os.path.exists(candidate):
        path = candidate
    else:
        path = shipped.resolve(given, kind)
        if not os.path.exists(path):
            raise CampaignError(f"{where}: {kind} '{given}' is neither a file (looked in {base}) "
                                "nor a shipped name (batsim-py --list-examples lists them)")
    try:
        digest = _sha256(path)
    except OSError as exc:
        raise CampaignError(f"{where}: {kind} '{given}': cannot read it ({exc.strerror})"
                            ) from None
    return InputFile(given, os.path.abspath(path), digest)


def _workload_entry(entry: Any, base: str, where: str) -> tuple[InputFile | Generated, ...]:
    items = entry if isinstance(entry, list) else [entry]
    out: list[InputFile | Generated] = []
    for item in items:
        if isinstance(item, dict):
            if set(item) != {"generate"} or not isinstance(item["generate"], dict):
                raise CampaignError(f"{where}: a generated workload is written "
                                    f"{{generate: {{nb_jobs: N, nb_res: M, ...}}}}, not {item!r}")
            params = item["generate"]
            unknown = sorted(set(params) - set(GENERATOR_KEYS))
            if unknown:
                hint = " (seeds come from the 'seeds' factor)" if "seed" in unknown else ""
                raise CampaignError(f"{where}: unknown generator parameter(s) "
                                    f"{', '.join(unknown)}{hint} (known: "
                                    f"{', '.join(GENERATOR_KEYS)})")
            for needed in ("nb_jobs", "nb_res"):
                if needed not in params:
                    raise CampaignError(f"{where}: generate needs {needed}")
            out.append(Generated(tuple(sorted(params.items()))))
        else:
            out.append(_input(item, "workload", base, where))
    return tuple(out)


def _scheduler(entry: Any, where: str) -> tuple[str, tuple[tuple[str, Any], ...]]:
    if isinstance(entry, str) and entry:
        name, options = entry, {}
    elif isinstance(entry, dict) and isinstance(entry.get("name"), str):
        unknown = sorted(set(entry) - {"name", "options"})
        if unknown:
            raise CampaignError(f"{where}: scheduler keys are name and options, not "
                                f"{', '.join(unknown)}")
        name, options = entry["name"], entry.get("options") or {}
        if not isinstance(options, dict):
            raise CampaignError(f"{where}: scheduler {name}: options is a mapping")
    else:
        raise CampaignError(f"{where}: a scheduler is a name (easy) or "
                            f"{{name: NAME, options: {{...}}}}, not {entry!r}")
    if name.startswith(("tcp://", "ipc://", "inproc://", "replay:")):
        raise CampaignError(f"{where}: scheduler '{name}': campaigns run in-process "
                            "schedulers only (a name, MODULE:CLASS or path/file.py:CLASS)")
    try:
        json.dumps(options)
    except (TypeError, ValueError):
        raise CampaignError(f"{where}: scheduler {name}: options must be JSON values") from None
    return name, tuple(sorted(options.items()))


def _identity(platform: InputFile, workloads: Sequence[InputFile | Generated], scheduler: str,
              options: Sequence[tuple[str, Any]], timing: str, energy: bool,
              wseed: int | None) -> str:
    """The run id: SHA-256 of what decides the outputs (see the module docstring)."""
    def w(item: InputFile | Generated) -> Any:
        if isinstance(item, InputFile):
            return {"file": item.sha256}
        return {"generate": dict(item.params), "seed": wseed}

    identity = {
        "platform": platform.sha256,
        "workloads": [w(x) for x in workloads],
        "scheduler": scheduler,
        "options": dict(options),
        "timing": timing,
        "energy": energy,
    }
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:ID_LENGTH]


def expand(data: dict[str, Any], base: str, source: str) -> CampaignSpec:
    """The runs of a campaign mapping (paths relative to `base`), in grid order."""
    where = source or "campaign"
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise CampaignError(f"{where}: unknown key(s) {', '.join(unknown)} "
                            f"(known: {', '.join(KEYS)})")
    platforms = [_input(p, "platform", base, f"{where}: platforms")
                 for p in _list(data, "platforms", None, where)]
    workloads = [_workload_entry(e, base, f"{where}: workloads")
                 for e in _list(data, "workloads", None, where)]
    schedulers = [_scheduler(s, f"{where}: schedulers")
                  for s in _list(data, "schedulers", None, where)]
    timings = _list(data, "timing", ["batsim"], where)
    for t in timings:
        if t not in ("batsim", "ideal"):
            raise CampaignError(f"{where}: timing must be batsim or ideal, not {t!r}")
    energies = _list(data, "energy", [False], where)
    for e in energies:
        if not isinstance(e, bool):
            raise CampaignError(f"{where}: energy values are true or false, not {e!r}")
    seeds = _list(data, "seeds", [0], where)
    for s in seeds:
        if not isinstance(s, int) or isinstance(s, bool) or s < 0:
            raise CampaignError(f"{where}: seeds are integers >= 0, not {s!r}")
    replications = data.get("replications", 1)
    if not isinstance(replications, int) or isinstance(replications, bool) or replications < 1:
        raise CampaignError(f"{where}: replications is an integer >= 1, not {replications!r}")
    batch_size = data.get("batch_size")
    if batch_size is not None and (not isinstance(batch_size, int) or batch_size < 1):
        raise CampaignError(f"{where}: batch_size is an integer >= 1, not {batch_size!r}")
    time_limit = data.get("run_time_limit")
    if time_limit is not None:
        time_limit = check_time_limit(time_limit, f"{where}: run_time_limit")
    name = data.get("name") or (os.path.splitext(os.path.basename(source))[0] or "campaign")

    runs: list[RunConfig] = []
    seen: set[str] = set()
    dropped = 0
    grid = itertools.product(platforms, workloads, schedulers, timings, energies, seeds,
                             range(replications))
    for platform, wl, (sched, opts), timing, energy, seed, rep in grid:
        generated = any(isinstance(w, Generated) for w in wl)
        wseed = workload_seed(seed, rep) if generated else None
        run_id = _identity(platform, wl, sched, opts, timing, energy, wseed)
        if run_id in seen:
            dropped += 1
            continue
        seen.add(run_id)
        runs.append(RunConfig(run_id, len(runs), platform, wl, sched, opts, timing, energy,
                              seed if generated else None, rep if generated else None, wseed))
    return CampaignSpec(str(name), runs, source, batch_size, dropped, raw=data,
                        run_time_limit=time_limit)


def check_time_limit(value: Any, where: str) -> float:
    """A per-run time limit: a number of seconds > 0 (not part of the run ids: the same run
    gives the same outputs whatever the limit)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 \
            or value == float("inf"):
        raise CampaignError(f"{where} is a number of seconds > 0 (wall time per run), "
                            f"not {value!r}")
    return float(value)
