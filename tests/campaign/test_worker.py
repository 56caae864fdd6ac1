"""One run as a Dask task runs it (in this process, no Dask): outputs, marker, failures."""

from __future__ import annotations

import json
from pathlib import Path

from batsim_py.campaign import store
from batsim_py.campaign.spec import load_spec
from batsim_py.campaign.worker import run_batch, run_one

from .helpers import alone_on_command_line, output_files, small_campaign


def test_a_run_is_recorded_after_its_outputs_and_equals_the_command_line(tmp_path: Path
                                                                         ) -> None:
    spec = load_spec(small_campaign(schedulers=["easy"], seeds=[4]))
    generated = next(r for r in spec.runs if r.seed is not None)
    record = run_one(generated, str(tmp_path))
    folder = Path(store.run_folder(str(tmp_path), generated.run_id))
    assert record["status"] == "ok" and record["error"] is None
    assert json.loads((folder / "result.json").read_text()) == record
    assert record["metrics"]["nb_jobs"] == 25
    # the marker's metrics are those of the output files (batsim_py.analysis on the files)
    from batsim_py.analysis import load_run, run_metrics

    on_files = run_metrics(load_run(str(folder / "out")))
    assert record["metrics"]["makespan"] == on_files["makespan"]
    assert record["metrics"]["waiting_mean"] == on_files["waiting_mean"]
    # the same run alone on the command line, as command.txt says: the same bytes
    alone = tmp_path / "alone" / "run"
    result = alone_on_command_line(folder, alone)
    assert result.returncode == 0, result.stderr
    ours = output_files(folder / "out")
    assert set(ours) == {"_jobs.csv", "_schedule.csv", "_machine_states.csv",
                         "_schedule.trace"}
    assert ours == output_files(alone)


def test_a_complete_run_is_not_run_again(tmp_path: Path) -> None:
    config = load_spec(small_campaign(schedulers=["fcfs"])).runs[0]
    run_one(config, str(tmp_path))
    folder = Path(store.run_folder(str(tmp_path), config.run_id))
    marker = (folder / "result.json").read_bytes()
    again = run_batch([config], str(tmp_path))
    assert again[0]["skipped"] is True
    assert (folder / "attempts.log").read_text().count("\n") == 1
    assert (folder / "result.json").read_bytes() == marker


def test_a_run_without_marker_is_run_again(tmp_path: Path) -> None:
    """A run killed before its marker (here: the marker removed) is redone on resume."""
    config = load_spec(small_campaign(schedulers=["fcfs"])).runs[0]
    run_one(config, str(tmp_path))
    folder = Path(store.run_folder(str(tmp_path), config.run_id))
    first = output_files(folder / "out")
    (folder / "result.json").unlink()
    assert not store.is_complete(str(tmp_path), config.run_id)
    record = run_one(config, str(tmp_path))
    assert "skipped" not in record
    assert (folder / "attempts.log").read_text().count("\n") == 2
    assert output_files(folder / "out") == first


def test_a_failing_run_is_recorded_and_the_batch_goes_on(tmp_path: Path) -> None:
    spec = load_spec(small_campaign(schedulers=["fcfs_sleep", "fcfs"], seeds=[1]))
    records = run_batch(spec.runs, str(tmp_path))
    by_sched = {(r["factors"]["scheduler"], r["factors"]["workload"]): r for r in records}
    failed = by_sched[("fcfs_sleep", "delays_small")]
    assert failed["status"] == "failed"
    assert failed["error"].startswith("UsageError: scheduler fcfs_sleep")
    assert "-E/--energy" in failed["error"]
    assert failed["metrics"] is None
    assert by_sched[("fcfs", "delays_small")]["status"] == "ok"
    # recorded: a resumed campaign keeps it, --retry-failed runs it again
    run_id = failed["run_id"]
    assert store.is_complete(str(tmp_path), run_id)
    assert not store.is_complete(str(tmp_path), run_id, retry_failed=True)
    table = store.table(str(tmp_path), spec.runs)
    assert list(table["status"]) == [r["status"] for r in records]
    assert table.loc[table["run_id"] == run_id, "makespan"].isna().all()


def test_an_unreadable_marker_counts_as_absent(tmp_path: Path) -> None:
    config = load_spec(small_campaign(schedulers=["fcfs"])).runs[0]
    folder = Path(store.run_folder(str(tmp_path), config.run_id))
    folder.mkdir(parents=True)
    (folder / "result.json").write_text('{"run_id": "')
    assert store.read_marker(str(tmp_path), config.run_id) is None
    (folder / "result.json").write_text('{"run_id": "another", "status": "ok"}')
    assert store.read_marker(str(tmp_path), config.run_id) is None
