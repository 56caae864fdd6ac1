"""The recorders' and writers' fast paths against hand-computed text: the Pajé trace's one-join
lines for contiguous allocations next to its machine-by-machine path (compute sharing,
unavailable machines, kills, scattered allocations), and the machine-state counters' block and
machine-by-machine paths. Every expected line below was written by hand from Batsim's rules
(export.cpp's PajeTracer, machines.cpp's state accounting), not taken from a run."""

from __future__ import annotations

from batsim_py.output.paje import PajeTrace, job_colors
from batsim_py.sim.machines import MachineStates


def _events(trace: PajeTrace, size: int = 4096) -> list[str]:
    text = "".join(trace.body_chunks(size))
    return text.split("# Begin of events\n", 1)[1].splitlines()


def _scenario() -> PajeTrace:
    trace = PajeTrace(["h0", "h1", "h2", "h3"])
    trace.job_starts("w0!A", range(0, 2), 1.0)  # waiting machines: one join
    trace.job_starts("w0!B", range(1, 4), 2.0)  # machine 1 shows A: machine by machine
    trace.job_starts("w0!C", (3,), 2.5)  # machine 3 shows B: no line, no definition yet
    trace.job_ends("w0!A", range(0, 2), 4.0)  # machine 1 passes to B
    trace.job_killed("w0!B", range(1, 4), 5.0)
    trace.job_ends("w0!B", range(1, 4), 5.0, unavailable={2})  # 2 writes nothing; 3 shows C
    trace.job_ends("w0!C", (3,), 6.0)
    trace.job_starts("w0!D", range(0, 4), 7.0)  # all waiting again (2 too): one join
    trace.job_ends("w0!D", range(0, 4), 8.0)  # nothing shared: one join
    trace.job_starts("w0!E", range(0, 4, 2), 9.0)  # a range with a step: machine by machine
    trace.job_killed("w0!E", range(0, 4, 2), 9.5)
    trace.job_ends("w0!E", range(0, 4, 2), 9.5)
    return trace


def test_paje_trace_fast_and_general_paths() -> None:
    c = job_colors()
    expected = [
        "6 0.000000 machine_state m0 w",
        "6 0.000000 machine_state m1 w",
        "6 0.000000 machine_state m2 w",
        "6 0.000000 machine_state m3 w",
        f'5 jw0!A machine_state "w0!A" {c[0]}',
        "6 1.000000 machine_state m0 jw0!A",
        "6 1.000000 machine_state m1 jw0!A",
        f'5 jw0!B machine_state "w0!B" {c[1]}',
        "6 2.000000 machine_state m2 jw0!B",
        "6 2.000000 machine_state m3 jw0!B",
        "6 4.000000 machine_state m0 w",
        "6 4.000000 machine_state m1 jw0!B",
        '8 5.000000 kk k "w0!B"',
        '8 5.000000 km m1 "w0!B"',
        '8 5.000000 km m2 "w0!B"',
        '8 5.000000 km m3 "w0!B"',
        "6 5.000000 machine_state m1 w",
        f'5 jw0!C machine_state "w0!C" {c[2]}',
        "6 5.000000 machine_state m3 jw0!C",
        "6 6.000000 machine_state m3 w",
        f'5 jw0!D machine_state "w0!D" {c[3]}',
        "6 7.000000 machine_state m0 jw0!D",
        "6 7.000000 machine_state m1 jw0!D",
        "6 7.000000 machine_state m2 jw0!D",
        "6 7.000000 machine_state m3 jw0!D",
        "6 8.000000 machine_state m0 w",
        "6 8.000000 machine_state m1 w",
        "6 8.000000 machine_state m2 w",
        "6 8.000000 machine_state m3 w",
        f'5 jw0!E machine_state "w0!E" {c[4]}',
        "6 9.000000 machine_state m0 jw0!E",
        "6 9.000000 machine_state m2 jw0!E",
        '8 9.500000 kk k "w0!E"',
        '8 9.500000 km m0 "w0!E"',
        '8 9.500000 km m2 "w0!E"',
        "6 9.500000 machine_state m0 w",
        "6 9.500000 machine_state m2 w",
    ]
    trace = _scenario()
    assert _events(trace) == expected
    assert _events(_scenario(), size=1) == expected  # chunk boundaries change nothing
    assert trace.trailer(10.0).splitlines()[-1] == "3 10.000000 root root_ct"


def test_paje_trace_sharing_on_a_block_then_unavailable_end() -> None:
    """A contiguous start on a machine already shown stays on the general path; a contiguous
    end while another job waits elsewhere, or with an unavailable machine, too."""
    trace = PajeTrace(["a", "b", "c"])
    trace.job_starts("w0!X", (2,), 1.0)
    trace.job_starts("w0!Y", range(0, 3), 2.0)  # 2 shows X
    trace.job_starts("w0!Z", range(0, 2), 3.0)  # 0 and 1 show Y
    trace.job_ends("w0!Z", range(0, 2), 4.0)  # Z never shown: no line
    trace.job_ends("w0!Y", range(0, 3), 5.0, unavailable={0})  # 0: nothing; 2: Y not shown
    trace.job_ends("w0!X", (2,), 6.0)
    c = job_colors()
    assert _events(trace)[3:] == [
        f'5 jw0!X machine_state "w0!X" {c[0]}',
        "6 1.000000 machine_state m2 jw0!X",
        f'5 jw0!Y machine_state "w0!Y" {c[1]}',
        "6 2.000000 machine_state m0 jw0!Y",
        "6 2.000000 machine_state m1 jw0!Y",
        "6 5.000000 machine_state m1 w",
        "6 6.000000 machine_state m2 w",
    ]


def test_machine_states_block_and_single_paths() -> None:
    """12 compute machines: a job on 0-9 (a block of at least BLOCK machines), one on 10-11
    and one sharing machine 10 (machine by machine). Time in each state counts closed
    intervals only; a row of counts follows every change."""
    states = MachineStates(12, 12)
    states.job_starts(range(0, 10), 1.0)
    states.job_starts((10, 11), 2.0)
    states.job_starts((10,), 3.0)  # machine 10 runs two jobs: computing -> computing
    states.job_ends((10, 11), 4.0)  # 10 still runs the third job
    states.job_ends(range(0, 10), 5.0)
    states.job_ends((10,), 6.0)
    rows = "".join(states.text_chunks(100)).splitlines()
    assert rows == ["1,0,0,0,2,10", "2,0,0,0,0,12", "3,0,0,0,0,12", "4,0,0,0,1,11",
                    "5,0,0,0,11,1", "6,0,0,0,12,0"]
    # computing: 10 x (5 - 1) + machine 10 (2-3, 3-6) + machine 11 (2-4) = 46;
    # idle: 10 x (1 - 0) + machines 10 and 11 (0-2) = 14 (idle after the ends: not closed).
    assert states.time_in() == {"sleeping": 0.0, "switching_on": 0.0, "switching_off": 0.0,
                                "idle": 14.0, "computing": 46.0, "unavailable": 0.0}
    assert states.nb_shared == 0 and list(states.nb_jobs) == [0] * 12
