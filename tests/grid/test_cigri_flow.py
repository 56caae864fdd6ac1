"""Flow-control arithmetic: CiGri 3's taps and CiGri 2.x's job-ratio predictors, on inputs
worked by hand from lib/cigri-runnerlib.rb and Spritz/spritzCigri.pl (research §3.4)."""

from __future__ import annotations

import math

import pytest

from batsim_py.grid import flow


def test_tap_increase_sequence_from_3():
    tap = flow.Tap(3)
    seen = [tap.rate]
    while tap.increase(1.5, 100):
        seen.append(tap.rate)
    # floor(3*1.5)=4, floor(4*1.5)=6, 9, floor(13.5)=13, floor(19.5)=19, 28, 42, 63,
    # floor(94.5)=94, min(100, 141)=100
    assert seen == [3, 4, 6, 9, 13, 19, 28, 42, 63, 94, 100]
    assert not tap.increase(1.5, 100) and tap.rate == 100


def test_tap_decrease_sequence_and_grace():
    tap = flow.Tap(100)
    assert tap.close(1000.0)
    assert not tap.close(1010.0) and tap.close_date == 1000.0  # closed: date kept
    assert not tap.decrease(1059.9, 1.5, 3, 60)  # within the 60 s grace
    seen = []
    now = 1060.0
    while tap.decrease(now, 1.5, 3, 60):
        seen.append(tap.rate)
        now += 15
    # floor(100/1.5)=66, 44, floor(29.3)=29, floor(19.3)=19, floor(12.7)=12, 8, 5,
    # max(3, floor(3.3))=3
    assert seen == [66, 44, 29, 19, 12, 8, 5, 3]
    assert tap.open() and not tap.open()


def test_max_waiting_and_absolute():
    assert flow.max_waiting_jobs(41, 0.5) == 20
    assert flow.max_waiting_jobs(41, 0) == 20  # FLOOD_RATE unset or <= 0: 0.5
    assert flow.jobratio_to_absolute(0.5, 40, 20) == 30  # 0.5 x (40 + 20)
    assert flow.jobratio_to_absolute(0.26, 10, 3) == 3  # floor(3.38)


def test_two_way_decrease_worked_example():
    # research §5.3.5: old_jr=0.5, free=40, waiting=30, max_waiting=20:
    # (0.5*40 - (30-20)) / (0.5*40) = (20-10)/20 = 0.5
    jr = flow.two_way_ratio(0.5, waiting=30, running=5, free=40, max_waiting=20)
    assert jr == 0.5
    assert flow.jobratio_to_absolute(jr, 40, 20) == 30
    # more excess than submitted: negative, clamped to 0
    assert flow.two_way_ratio(0.5, waiting=50, running=5, free=40, max_waiting=20) == 0.0
    # nothing submitted last time: 0
    assert flow.two_way_ratio(0.0, waiting=30, running=5, free=40, max_waiting=20) == 0.0


def test_two_way_increase_branches():
    assert flow.two_way_ratio(0.0, waiting=0, running=0, free=40, max_waiting=20) == 1.0
    # old_jr*free / running = 0.5*40/10 = 2
    assert flow.two_way_ratio(0.5, waiting=0, running=10, free=40, max_waiting=20) == 2.0
    # running = 0: Perl's uninitialised $jobratio *= 2 gives 0; the intent old_jr*2 = 1
    assert flow.two_way_ratio(0.5, 0, 0, 40, 20) == 1.0
    assert flow.two_way_ratio(0.5, 0, 0, 40, 20, perl_uninitialised=True) == 0.0


def test_tcp():
    assert flow.tcp_ratio(0.5, waiting=21, free=40, max_waiting=20) == 0.0  # flooded
    assert flow.tcp_ratio(0.0, waiting=0, free=40, max_waiting=20) == 1 / 40
    assert flow.tcp_ratio(0.25, waiting=20, free=40, max_waiting=20) == 0.5  # not > max
    assert flow.tcp_ratio(0.0, 0, 0, 20) == 0.0  # Perl divides by zero here


def test_adaptive_down_exp_up_and_simple():
    assert flow.adaptive_down_exp_up_ratio(0.5, 30, 40, 20) == 0.5  # two-way decrease
    assert flow.adaptive_down_exp_up_ratio(0.5, 10, 40, 20) == 1.0  # x2
    assert flow.adaptive_down_exp_up_ratio(0.0, 10, 40, 20) == 1 / 40
    assert flow.simple_ratio(0) == 0.5  # campaign start
    assert flow.simple_ratio(4) == 0.25


def test_pi_controller():
    ctl = flow.PiController(n=10, reference=10, kp=0.5, ki=0.25)
    # e = 10 - 4 = 6, sum = 6: n = 10 + 3 + 1.5 = 14.5
    assert ctl.update(4) == 14 and ctl.n == pytest.approx(14.5)
    # e = 10 - 30 = -20, sum = -14: n = 14.5 - 10 - 3.5 = 1
    assert ctl.update(30) == 1 and ctl.n == pytest.approx(1.0)
    # e = -90, sum = -104: negative, held at 0
    assert ctl.update(100) == 0 and ctl.n == 0.0
    assert math.isfinite(ctl.integral)
