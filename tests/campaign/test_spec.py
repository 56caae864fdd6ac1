"""The campaign file: grid expansion, stable run ids, clear errors."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from batsim_py.campaign.spec import CampaignError, load_spec, workload_seed

from .helpers import PROJECT, small_campaign, write_spec


def test_grid_expands_and_file_only_runs_ignore_seeds() -> None:
    spec = load_spec(small_campaign())
    # delays_small x 2 schedulers (seeds do not apply) + generated x 2 schedulers x 2 seeds
    assert len(spec.runs) == 6
    assert spec.dropped_duplicates == 2
    file_runs = [r for r in spec.runs if r.seed is None]
    assert [r.scheduler for r in file_runs] == ["fcfs", "easy"]
    assert len({r.run_id for r in spec.runs}) == 6
    assert [r.index for r in spec.runs] == list(range(6))


def test_ids_are_stable_and_follow_the_inputs_content(tmp_path: Path) -> None:
    workload = tmp_path / "w.json"
    shutil.copy(PROJECT / "workloads" / "delays_small.json", workload)
    data = {"platforms": ["small4"], "workloads": ["w.json"], "schedulers": ["easy"]}
    first = load_spec(write_spec(tmp_path, data)).runs[0].run_id
    assert load_spec(write_spec(tmp_path, data, "again.yaml")).runs[0].run_id == first
    # the same content elsewhere (a moved folder): same id
    other = tmp_path / "moved"
    other.mkdir()
    shutil.copy(workload, other / "w.json")
    assert load_spec(write_spec(other, data)).runs[0].run_id == first
    # edited content: a new id (the old result is not reused)
    workload.write_text(workload.read_text().replace('"res": 1', '"res": 2', 1))
    assert load_spec(write_spec(tmp_path, data)).runs[0].run_id != first
    # each factor changes it
    base = load_spec({"platforms": ["small4"], "workloads": ["delays_small"],
                      "schedulers": ["easy"]}).runs[0].run_id
    for change in ({"schedulers": ["fcfs"]}, {"timing": ["ideal"]}, {"energy": [True]},
                   {"schedulers": [{"name": "easy", "options": {"x": 1}}]}):
        spec = {"platforms": ["small4"], "workloads": ["delays_small"],
                "schedulers": ["easy"], **change}
        assert load_spec(spec).runs[0].run_id != base, change


def test_adding_a_level_keeps_the_other_ids() -> None:
    before = {r.run_id for r in load_spec(small_campaign()).runs}
    after = {r.run_id for r in load_spec(small_campaign(schedulers=["fcfs", "easy",
                                                                     "fcfs_sleep"])).runs}
    assert before < after
    more = {r.run_id for r in load_spec(small_campaign(replications=2)).runs}
    assert before < more and len(more) == 2 + 8


def test_replication_seeds() -> None:
    assert workload_seed(7, 0) == 7
    seeds = {workload_seed(s, r) for s in range(20) for r in range(1, 5)}
    assert len(seeds) == 80 and all(0 <= s < 2**31 for s in seeds)
    runs = load_spec(small_campaign(seeds=[3], replications=2)).runs
    assert sorted({r.workload_seed for r in runs if r.seed is not None}) == sorted(
        [3, workload_seed(3, 1)])


@pytest.mark.parametrize("change, message", [
    ({"platform": ["small4"]}, "unknown key(s) platform"),
    ({"platforms": []}, "'platforms' is an empty list"),
    ({"platforms": ["no_such_platform"]}, "platform 'no_such_platform' is neither a file"),
    ({"workloads": [{"generate": {"nb_jobs": 3, "nb_res": 4, "seed": 1}}]},
     "seeds come from the 'seeds' factor"),
    ({"workloads": [{"generate": {"nb_jobs": 3}}]}, "generate needs nb_res"),
    ({"schedulers": ["tcp://localhost:28000"]}, "in-process schedulers only"),
    ({"timing": ["fast"]}, "timing must be batsim or ideal"),
    ({"energy": ["yes"]}, "energy values are true or false"),
    ({"seeds": [-1]}, "seeds are integers >= 0"),
    ({"replications": 0}, "replications is an integer >= 1"),
])
def test_errors_name_the_problem(change: dict, message: str) -> None:
    spec = small_campaign()
    spec.update(change)
    with pytest.raises(CampaignError) as info:
        load_spec(spec)
    assert message in str(info.value)


def test_file_errors(tmp_path: Path) -> None:
    with pytest.raises(CampaignError, match="cannot read it"):
        load_spec(tmp_path / "absent.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("platforms: [small4\nworkloads: x\n")
    with pytest.raises(CampaignError, match=r"bad.yaml:\d+: not valid YAML/JSON"):
        load_spec(bad)
    scalar = tmp_path / "scalar.yaml"
    scalar.write_text("42\n")
    with pytest.raises(CampaignError, match="is a mapping"):
        load_spec(scalar)


def test_example_campaign_file_loads() -> None:
    spec = load_spec(PROJECT / "examples" / "campaign.yaml")
    assert spec.name == "example"
    assert len(spec.runs) == 9


def test_a_missing_library_says_what_to_install() -> None:
    from batsim_py.campaign.deps import need
    from batsim_py.errors import UsageError

    with pytest.raises(UsageError, match=r"campaigns need no_such_module_xyz \(it reads\), "
                       r"which is not installed: pip install 'batsim-py-sim\[campaign\]'"):
        need("no_such_module_xyz", "it reads")
