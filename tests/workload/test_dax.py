"""DAX files read as Batsim 4.2.1's `Workflow::load_from_xml` reads them (pugixml, strtod,
strtol): which tasks, runtimes, sizes and edges come out, and the errors."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from batsim_py.errors import WorkloadError
from batsim_py.workload.dax import c_strtod, c_strtol_int, load_workflow, load_workflows


def dax(tmp_path: Path, body: str, root: str = "adag", name: str = "w.dax") -> str:
    path = tmp_path / name
    path.write_text(f'<?xml version="1.0"?>\n<{root} xmlns="http://pegasus.isi.edu/schema/DAX"'
                    f' version="2.1">\n{body}\n</{root}>\n')
    return str(path)


@pytest.mark.parametrize(("text", "value"), [
    ("12", 12.0), ("  7.5s", 7.5), ("", 0.0), ("abc", 0.0), ("1e3", 1000.0), ("1e", 1.0),
    (".5", 0.5), ("5.", 5.0), ("-2.5", -2.5), ("0x10", 16.0), ("0x1.8p1", 3.0),
    ("\t+3", 3.0), ("1e999", math.inf),
])
def test_strtod_takes_the_numeric_prefix(text: str, value: float) -> None:
    assert c_strtod(text) == value


def test_strtod_reads_nan_and_infinity_words() -> None:
    assert c_strtod("INFINITY") == math.inf
    assert math.isnan(c_strtod("nan(x)"))


@pytest.mark.parametrize(("text", "value"), [
    ("4", 4), (" 3 procs", 3), ("", 0), ("x", 0), ("2.9", 2), ("-1", -1), ("+8", 8),
    # clamped to a 64-bit long, then cut to 32 bits as gcc's static_cast<int> does
    ("4294967297", 1), ("99999999999999999999", -1),
])
def test_strtol_as_int(text: str, value: int) -> None:
    assert c_strtol_int(text) == value


def test_tasks_sizes_and_edges(tmp_path: Path) -> None:
    wf = load_workflow(dax(tmp_path, """
  <job id="b" runtime="20" num_procs="2"/>
  <job id="a" runtime="10.5"/>
  <job id="c" runtime="7" num_procs="0"/>
  <job id="d" runtime="3" num_procs="-4"/>
  <job id="e" num_procs=""/>
  <child ref="c"><parent ref="a"/><parent ref="b"/></child>
  <child ref="d"><parent ref="c"/></child>"""), "wf0")
    t = wf.tasks
    assert [(k, t[k].runtime, t[k].num_procs) for k in "abcde"] == [
        ("a", 10.5, 1), ("b", 20.0, 2), ("c", 7.0, 1), ("d", 3.0, 1), ("e", 0.0, 1)]
    assert [p.id for p in t["c"].parents] == ["a", "b"]
    assert [c.id for c in t["a"].children] == ["c"]
    # sources by id (Batsim walks a std::map), not in file order
    assert [s.id for s in wf.source_tasks()] == ["a", "b", "e"]
    assert wf.path == str(tmp_path / "w.dax") and wf.start_time == 0.0


def test_repeated_edges_keep_one_parent_but_every_child(tmp_path: Path) -> None:
    wf = load_workflow(dax(tmp_path, """
  <job id="a" runtime="1"/><job id="b" runtime="1"/>
  <child ref="b"><parent ref="a"/><parent ref="a"/></child>"""), "wf0")
    assert [p.id for p in wf.tasks["b"].parents] == ["a"]
    assert [c.id for c in wf.tasks["a"].children] == ["b", "b"]


def test_a_later_job_with_the_same_id_replaces_the_first(tmp_path: Path) -> None:
    wf = load_workflow(dax(tmp_path, '<job id="a" runtime="1"/><job id="a" runtime="2"/>'), "wf0")
    assert list(wf.tasks) == ["a"] and wf.tasks["a"].runtime == 2.0


def test_other_roots_and_prefixed_names_hold_no_task(tmp_path: Path) -> None:
    """pugixml looks for an element named exactly `adag` at the top (no namespaces)."""
    assert load_workflow(dax(tmp_path, '<job id="a" runtime="1"/>', root="dag"), "w").tasks == {}
    path = tmp_path / "p.dax"
    path.write_text('<x:adag xmlns:x="u"><x:job id="a" runtime="1"/></x:adag>')
    assert load_workflow(str(path), "w").tasks == {}


def test_nested_jobs_are_not_tasks(tmp_path: Path) -> None:
    wf = load_workflow(dax(tmp_path, '<job id="a" runtime="1"><job id="z" runtime="1"/></job>'),
                       "w")
    assert list(wf.tasks) == ["a"]


@pytest.mark.parametrize(("body", "message"), [
    ('<job id="a" runtime="1"/><child ref="a"><parent ref="zz"/></child>',
     '<parent ref="zz"> names no <job id="zz"> of the workflow'),
    ('<job id="a" runtime="1"/><child ref="q"><parent ref="a"/></child>',
     '<child ref="q"> names no <job id="q"> of the workflow'),
    ('<job id="a" runtime="-1"/>', "task 'a' has runtime '-1'"),
    ('<job id="a" runtime="inf"/>', "task 'a' has runtime 'inf'"),
])
def test_errors_name_the_file_and_the_fault(tmp_path: Path, body: str, message: str) -> None:
    with pytest.raises(WorkloadError, match="^" + str(tmp_path / "w.dax").replace(".", r"\.")) \
            as info:
        load_workflow(dax(tmp_path, body), "wf0")
    assert message in str(info.value)


def test_invalid_xml_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.dax"
    path.write_text('<adag>\n<job id="a" runtime="1">\n</adag>\n')
    with pytest.raises(WorkloadError) as info:
        load_workflow(str(path), "wf0")
    assert str(info.value) == (f"{path}: invalid XML workflow at line 3 column 3: "
                               "mismatched tag")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(WorkloadError, match="workflow file not found"):
        load_workflow(str(tmp_path / "none.dax"), "wf0")


def test_names_follow_batsim(tmp_path: Path) -> None:
    path = dax(tmp_path, '<job id="a" runtime="1"/>')
    got = load_workflows([path, path], [(path, 5.0), (path, 0.0)])
    assert [(w.name, w.start_time) for w in got] == [
        ("wf0", 0.0), ("wf1", 0.0), ("wfc0", 5.0), ("wfc1", 0.0)]
    with pytest.raises(WorkloadError, match="start time"):
        load_workflows([], [(path, -1.0)])
