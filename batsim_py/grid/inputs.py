"""The inputs of `batsim-py cigri`: a grid description and a campaigns file (JSON).

The grid description says what the grid is (the platform, each cluster's local workload and
OAR policy) and how CiGri is configured (`cigri.conf`'s constants, the flow control, users'
priorities); the campaigns file says what the users submit to CiGri: bag-of-tasks campaigns,
each a JDL of CiGri 3 (`doc/documentation/doc_jdl.rst`) reduced to what scheduling needs,
plus how long each task runs on each cluster (which CiGri does not know, the simulation must).
`docs/cigri.md` documents both formats; every error names the file, the campaign or cluster,
and the fix, on one line (`GridError`).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from batsim_py.errors import GridError
from batsim_py.grid.oar import POLICIES, QUEUES

# cigri.conf's constants (etc/cigri.conf.in, lib/cigri-runnerlib.rb, modules/*.rb) and ours.
CIGRI_DEFAULTS: dict[str, float] = {
    "ALMIGHTY_PERIOD": 10,  # modules/almighty.rb: sleeptime
    "ALMIGHTY_MODULE_SPACING": 1,  # almighty.rb polls each module's end once a second
    "ALMIGHTY_START_DELAY": 3,  # almighty.rb sleeps 3 s after starting the runners
    "RUNNER_STAGGER": 0.5,  # almighty.rb starts one runner every 0.5 s
    "RUNNER_MIN_CYCLE_DURATION": 15,  # etc/cigri.conf.in
    "RUNNER_DEFAULT_INITIAL_NUMBER_OF_JOBS": 3,  # etc/cigri.conf.in (2 in the code default)
    "RUNNER_TAP_INCREASE_FACTOR": 1.5,
    "RUNNER_TAP_INCREASE_MAX": 100,
    "RUNNER_TAP_GRACE_PERIOD": 60,
    "REMOTE_WAITING_TIMEOUT": 900,  # modules/nikita.rb
    "GRID_USAGE_UPDATE_PERIOD": 60,  # modules/updator.rb
    "DEFAULT_JOB_WALLTIME": 3600,
    "METASCHEDULER_MAX_TASKS": 500,  # lib/cigri-scheduler-affinity.rb: compute_stacks(500)
    "DEFAULT_TASK_PRIORITY": 10,
    "RESUBMIT_PRIORITY": 20,  # lib/cigri-colombolib.rb: resubmit at priority 20
    "MAX_RESUBMISSIONS": 100,  # ours: a task that never completes stops being resubmitted
    "SUBMISSION_LATENCY": 0,  # research §3.8.4: an array submission costs no simulated time
}

FLOW_CONTROLS = ("taps", "simple", "tcp", "two_way", "adaptive_down_exp_up", "pi")


@dataclass(frozen=True, slots=True)
class ClusterSpec:
    """One cluster of the grid description."""

    name: str
    workload: str | None  # local workload file (Batsim JSON or SWF), or None
    policy: str = "easy"
    kill_delay: float = 0.0
    queue: str = "default"


@dataclass(frozen=True, slots=True)
class Duration:
    """How long a task runs on a cluster: a fixed delay, a seeded distribution, or a Batsim
    profile (whose duration the engine computes from the cluster's speed)."""

    delay: float | None = None
    distribution: tuple[str, tuple[float, ...]] | None = None
    profile: Mapping[str, Any] | None = None

    def draw(self, n: int, rng: np.random.Generator) -> np.ndarray:
        if self.delay is not None:
            return np.full(n, self.delay)
        assert self.distribution is not None
        kind, args = self.distribution
        if kind == "uniform":
            values = rng.uniform(args[0], args[1], n)
        elif kind == "exponential":
            values = rng.exponential(args[0], n)
        elif kind == "normal":
            values = rng.normal(args[0], args[1], n)
        else:  # lognormal
            values = rng.lognormal(args[0], args[1], n)
        return np.maximum(np.round(values, 3), 0.001)


@dataclass(frozen=True, slots=True)
class CampaignCluster:
    """A campaign's settings on one cluster (JDL `clusters{name: settings}`)."""

    type: str = "best-effort"  # best-effort | normal (others: best-effort, as CiGri warns)
    walltime: float = 3600.0
    resources: int = 1
    test_mode: bool = False
    max_jobs: int | None = None
    duration: Duration = field(default_factory=lambda: Duration(delay=60.0))
    exit_66_rate: float = 0.0  # share of runs ending with exit status 66 (resubmit)
    exit_67_rate: float = 0.0  # ... with 67 (resubmit at the end of the queue)

    @property
    def besteffort(self) -> bool:
        """`get_runner_options` (lib/cigri-joblib.rb): test mode is never best-effort."""
        return not self.test_mode and self.type != "normal"


@dataclass(frozen=True, slots=True)
class Campaign:
    id: int  # 1-based, in file order (CiGri's campaign id: FIFO order)
    name: str
    user: str
    submission_time: float
    nb_tasks: int
    clusters: Mapping[str, CampaignCluster]


@dataclass
class GridSpec:
    path: str
    platform: str
    clusters: list[ClusterSpec]
    campaigns: list[Campaign]
    users_priority: dict[str, dict[str, int]]  # cluster -> user -> priority
    flow_control: dict[str, Any]
    conf: dict[str, float]
    seed: int = 0
    timing: str = "ideal"
    master_host: str = "master_host"
    stress: dict[str, list[tuple[float, float]]] = field(default_factory=dict)


def _read(path: str) -> Any:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise GridError(f"{path}: no such file") from None
    except json.JSONDecodeError as e:
        raise GridError(f"{path}: not valid JSON: {e.msg} at line {e.lineno} column "
                        f"{e.colno}") from None
    except OSError as e:
        raise GridError(f"{path}: cannot read: {e.strerror}") from None


def _number(value: Any, where: str, *, minimum: float | None = None,
            integer: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise GridError(f"{where}: expected a number, got {json.dumps(value)}")
    if integer and value != int(value):
        raise GridError(f"{where}: expected an integer, got {value}")
    if minimum is not None and value < minimum:
        raise GridError(f"{where}: must be >= {minimum:g}, got {value}")
    return float(value)


def _check_keys(obj: Mapping[str, Any], known: set[str], where: str) -> None:
    unknown = sorted(set(obj) - known)
    if unknown:
        raise GridError(f"{where}: unknown field(s) {', '.join(unknown)} "
                        f"(known: {', '.join(sorted(known))})")


def _resolve(base: str, path: str) -> str:
    return path if os.path.isabs(path) else os.path.join(base, path)


def load_grid(path: str) -> GridSpec:
    """Read and check a grid description (and the campaigns file it names)."""
    data = _read(path)
    if not isinstance(data, dict):
        raise GridError(f"{path}: expected a JSON object (with 'platform', 'clusters', "
                        "'campaigns')")
    _check_keys(data, {"platform", "clusters", "campaigns", "users_priority", "flow_control",
                       "cigri", "seed", "timing", "master_host", "description", "stress"}, path)
    base = os.path.dirname(path)
    if not isinstance(data.get("platform"), str):
        raise GridError(f"{path}: 'platform' must name a SimGrid platform file")
    clusters_obj = data.get("clusters", {})
    if not isinstance(clusters_obj, dict):
        raise GridError(f"{path}: 'clusters' must be an object {{name: settings}}")
    clusters = []
    for name, obj in clusters_obj.items():
        where = f"{path}: cluster '{name}'"
        if not isinstance(obj, dict):
            raise GridError(f"{where}: expected an object")
        _check_keys(obj, {"workload", "policy", "kill_delay", "queue"}, where)
        policy = obj.get("policy", "easy")
        if policy not in POLICIES:
            raise GridError(f"{where}: unknown policy {json.dumps(policy)} "
                            f"(known: {', '.join(POLICIES)})")
        queue = obj.get("queue", "default")
        if queue not in QUEUES:
            raise GridError(f"{where}: unknown queue {json.dumps(queue)} "
                            f"(known: {', '.join(QUEUES)})")
        workload = obj.get("workload")
        if workload is not None and not isinstance(workload, str):
            raise GridError(f"{where}: 'workload' must be a file name")
        clusters.append(ClusterSpec(
            name, _resolve(base, workload) if workload else None, policy,
            _number(obj.get("kill_delay", 0), f"{where}: kill_delay", minimum=0), queue))
    conf = dict(CIGRI_DEFAULTS)
    conf_obj = data.get("cigri", {})
    if not isinstance(conf_obj, dict):
        raise GridError(f"{path}: 'cigri' must be an object of cigri.conf constants")
    for key, value in conf_obj.items():
        if key not in CIGRI_DEFAULTS:
            raise GridError(f"{path}: cigri: unknown constant '{key}' "
                            f"(known: {', '.join(sorted(CIGRI_DEFAULTS))})")
        conf[key] = _number(value, f"{path}: cigri: {key}", minimum=0)
    if conf["RUNNER_MIN_CYCLE_DURATION"] <= 0 or conf["ALMIGHTY_PERIOD"] <= 0:
        raise GridError(f"{path}: cigri: RUNNER_MIN_CYCLE_DURATION and ALMIGHTY_PERIOD must "
                        "be > 0")
    flow = data.get("flow_control", "taps")
    if isinstance(flow, str):
        flow = {"type": flow}
    if not isinstance(flow, dict) or flow.get("type") not in FLOW_CONTROLS:
        raise GridError(f"{path}: flow_control: expected one of {', '.join(FLOW_CONTROLS)} "
                        "(or an object with 'type' and its parameters)")
    _flow_parameters(flow, f"{path}: flow_control {flow['type']}")
    timing = data.get("timing", "ideal")
    if timing not in ("ideal", "batsim"):
        raise GridError(f"{path}: timing must be 'ideal' or 'batsim'")
    campaigns_src = data.get("campaigns", [])
    priorities: dict[str, dict[str, int]] = {}
    if isinstance(campaigns_src, str):
        cpath = _resolve(base, campaigns_src)
        cdata = _read(cpath)
        campaigns = parse_campaigns(cdata, cpath)
        if isinstance(cdata, dict):
            priorities.update(_priorities(cdata.get("users_priority", {}), cpath))
    else:
        campaigns = parse_campaigns(campaigns_src, path)
    priorities.update(_priorities(data.get("users_priority", {}), path))
    seed = data.get("seed", 0)
    return GridSpec(path, _resolve(base, data["platform"]), clusters, campaigns, priorities,
                    flow, conf, int(_number(seed, f"{path}: seed", integer=True)), timing,
                    str(data.get("master_host", "master_host")),
                    _stress(data.get("stress", {}), path))


FLOW_PARAMETERS = {
    "taps": (), "simple": ("flood_rate",), "tcp": ("flood_rate",),
    "two_way": ("flood_rate", "perl_uninitialised"), "adaptive_down_exp_up": ("flood_rate",),
    "pi": ("initial", "reference", "kp", "ki"),
}
"""The parameters each flow control reads (cigri.py), besides `type`."""


def _flow_parameters(flow: Mapping[str, Any], where: str) -> None:
    """A flow control's parameters: known to its type (a typo must not fall back silently
    to the default), numbers (flood_rate >= 0), perl_uninitialised a boolean."""
    known = FLOW_PARAMETERS[flow["type"]]
    _check_keys(flow, {"type", *known}, where)
    for key in known:
        if key not in flow:
            continue
        if key == "perl_uninitialised":
            if not isinstance(flow[key], bool):
                raise GridError(f"{where}: perl_uninitialised must be true or false")
        else:
            _number(flow[key], f"{where}: {key}", minimum=0 if key == "flood_rate" else None)


def _stress(obj: Any, where: str) -> dict[str, list[tuple[float, float]]]:
    """`{cluster: [[start, end], ...]}`: when OAR reports the cluster under stress (its
    stress factor >= STRESS_FACTOR): CiGri queues nothing for it then (research §3.8.5: the
    stress comes from OAR's server load, which the simulation does not model)."""
    if not isinstance(obj, dict):
        raise GridError(f"{where}: stress must be {{cluster: [[start, end], ...]}}")
    out = {}
    for cluster, periods in obj.items():
        ok = isinstance(periods, list) and all(
            isinstance(p, list) and len(p) == 2 for p in periods)
        if not ok:
            raise GridError(f"{where}: stress: '{cluster}' must be a list of [start, end]")
        spans = []
        for a, b in periods:
            a = _number(a, f"{where}: stress: {cluster}", minimum=0)
            b = _number(b, f"{where}: stress: {cluster}", minimum=0)
            if b < a:
                raise GridError(f"{where}: stress: {cluster}: period [{a:g}, {b:g}] ends "
                                "before it starts")
            spans.append((a, b))
        out[str(cluster)] = spans
    return out


def _priorities(obj: Any, where: str) -> dict[str, dict[str, int]]:
    if not isinstance(obj, dict):
        raise GridError(f"{where}: users_priority must be {{cluster: {{user: priority}}}}")
    out = {}
    for cluster, users in obj.items():
        if not isinstance(users, dict):
            raise GridError(f"{where}: users_priority: '{cluster}' must be {{user: priority}}")
        out[cluster] = {str(u): int(_number(p, f"{where}: users_priority: {cluster}: {u}",
                                            integer=True)) for u, p in users.items()}
    return out


_SETTINGS = {"type", "walltime", "resources", "test_mode", "max_jobs", "duration",
             "exit_66_rate", "exit_67_rate"}


def parse_campaigns(data: Any, path: str) -> list[Campaign]:
    """Campaigns from a JSON list, or an object with a 'campaigns' list (their clusters are
    checked against the platform's by `check_clusters`)."""
    if isinstance(data, dict):
        _check_keys(data, {"campaigns", "users_priority", "description"}, path)
        data = data.get("campaigns")
    if not isinstance(data, list):
        raise GridError(f"{path}: expected a list of campaigns (or {{\"campaigns\": [...]}})")
    out = []
    names = set()
    for i, obj in enumerate(data):
        where = f"{path}: campaign {i + 1}"
        if not isinstance(obj, dict):
            raise GridError(f"{where}: expected an object")
        name = str(obj.get("name", f"c{i + 1}"))
        where = f"{path}: campaign '{name}'"
        if name in names:
            raise GridError(f"{where}: the name is used twice")
        names.add(name)
        _check_keys(obj, {"name", "user", "submission_time", "nb_jobs", "clusters"}
                    | _SETTINGS, where)
        nb = obj.get("nb_jobs")
        if nb is None:
            raise GridError(f"{where}: 'nb_jobs' (number of tasks) is missing")
        nb_tasks = int(_number(nb, f"{where}: nb_jobs", minimum=1, integer=True))
        per = obj.get("clusters")
        if not isinstance(per, dict) or not per:
            raise GridError(f"{where}: 'clusters' must be a non-empty object "
                            "{cluster: settings}")
        defaults = {k: obj[k] for k in _SETTINGS if k in obj}
        settings = {}
        for cluster, cobj in per.items():
            if not isinstance(cobj, dict):
                raise GridError(f"{where}: cluster '{cluster}': expected an object of "
                                "settings ({} for the campaign's defaults)")
            _check_keys(cobj, _SETTINGS, f"{where}: cluster '{cluster}'")
            settings[cluster] = _cluster_settings({**defaults, **cobj},
                                                  f"{where}: cluster '{cluster}'")
        out.append(Campaign(i + 1, name, str(obj.get("user", "user")),
                            _number(obj.get("submission_time", 0),
                                    f"{where}: submission_time", minimum=0),
                            nb_tasks, settings))
    return out


def check_clusters(spec: GridSpec, clusters: list[str]) -> None:
    """Campaigns and priorities name clusters of the platform; each campaign's clusters are
    put in the platform's order (CiGri's database order)."""
    def known(name: str, where: str) -> None:
        if name not in clusters:
            raise GridError(f"{spec.path}: {where}: cluster '{name}' is not in the grid "
                            f"(clusters: {', '.join(clusters)})")

    for cluster in spec.users_priority:
        known(cluster, "users_priority")
    for cluster in spec.stress:
        known(cluster, "stress")
    for i, camp in enumerate(spec.campaigns):
        for cluster in camp.clusters:
            known(cluster, f"campaign '{camp.name}'")
        ordered = {c: camp.clusters[c] for c in clusters if c in camp.clusters}
        spec.campaigns[i] = dataclasses.replace(camp, clusters=ordered)


def _cluster_settings(obj: dict[str, Any], where: str) -> CampaignCluster:
    kind = obj.get("type", "best-effort")
    if not isinstance(kind, str):
        raise GridError(f"{where}: type must be a string (best-effort or normal)")
    max_jobs = obj.get("max_jobs")
    test_mode = obj.get("test_mode", False)
    if not isinstance(test_mode, bool):
        raise GridError(f"{where}: test_mode must be true or false")
    return CampaignCluster(
        kind,
        _number(obj.get("walltime", 3600), f"{where}: walltime", minimum=1),
        int(_number(obj.get("resources", 1), f"{where}: resources", minimum=1, integer=True)),
        test_mode,
        None if max_jobs is None else int(_number(max_jobs, f"{where}: max_jobs", minimum=1,
                                                  integer=True)),
        _duration(obj.get("duration", 60), f"{where}: duration"),
        *_exit_rates(obj, where),
    )


def _exit_rates(obj: dict[str, Any], where: str) -> tuple[float, float]:
    r66 = _number(obj.get("exit_66_rate", 0), f"{where}: exit_66_rate", minimum=0)
    r67 = _number(obj.get("exit_67_rate", 0), f"{where}: exit_67_rate", minimum=0)
    if r66 + r67 > 1:
        raise GridError(f"{where}: exit_66_rate + exit_67_rate must be <= 1 (shares of runs)")
    return r66, r67


_DISTRIBUTIONS = {"uniform": 2, "exponential": 1, "normal": 2, "lognormal": 2}


def _duration(value: Any, where: str) -> Duration:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return Duration(delay=_number(value, where, minimum=0.001))
    if isinstance(value, dict) and len(value) == 1:
        (kind, args), = value.items()
        if kind == "profile":
            if not isinstance(args, dict) or "type" not in args:
                raise GridError(f"{where}: 'profile' must be a Batsim profile object "
                                "(with a 'type')")
            return Duration(profile=args)
        if kind in _DISTRIBUTIONS:
            if not isinstance(args, list):
                args = [args]
            if len(args) != _DISTRIBUTIONS[kind]:
                raise GridError(f"{where}: {kind} takes {_DISTRIBUTIONS[kind]} number(s)")
            nums = tuple(_number(a, f"{where}: {kind}") for a in args)
            if kind == "uniform" and not 0 < nums[0] <= nums[1]:
                raise GridError(f"{where}: uniform needs 0 < low <= high")
            if kind == "exponential" and nums[0] <= 0:
                raise GridError(f"{where}: exponential needs a mean > 0")
            return Duration(distribution=(kind, nums))
    raise GridError(f"{where}: expected seconds, {{\"uniform\": [low, high]}}, "
                    "{\"exponential\": mean}, {\"normal\": [mean, sd]}, "
                    "{\"lognormal\": [mu, sigma]} or {\"profile\": {...}}, got "
                    f"{json.dumps(value)}")
