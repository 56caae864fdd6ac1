"""CiGri 3 on simulated time: almighty's cycle, the per-cluster runners, the bag of tasks.

CiGri (`oar-team/cigri`, 3.2.1) is a set of processes sharing a PostgreSQL database; here
they are SimPy processes sharing this object, on the engine's clock, acting on each
cluster's OAR (`grid/oar.py`) only through the engine (job submissions through a job source,
`oardel` through an event source), and seeing OAR's state only when they poll it. Each rule
below names the CiGri module it comes from (research §3.2):

- `modules/almighty.rb`: starts one runner per cluster, 0.5 s apart, waits 3 s, then every
  10 s runs the metascheduler, the updator and Nikita, one after the other (almighty polls a
  module's end once a second: 1 s apart here).
- `modules/meta-scheduler.rb` + `Campaignset#compute_campaigns_orders` +
  `lib/cigri-scheduler-affinity.rb`: (cluster, campaign) couples; per couple a maximum of
  `max_jobs − (active + queued)` (1 in test mode) and `tap.rate × 10 − queued`; per cluster,
  test-mode campaigns first, then the user's priority on that cluster, then campaign id;
  stacks of at most 500 tasks ordered by task priority, task/cluster affinity and id; tasks
  popped round-robin over clusters into the clusters' queues (`jobs_to_launch`), a task
  handed to one cluster leaving the others' stacks; one `order_num` per campaign batch.
- `modules/runner.rb` (one per cluster, cycles >= RUNNER_MIN_CYCLE_DURATION apart): decrease
  the taps that could not be re-opened last cycle; poll the OAR state of its jobs (Waiting
  closes the campaign's tap, Error is analysed by Colombo); re-open the other taps; take jobs
  with `JobtolaunchSet#get_next` (lib/cigri-joblib.rb: queue order priority, order_num, id;
  at most `rate` jobs of the first campaign whose tap is open; stop at a tap closed less than
  the grace period ago); submit them as one array; sleep; increase the tap of the first
  submitted campaign if `rate < submitted × 1.5 + 1`.
- `lib/cigri-colombolib.rb` `analyze_remote_job_events`: BESTEFFORT_KILL, EXTERMINATE,
  WALLTIME (and Nikita's REMOTE_WAITING_FRAG) and the special exit status 66 put the task
  back in the bag at priority 20, exit status 67 at priority 0 (the end of the queue:
  RESUBMIT_END); WALLTIME also lowers the task's affinity for that cluster. The share of runs
  ending with 66 or 67 is a campaign setting, drawn per run from the grid's seed.
- `modules/nikita.rb`: kill jobs remote-waiting longer than REMOTE_WAITING_TIMEOUT since
  their submission (REMOTE_WAITING_FRAG, resubmitted); drop queue entries older than that
  (QUEUED_FOR_TOO_LONG: the tasks return to the bag).
- `modules/updator.rb`: a campaign is over when it has no remaining task and no queued or
  active job; `grid_usage` rows every GRID_USAGE_UPDATE_PERIOD (60 s).

Not modelled: prologue/epilogue jobs, grouping, blacklisting on other exit codes, the
affinity table's hourly cleaning (OAR's stress factor is given as periods in the grid file);
a task resubmitted more than MAX_RESUBMISSIONS times fails (ours: bounds runs whose tasks
never fit their walltime).
"""

from __future__ import annotations

import itertools
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sortedcontainers import SortedList

from batsim_py.grid import flow
from batsim_py.grid.inputs import Campaign, GridSpec
from batsim_py.grid.oar import OarCluster
from batsim_py.grid.rjms import GridRjms

RESUBMIT_EVENTS = ("BESTEFFORT_KILL", "EXTERMINATE", "WALLTIME", "REMOTE_WAITING_FRAG",
                   "EXIT_66", "EXIT_67")
ACTIVE = ("to_launch", "submitted", "remote_waiting", "running")


@dataclass(slots=True)
class Task:
    id: int
    campaign: int
    index: int
    priority: int
    state: str = "bag"  # bag, queued, job, done, failed
    attempts: int = 0


@dataclass(slots=True)
class QueueEntry:
    """A row of `jobs_to_launch`."""

    seq: int
    task: Task
    cluster: str
    order_num: int
    queuing_date: float


@dataclass(slots=True)
class CigriJob:
    """A row of CiGri's `jobs` table: one OAR submission of one task."""

    id: int
    oar_id: str
    task: Task
    cluster: str
    besteffort: bool
    priority: int
    submission_time: float
    queuing_date: float  # when the metascheduler queued the task on the cluster
    queue_seq: int  # the jobs_to_launch row's id
    order_num: int  # its order_num (the campaign's rank on the cluster in that pass)
    state: str = "submitted"  # submitted, remote_waiting, running, terminated, event
    event: str = ""
    resubmitted: bool = False


@dataclass
class CampaignState:
    spec: Campaign
    state: str = "pending"  # pending, running, terminated, cancelled
    bag: SortedList = field(default_factory=SortedList)  # (-priority, task id)
    affinity: dict[tuple[int, str], int] = field(default_factory=dict)
    remaining: int = 0  # tasks neither done nor failed
    first_start: float = -1.0
    last_end: float = -1.0
    end_seen: float = -1.0  # when the updator found it over
    blacklist: set[str] = field(default_factory=set)


class Cigri:
    """CiGri's database and modules for one grid run."""

    def __init__(self, spec: GridSpec, rjms: GridRjms, sim: Any) -> None:
        self.spec = spec
        self.conf = spec.conf
        self.rjms = rjms
        self.sim = sim
        self.env = sim.env
        self.clusters: list[str] = list(rjms.clusters)
        self.oar: dict[str, OarCluster] = rjms.clusters
        self.priorities = spec.users_priority
        self.flow = spec.flow_control
        self.tasks: list[Task] = []
        self.campaigns: list[CampaignState] = []
        self.jobs: list[CigriJob] = []
        self.by_oar_id: dict[str, CigriJob] = {}
        self.queues: dict[str, list[QueueEntry]] = {c: [] for c in self.clusters}
        self.taps: dict[tuple[str, int], flow.Tap] = {}
        self.ratios: dict[tuple[str, int], float] = {}  # 2.x job ratios
        self.pi: dict[str, flow.PiController] = {}
        self.last_free: dict[str, int] = {}
        self.tap_rows: list[tuple] = []
        self.usage_rows: list[tuple] = []
        self.finished = False
        self._last_n: dict[tuple[str, int], int] = {}  # jobs per cycle of the ratio controls
        self._current: dict[str, list[CigriJob]] = {c: [] for c in self.clusters}  # active
        self._seq = itertools.count(1)
        self._job_ids = itertools.count(1)
        self._last_usage = -1e300
        self.profile_of: dict[tuple[int, str], list[str]] = {}
        profiles = self._profiles()
        self.source = sim.job_source(profiles, name="cigri")
        self.control = sim.event_source(name="cigri_oardel")
        for camp in spec.campaigns:
            state = CampaignState(camp, remaining=camp.nb_tasks)
            for i in range(camp.nb_tasks):
                task = Task(len(self.tasks), camp.id, i, int(self.conf["DEFAULT_TASK_PRIORITY"]))
                self.tasks.append(task)
                state.bag.add((-task.priority, task.id))
            self.campaigns.append(state)

    # ------------------------------------------------------------------ inputs
    def _profiles(self) -> dict[str, Any]:
        """One Batsim delay profile per distinct duration (or the campaign's own profile per
        cluster); task i of a campaign runs `profile_of[(campaign, cluster)][i]` there."""
        profiles: dict[str, Any] = {}
        for ci, camp in enumerate(self.spec.campaigns):
            for ki, (cluster, settings) in enumerate(camp.clusters.items()):
                d = settings.duration
                if d.profile is not None:
                    name = f"{camp.name}@{cluster}"
                    profiles[name] = dict(d.profile)
                    self.profile_of[(camp.id, cluster)] = [name] * camp.nb_tasks
                    continue
                rng = np.random.default_rng([self.spec.seed, ci, ki])
                names = []
                exits = [c for c, r in ((66, settings.exit_66_rate),
                                        (67, settings.exit_67_rate)) if r > 0]
                for value in d.draw(camp.nb_tasks, rng).tolist():
                    name = f"delay_{value:g}"
                    if name not in profiles:
                        profiles[name] = {"type": "delay", "delay": value}
                    for code in exits:
                        profiles.setdefault(f"{name}_ret{code}",
                                            {"type": "delay", "delay": value, "ret": code})
                    names.append(name)
                self.profile_of[(camp.id, cluster)] = names
        return profiles

    def campaign(self, cid: int) -> CampaignState:
        return self.campaigns[cid - 1]

    # ------------------------------------------------------------------ processes
    def start(self) -> None:
        """Start almighty (which starts the runners), as SimPy processes."""
        self.env.process(self._almighty())

    def _almighty(self) -> Generator[Any, Any, None]:
        conf = self.conf
        env = self.env
        for i, cluster in enumerate(self.clusters):
            env.process(self._runner(cluster))
            if i + 1 < len(self.clusters):
                yield env.timeout(conf["RUNNER_STAGGER"])
        yield env.timeout(conf["RUNNER_STAGGER"] + conf["ALMIGHTY_START_DELAY"])
        spacing = conf["ALMIGHTY_MODULE_SPACING"]
        while not self.finished:
            begin = env.now
            self._activate(begin)
            self.metascheduler(begin)
            yield env.timeout(spacing)
            self.updator(env.now)
            if self.finished:
                break
            yield env.timeout(spacing)
            self.nikita(env.now)
            rest = conf["ALMIGHTY_PERIOD"] - (env.now - begin)
            if rest > 0:
                yield env.timeout(rest)
        self.source.close()

    def _activate(self, now: float) -> None:
        for camp in self.campaigns:
            if camp.state == "pending" and camp.spec.submission_time <= now:
                camp.state = "running"

    # ------------------------------------------------------------------ metascheduler
    def metascheduler(self, now: float) -> None:
        """meta-scheduler.rb: compute_campaigns_orders, then SchedulerAffinity#do."""
        couples = self.compute_campaigns_orders(now)
        # compute_stacks(500)
        cap = int(self.conf["METASCHEDULER_MAX_TASKS"])
        stacks: dict[str, dict[int, list[int]]] = {}
        for cluster, cid, limit in couples:
            n = min(cap, limit)
            stacks.setdefault(cluster, {})[cid] = self._candidates(cid, cluster, n)
        taken: dict[int, set[int]] = {}
        # setup_queues: round-robin over clusters, one task each per round
        popped: dict[str, list[tuple[int, int]]] = {c: [] for c in stacks}
        progress = True
        while progress:
            progress = False
            for cluster, per in stacks.items():
                for cid, stack in per.items():
                    gone = taken.setdefault(cid, set())
                    while stack and stack[-1] in gone:
                        stack.pop()
                    if stack:
                        tid = stack.pop()
                        gone.add(tid)
                        popped[cluster].append((tid, cid))
                        progress = True
                        break
        # batch_tasks: one order_num per run of the same campaign
        for cluster, items in popped.items():
            order_num, last = 0, None
            for tid, cid in items:
                if cid != last:
                    order_num += 1
                    last = cid
                task = self.tasks[tid]
                camp = self.campaign(cid)
                camp.bag.remove((-task.priority, tid))
                task.state = "queued"
                self.queues[cluster].append(QueueEntry(next(self._seq), task, cluster,
                                                       order_num, now))

    def under_stress(self, cluster: str, now: float) -> bool:
        """Cluster#under_stress? (lib/cigri-clusterlib.rb), from the grid's stress periods."""
        return any(a <= now < b for a, b in self.spec.stress.get(cluster, ()))

    def compute_campaigns_orders(self, now: float) -> list[tuple[str, int, int]]:
        """Campaignset#compute_campaigns_orders (lib/cigri-joblib.rb): the (cluster,
        campaign, max) couples, clusters in database order (skipping clusters under stress),
        campaigns per cluster test mode first, then the user's priority on the cluster
        (descending), then id (FIFO)."""
        couples = []
        for cluster in self.clusters:
            if self.under_stress(cluster, now):
                continue
            cands = []
            for camp in self.campaigns:
                settings = camp.spec.clusters.get(cluster)
                if camp.state != "running" or settings is None or cluster in camp.blacklist:
                    continue
                cid = camp.spec.id
                max_jobs = 1 if settings.test_mode else settings.max_jobs
                active = self._active(cid, cluster)
                queued = sum(1 for e in self.queues[cluster] if e.task.campaign == cid)
                limit = None if max_jobs is None else max_jobs - (active + queued)
                to_queue = max(0, self._queue_rate(cluster, cid, now) * 10 - queued)
                if limit is None or to_queue < limit:
                    limit = to_queue
                prio = self.priorities.get(cluster, {}).get(camp.spec.user, 0)
                cands.append((not settings.test_mode, -prio, cid, limit))
            for _, _, cid, limit in sorted(cands):
                couples.append((cluster, cid, limit))
        return couples

    def _queue_rate(self, cluster: str, cid: int, now: float) -> int:
        if self.flow["type"] == "taps":
            return self._tap(cluster, cid, now).rate
        initial = int(self.conf["RUNNER_DEFAULT_INITIAL_NUMBER_OF_JOBS"])
        last = self._last_n.get((cluster, cid), initial)
        return max(last, initial)

    def _active(self, cid: int, cluster: str) -> int:
        return sum(1 for j in self._jobs_on(cluster) if j.task.campaign == cid
                   and j.state in ACTIVE)

    def _jobs_on(self, cluster: str) -> list[CigriJob]:
        return self._current[cluster]

    def _candidates(self, cid: int, cluster: str, n: int) -> list[int]:
        """get_tasks_ids_for_campaign_on_cluster: up to n tasks not queued, by priority,
        affinity on the cluster, id; returned reversed (a stack: pop() gives the first)."""
        if n <= 0:
            return []
        camp = self.campaign(cid)
        if any(k[1] == cluster for k in camp.affinity):
            keyed = sorted((p, -camp.affinity.get((t, cluster), 0), t) for p, t in camp.bag)
            ids = [t for _, _, t in keyed[:n]]
        else:
            ids = [t for _, t in itertools.islice(camp.bag, n)]
        ids.reverse()
        return ids

    # ------------------------------------------------------------------ taps
    def _tap(self, cluster: str, cid: int, now: float) -> flow.Tap:
        tap = self.taps.get((cluster, cid))
        if tap is None:
            tap = self.taps[(cluster, cid)] = flow.Tap(
                int(self.conf["RUNNER_DEFAULT_INITIAL_NUMBER_OF_JOBS"]))
            self._tap_row(now, cluster, cid, tap, "create")
        return tap

    def _tap_row(self, now: float, cluster: str, cid: int, tap: flow.Tap, why: str) -> None:
        self.tap_rows.append((now, cluster, self.campaign(cid).spec.name, tap.rate,
                              "open" if tap.is_open else "closed", why))

    # ------------------------------------------------------------------ runner
    def _runner(self, cluster: str) -> Generator[Any, Any, None]:
        """modules/runner.rb's main loop for one cluster."""
        env = self.env
        conf = self.conf
        can_open: dict[int, bool] = {}
        oar = self.oar[cluster]
        while not self.finished:
            now = env.now
            current = [j for j in self._current[cluster] if j.state in
                       ("submitted", "remote_waiting", "running")]
            taps = {}
            if self.flow["type"] == "taps":
                cids = sorted({j.task.campaign for j in current}
                              | {c.spec.id for c in self.campaigns
                                 if c.state == "running" and cluster in c.spec.clusters})
                for cid in cids:
                    tap = self._tap(cluster, cid, now)
                    if not can_open.get(cid, False):
                        if tap.decrease(now, conf["RUNNER_TAP_INCREASE_FACTOR"],
                                        int(conf["RUNNER_DEFAULT_INITIAL_NUMBER_OF_JOBS"]),
                                        conf["RUNNER_TAP_GRACE_PERIOD"]):
                            self._tap_row(now, cluster, cid, tap, "decrease")
                        can_open[cid] = True
                    taps[cid] = tap
            waiting = running = 0
            for job in current:
                state = self._poll(job, oar, now)
                if state == "remote_waiting":
                    waiting += 1
                    waiting_tap = taps.get(job.task.campaign)
                    if waiting_tap is not None:
                        if waiting_tap.close(now):
                            self._tap_row(now, cluster, job.task.campaign, waiting_tap,
                                          "close")
                        can_open[job.task.campaign] = False
                elif state == "running":
                    running += 1
            for cid, tap in taps.items():
                if can_open.get(cid) and tap.open():
                    self._tap_row(now, cluster, cid, tap, "open")
            self._current[cluster] = [j for j in self._current[cluster] if j.state in ACTIVE]
            if self.flow["type"] == "taps":
                entries = self._get_next(cluster, taps, now)
            else:
                entries = self._get_by_ratio(cluster, oar, waiting, running, now)
            if entries:
                submitted = self._submit(cluster, entries, now)
                latency = conf["SUBMISSION_LATENCY"]
                yield env.timeout(max(conf["RUNNER_MIN_CYCLE_DURATION"], latency))
                if self.flow["type"] == "taps" and submitted:
                    for cid in dict.fromkeys(e.task.campaign for e in entries):
                        first = taps.get(cid)
                        if first is not None and first.is_open and \
                                first.rate < len(entries) * conf["RUNNER_TAP_INCREASE_FACTOR"] + 1:
                            if first.increase(conf["RUNNER_TAP_INCREASE_FACTOR"],
                                              int(conf["RUNNER_TAP_INCREASE_MAX"])):
                                self._tap_row(env.now, cluster, cid, first, "increase")
                            break
            else:
                yield env.timeout(conf["RUNNER_MIN_CYCLE_DURATION"])

    def _poll(self, job: CigriJob, oar: OarCluster, now: float) -> str:
        """What the runner learns of one job from OAR (runner.rb's `case cluster_job["state"]`)."""
        ojob = oar.jobs.get(job.oar_id)
        state = "Waiting" if ojob is None else ojob.state
        if state == "Terminated":
            code = ojob.exit_code  # type: ignore[union-attr]
            if code in (66, 67):  # special exit statuses: resubmit
                job.state = "event"
                job.event = f"EXIT_{code}"
                self._colombo(job, now)
                return job.state
            job.state = "terminated"
            if code != 0:  # another error: CiGri would stop the campaign there; we drop it
                job.event = f"EXIT_{code}"
                self._fail(job.task, self.campaign(job.task.campaign))
                return job.state
            self._task_done(job, ojob.stop)  # type: ignore[union-attr]
        elif state == "Error":
            job.state = "event"
            job.event = ojob.event  # type: ignore[union-attr]
            self._colombo(job, now)
        elif state in ("Running", "Launching"):
            job.state = "running"
        else:
            job.state = "remote_waiting"
        return job.state

    def _task_done(self, job: CigriJob, end: float) -> None:
        task = job.task
        camp = self.campaign(task.campaign)
        task.state = "done"
        camp.remaining -= 1
        camp.last_end = max(camp.last_end, end)

    def _colombo(self, job: CigriJob, now: float) -> None:
        """analyze_remote_job_events: resubmit at priority 20, or give the task up."""
        task = job.task
        camp = self.campaign(task.campaign)
        if job.event == "WALLTIME":
            key = (task.id, job.cluster)
            camp.affinity[key] = camp.affinity.get(key, 0) - 1
        if job.event in RESUBMIT_EVENTS and camp.state == "running" \
                and task.attempts < self.conf["MAX_RESUBMISSIONS"]:
            job.resubmitted = True
            task.attempts += 1
            task.priority = 0 if job.event == "EXIT_67" else int(self.conf["RESUBMIT_PRIORITY"])
            task.state = "bag"
            camp.bag.add((-task.priority, task.id))
            return
        if job.event not in RESUBMIT_EVENTS:  # e.g. TOO_BIG_FOR_CLUSTER: not this cluster
            camp.blacklist.add(job.cluster)
            if all(c in camp.blacklist for c in camp.spec.clusters):
                self._fail(task, camp)
                return
            task.state = "bag"
            camp.bag.add((-task.priority, task.id))
            return
        self._fail(task, camp)

    def _fail(self, task: Task, camp: CampaignState) -> None:
        task.state = "failed"
        camp.remaining -= 1

    def _get_next(self, cluster: str, taps: dict[int, flow.Tap], now: float) -> list[QueueEntry]:
        """JobtolaunchSet#get_next (lib/cigri-joblib.rb)."""
        queue = self.queues[cluster]
        if not queue:
            return []
        grace = self.conf["RUNNER_TAP_GRACE_PERIOD"]
        counts: dict[int, int] = {}
        old = None
        out = []
        for e in sorted(queue, key=lambda e: (-e.task.priority, e.order_num, e.seq)):
            cid = e.task.campaign
            if self.campaign(cid).state != "running":
                continue
            counts[cid] = counts.get(cid, 0) + 1
            tap = taps.get(cid)
            if tap is None:
                continue
            if not tap.is_open and tap.close_date is not None and now - tap.close_date < grace:
                break
            if tap.is_open and counts[cid] <= tap.rate and cluster not in \
                    self.campaign(cid).blacklist:
                if old is not None and cid != old:
                    break
                out.append(e)
                old = cid
        return out

    def _get_by_ratio(self, cluster: str, oar: OarCluster, waiting: int, running: int,
                      now: float) -> list[QueueEntry]:
        """CiGri 2.x (Spritz + sched_jobratio+fifoCigri.pl) or the PI controller: a number of
        jobs per campaign (ratios) or per cluster (pi), taken in queue order."""
        queue = sorted(self.queues[cluster], key=lambda e: (-e.task.priority, e.order_num, e.seq))
        kind = self.flow["type"]
        free = oar.size - oar.used()
        last_free = self.last_free.get(cluster, free)
        self.last_free[cluster] = free
        mw = flow.max_waiting_jobs(oar.size, float(self.flow.get("flood_rate", 0.5)))
        out: list[QueueEntry] = []
        if kind == "pi":
            ctl = self.pi.get(cluster)
            if ctl is None:
                ctl = self.pi[cluster] = flow.PiController(
                    float(self.flow.get("initial", 10)), float(self.flow.get("reference", 10)),
                    float(self.flow.get("kp", 0.01)), float(self.flow.get("ki", 0.01)))
            n = ctl.update(waiting)
            self.tap_rows.append((now, cluster, "*", n, "pi", f"waiting={waiting}"))
            out = [e for e in queue if self.campaign(e.task.campaign).state == "running"][:n]
            for cid in {e.task.campaign for e in queue}:
                self._last_n[(cluster, cid)] = n
            return out
        for cid in dict.fromkeys(e.task.campaign for e in queue):
            camp = self.campaign(cid)
            if camp.state != "running":
                continue
            old = self.ratios.get((cluster, cid), 0.0)
            if kind == "tcp":
                jr = flow.tcp_ratio(old, waiting, last_free, mw)
            elif kind == "two_way":
                jr = flow.two_way_ratio(old, waiting, running, last_free, mw,
                                        bool(self.flow.get("perl_uninitialised", False)))
            elif kind == "adaptive_down_exp_up":
                jr = flow.adaptive_down_exp_up_ratio(old, waiting, last_free, mw)
            else:
                jr = flow.simple_ratio(camp.spec.clusters[cluster].resources)
            self.ratios[(cluster, cid)] = jr
            n = flow.jobratio_to_absolute(jr, free, mw)
            self._last_n[(cluster, cid)] = n
            self.tap_rows.append((now, cluster, camp.spec.name, n, kind, f"jr={jr:.6g}"))
            out.extend([e for e in queue if e.task.campaign == cid][:n])
        return out

    def _submit(self, cluster: str, entries: list[QueueEntry], now: float) -> bool:
        """take_tasks + Jobset#submit2: one OAR array job of the entries."""
        taken = {id(e) for e in entries}
        self.queues[cluster] = [e for e in self.queues[cluster] if id(e) not in taken]
        batch = []
        for e in entries:
            task = e.task
            camp = self.campaign(task.campaign)
            settings = camp.spec.clusters[cluster]
            number = next(self._job_ids)
            profile = self.profile_of[(camp.spec.id, cluster)][task.index]
            if settings.exit_66_rate > 0 or settings.exit_67_rate > 0:
                u = np.random.default_rng([self.spec.seed, camp.spec.id, task.index,
                                           task.attempts, 1]).random()
                if u < settings.exit_66_rate:
                    profile += "_ret66"
                elif u < settings.exit_66_rate + settings.exit_67_rate:
                    profile += "_ret67"
            job = self.source.job(res=settings.resources, walltime=settings.walltime,
                                  profile=profile, id=str(number))
            cj = CigriJob(number, job.id, task, cluster, settings.besteffort, task.priority, now,
                          e.queuing_date, e.seq, e.order_num)
            task.state = "job"
            self.jobs.append(cj)
            self.by_oar_id[job.id] = cj
            self._current[cluster].append(cj)
            self.rjms.expect(job.id, cluster, "besteffort" if settings.besteffort else "default")
            batch.append(job)
        self.source.submit_many(batch)
        return True

    # ------------------------------------------------------------------ updator, nikita
    def updator(self, now: float) -> None:
        """modules/updator.rb: campaigns over, grid_usage every 60 s."""
        for camp in self.campaigns:
            if camp.state == "running" and camp.remaining == 0:
                camp.state = "terminated"
                camp.end_seen = now
        if now - self._last_usage >= self.conf["GRID_USAGE_UPDATE_PERIOD"]:
            self._last_usage = now
            for name, oar in self.oar.items():
                self.usage_rows.append((now, name, oar.size, oar.used(), oar.busy_by_cigri, 0))
        self.finished = all(c.state in ("terminated", "cancelled") for c in self.campaigns)

    def nikita(self, now: float) -> None:
        """modules/nikita.rb: remote-waiting timeout, queued-for-too-long entries."""
        timeout = self.conf["REMOTE_WAITING_TIMEOUT"]
        frags = []
        for cluster in self.clusters:
            for job in self._current[cluster]:
                if job.state == "remote_waiting" and now - job.submission_time > timeout:
                    job.state = "event"
                    job.event = "REMOTE_WAITING_FRAG"
                    frags.append(job)
                    self._colombo(job, now)
            self._current[cluster] = [j for j in self._current[cluster] if j.state in ACTIVE]
            old = [e for e in self.queues[cluster] if now - e.queuing_date > timeout]
            if old:
                self.queues[cluster] = [e for e in self.queues[cluster]
                                        if now - e.queuing_date <= timeout]
                for e in old:
                    task = e.task
                    task.state = "bag"
                    self.campaign(task.campaign).bag.add((-task.priority, task.id))
        if frags:
            self.control.send([{"type": "oardel", "job_id": j.oar_id,
                                "event": "REMOTE_WAITING_FRAG"} for j in frags])

