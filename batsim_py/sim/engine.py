"""The simulation kernel: actors, rounds and SimGrid's clock.

Batsim's printed timestamps are SimGrid's, down to the last bit that survives `%f`, so the
kernel reproduces the two things SimGrid does that an ordinary event queue does not:

- **Rounds.** Woken actors run one after another until each issues a request (sleep, send,
  receive, create an actor); the requests are then handled in that order. A message posted in
  the same round as the server's "is my mailbox empty?" check is not yet in the mailbox. An
  actor that creates another yields: the child runs first in the next round.
- **The clock.** SimGrid does not keep completion dates. Each step it advances `now += delta`
  where `delta` is the smallest remaining duration over all activities, then subtracts `delta`
  from every activity's remaining duration (snapping below 1e-9 s to zero). Completion dates
  therefore carry the rounding of every step in between; reproducing them bit for bit is what
  keeps `-0.000000` and the sixth decimal identical to Batsim's.

Doing that naively costs O(activities) per step. Sleeps are kept in a heap by their
approximate end; only those within `WINDOW` seconds of the earliest are brought up to date,
replaying the recorded step deltas in order (`numpy.subtract.accumulate` is a sequential fold,
so the result is the same float as SimGrid's step-by-step subtraction).

Transfers and parallel tasks are SimGrid L07 actions: a latency phase, then progress at the rate
the fair-bottleneck solver (`batsim_py.sharing`) gives them, re-solved whenever the set of
enabled actions changes. A message alone in the system skips the solver (its rate is the
smallest link bandwidth or the TCP-gamma bound, exactly what the solver would return).

A message that takes no time (`--timing ideal`) is no action at all: it would end in a step of
zero seconds, which changes no pending duration, so when nothing else can end in that step
`run` wakes both ends of every such message in creation order without taking it.

Actors are generators yielding requests: `(SLEEP, seconds)`; `(PUT, message, cost)` to the
server, `(PUT_TO, message, cost, mailbox)` elsewhere; `(GET,)` for the server, `(GET_FROM,
mailbox, timeout)` elsewhere (resumes with TIMEOUT if nothing came in time); `(SPAWN,
generator, name, host)`; `(EXEC, row or row builder, timeout)`, which resumes its actor with
(status, task): "done", "cancelled", or "timeout" when the timeout (if >= 0) came first; then
the task goes on loading its resources, as SimGrid's `wait_for` leaves it, until `drop_task`.

Two shortcuts save generator resumes that would only hand the engine a request known in
advance (they change no order: the request is handled where the resume would have yielded it):
`(SPAWN_THEN, child actor, request)` creates an actor that the caller made (`Actor`,
`scripted`) and issues `request` for the caller in the next round, at the place its resume would
have run, without resuming it (Batsim's server spawning, then receiving again); with `None` it
resumes the caller as SPAWN does. A *scripted*
actor (`scripted(start, name)`) is a list of requests instead of a generator: `start()`, called
where its first resume would run, returns the requests (`(SLEEP_UNTIL, date)` sleeps until the
date if it is still ahead when reached, else is skipped) or a generator to go on with instead.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Generator
from heapq import heappop, heappush
from typing import Any, Final

import numpy as np

from batsim_py.errors import SimulationError
from batsim_py.sharing.ptask import assemble
from batsim_py.sharing.solver import fair_bottleneck
from batsim_py.sim.replay import DeltaReplay

# Request kinds. `Final` lets mypyc compile each test of a kind to a C comparison (a plain
# module global is looked up in the module's dict at every use).
SLEEP: Final = 0
PUT: Final = 1
GET: Final = 2
SPAWN: Final = 3
EXEC: Final = 4
PUT_TO: Final = 5
GET_FROM: Final = 6
SPAWN_THEN: Final = 7
SLEEP_UNTIL: Final = 8
TIMEOUT: Final = "timeout"  # what a GET with a timeout resumes with when nothing came
COMM: Final = 0
TASK: Final = 1

PRECISION_TIMING: Final = 1e-9  # SimGrid's precision/timing: countdowns below it are done
PRECISION_WORK: Final = 1e-14  # precision/work-amount x precision/timing: remaining work snap
DELTAS = 1 << 16  # steps recorded before the pending sleeps are brought up to date (tests patch it)
WINDOW: Final = 1e-3  # sleeps this close to the earliest one are brought up to date exactly
#: Catch-ups over more steps try replay.py's closed form first; below, a loop over the record
#: (some microseconds compiled; a long run has a few hundred catch-ups above 2048 steps).
REPLAY_FROM: Final = 8192
INF: Final = float("inf")
# (Final aliases: compiled, C statics instead of look-ups in this module's dict at each use)
_heappush: Final = heappush
_heappop: Final = heappop
#: Consecutive steps that neither advance the clock nor end or enable anything: every real
#: step does one of those, so reaching this many is a kernel bug, reported, never a spin.
MAX_IDLE_STEPS: Final = 1000

Request = tuple
ActorGen = Generator[Request, Any, Any]


class Actor:
    __slots__ = ("gen", "send", "value", "dead", "action", "name", "host", "pending", "script",
                 "pos", "start")

    def __init__(self, gen: ActorGen | None, name: str = "", host: str = "") -> None:
        self.gen = gen
        self.send: Any = gen.send if gen is not None else None
        self.value: Any = None
        self.dead = False
        self.action: Any = None
        self.name = name
        self.host = host  # where it runs ("" = the master host)
        self.pending: Request | None = None  # issued at its next turn instead of a resume
        self.script: list[Request] | None = None  # a scripted actor's requests
        self.pos = 0  # the next of them
        self.start: Any = None  # a scripted actor's start, called at its first turn


def scripted(start: Any, name: str = "", host: str = "") -> Actor:
    """An actor whose requests `start()` gives at its first turn: a list, or a generator it
    then runs as an ordinary actor (see the module's docstring)."""
    actor = Actor(None, name, host)
    actor.script = []
    actor.start = start
    return actor


class _Sleep:
    __slots__ = ("rem", "upd", "end", "seq", "actor", "guards")

    def __init__(self, rem: float, upd: int, end: float, seq: int, actor: Actor | None) -> None:
        self.rem = rem  # remaining duration once the first `upd` step deltas are applied
        self.upd = upd
        self.end = end  # approximate end date, for the heap only
        self.seq = seq  # creation order: SimGrid handles same-step completions in it
        self.actor = actor  # None once cancelled
        self.guards: _Action | Mailbox | None = None  # the task or receive it is the timeout of

    def __lt__(self, other: _Sleep) -> bool:
        """The heap's order: by end date, then creation order (what a heap of `(end, seq,
        sleep)` tuples gives, compared natively instead of item by item, no tuple per push)."""
        return self.end < other.end or (self.end == other.end and self.seq < other.seq)


# The sleep heap's push and pop: heapq's own algorithm (CPython's `_siftdown` and `_siftup`,
# so the same list as heapq makes), with `_Sleep.__lt__`'s order tested inline. Compiled, a
# comparison is then two C double comparisons where heapq's C code calls `__lt__` through
# rich comparison (f_50k: heappop and heappush 100,000 times each, 0.7 and 0.4 k
# instructions a call); interpreted, heapq's C code stays the faster.
_COMPILED: Final = not __file__.endswith(".py")


def sleep_push(heap: list[_Sleep], item: _Sleep) -> None:
    """`heapq.heappush(heap, item)`."""
    if not _COMPILED:
        _heappush(heap, item)
        return
    heap.append(item)
    _sift_down(heap, item, len(heap) - 1)


def _sift_down(heap: list[_Sleep], item: _Sleep, pos: int) -> None:
    """heapq's `_siftdown`: `item` goes to `pos`, or up past the parents it sorts before."""
    end = item.end
    seq = item.seq
    while pos > 0:
        parentpos = (pos - 1) >> 1
        parent = heap[parentpos]
        if end < parent.end or (end == parent.end and seq < parent.seq):
            heap[pos] = parent
            pos = parentpos
            continue
        break
    heap[pos] = item


def sleep_pop(heap: list[_Sleep]) -> _Sleep:
    """`heapq.heappop(heap)`."""
    if not _COMPILED:
        popped: _Sleep = _heappop(heap)
        return popped
    last = heap.pop()
    if not heap:
        return last
    top = heap[0]
    # _siftup(heap, 0): the smaller child up until a leaf, then `last` down from there
    endpos = len(heap)
    pos = 0
    childpos = 1
    while childpos < endpos:
        rightpos = childpos + 1
        if rightpos < endpos:
            a = heap[childpos]
            b = heap[rightpos]
            if not (a.end < b.end or (a.end == b.end and a.seq < b.seq)):
                childpos = rightpos
        heap[pos] = heap[childpos]
        pos = childpos
        childpos = 2 * pos + 1
    _sift_down(heap, last, pos)
    return top


class _Action:
    """An L07 action: a message (COMM) or a parallel task (TASK).

    Latency phase first (disabled: no rate, loads nothing), then `remains` (1, or 0 for an
    action that loads nothing) decreases at `rate`, from the last solve.
    """

    __slots__ = ("kind", "latency", "remains", "rate", "lone_rate", "enabled", "seq",
                 "enable_seq", "row", "host", "dst", "nbytes", "sender", "receiver", "msg",
                 "sender_first", "actor", "timeout")

    def __init__(self, kind: int, latency: float, remains: float, seq: int) -> None:
        self.kind = kind
        self.latency = latency
        self.remains = remains
        self.rate = 0.0
        self.enabled = latency <= 0.0
        self.seq = seq
        self.enable_seq = seq
        self.row: Any = None  # PtaskRow, for the solver (messages build theirs on demand)
        self.timeout: _Sleep | None = None
        self.actor: Actor | None = None  # the task's waiter (None once it gave up)
        # A message: its route (sender host, receiver host or "" for the master), size, rate
        # when alone in the system, both ends and which of them started waiting first.
        self.host = ""
        self.dst = ""
        self.nbytes = 1.0
        self.lone_rate = 0.0
        self.sender: Actor | None = None
        self.receiver: Actor | None = None
        self.msg: Any = None
        self.sender_first = False


class Mailbox:
    """A SimGrid mailbox: FIFO posts, one receiver, one transfer at a time (Batsim's server
    mailbox, and the mailbox a usage_trace job waits on for its ranks)."""

    __slots__ = ("engine", "queue", "waiting", "guard")

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.queue: deque[tuple[Actor, Any, tuple]] = deque()
        self.waiting: Actor | None = None
        self.guard: _Sleep | None = None  # the waiting receiver's timeout, if any

    def post(self, sender: Actor, msg: Any, cost: tuple) -> None:
        receiver = self.waiting
        if receiver is not None:
            self.waiting = None
            if self.guard is not None:  # matched in time: no timeout any more
                self.guard.actor = None
                self.guard = None
            self.engine._start_comm(sender, msg, cost, receiver, sender_first=False)
        else:
            self.queue.append((sender, msg, cost))

    def get(self, receiver: Actor, timeout: float = -1.0) -> None:
        if self.queue:
            sender, msg, cost = self.queue.popleft()
            self.engine._start_comm(sender, msg, cost, receiver, sender_first=True)
        else:
            self.waiting = receiver
            if timeout >= 0:
                self.guard = self.engine._guard(receiver, self, timeout)

    def has_pending(self) -> bool:
        """Batsim's `mailbox_empty` check, negated: a message is posted but not received."""
        return bool(self.queue)


class Engine:
    def __init__(self) -> None:
        self.now = 0.0
        self.to_run: list[Actor] = []
        self.mailbox = Mailbox(self)  # the server's
        self._mailboxes: dict[str, Mailbox] = {}
        self._sleeps: list[_Sleep] = []  # a heap (`_Sleep.__lt__`)
        self._actions: list[_Action] = []  # L07 actions in creation order
        # Messages that take no time (--timing ideal: no latency, no bytes), in creation order:
        # (seq, sender, receiver, message, sender_first, cost). They end at the next step,
        # which takes no time either; when nothing else can end in it, `run` delivers them
        # without a step (see `_deliver_instant`).
        self._instant: list[tuple[int, Actor, Actor, Any, bool, tuple]] = []
        # False: such messages are ordinary actions ended by a step of their own, as before
        # (tests compare both ways; the outputs are the same).
        self.instant = True
        self._dirty = False  # the set of enabled actions changed: re-solve the rates
        self.network: Any = None  # batsim_py.sim.network.Network, needed for tasks
        self.master_host = ""
        # Called with the hosts of an activity whose state changes (ends, is cancelled: False;
        # a single-host task as it starts: True), its rate still counted: the update points of
        # SimGrid's energy plugin. None when energy is not simulated.
        self.on_activity_change: Any = None
        # batsim_py.sim.availability.Availability when the platform has profiles (speed,
        # bandwidth, latency over time): applies their events within the steps.
        self.availability: Any = None
        # The step deltas since the last rebase: a list, which compiled code reads without
        # boxing; copied into `_dnp` (numpy) only for the closed-form catch-ups of long sleeps.
        self._deltas: list[float] = []
        self._dnp = np.empty(DELTAS)
        self._deltas_max = DELTAS  # (the module's value when made: tests lower it)
        self._dnp_n = 0  # deltas copied into `_dnp` so far
        self._replay = DeltaReplay()  # closed-form catch-ups over `_deltas` (replay.py)
        self._k = 0  # number of steps taken
        self._seq = 0
        self._idle = 0  # consecutive steps without progress (see MAX_IDLE_STEPS)
        # Called with a round of one or two actors before it runs; it may do what that round
        # and the next ones would do without rounds and leave in the list what runs instead
        # (Simulation.shortcut). None: no such shortcut.
        self.shortcut: Any = None

    # ------------------------------------------------------------------ actors
    def spawn(self, gen: ActorGen, name: str = "", host: str = "") -> Actor:
        """Start an actor from outside any actor (it runs in the next round)."""
        actor = Actor(gen, name, host)
        self.to_run.append(actor)
        return actor

    def sleep(self, actor: Actor, duration: float) -> None:
        """Put `actor` to sleep for `duration` seconds: the SLEEP request, for a kernel that
        runs its actors without requests (sim/lean.py)."""
        self._seq += 1
        s = _Sleep(duration, self._k, self.now + duration, self._seq, actor)
        actor.action = s
        sleep_push(self._sleeps, s)

    # ------------------------------------------------- steps taken without rounds
    # For a caller that knows nothing else can end meanwhile (Simulation.quiet_reply): the
    # same deltas, recorded the same way, as the steps the rounds would take.

    def quiet(self) -> bool:
        """Nothing in flight: no transfer or task, no message waiting, no receiver waiting,
        no zero-time message, and no hook that a step would call (energy, availability)."""
        mailbox = self.mailbox
        return (not self._actions and not self._instant and not mailbox.queue
                and mailbox.waiting is None and self.on_activity_change is None
                and self.availability is None)

    def next_end(self) -> float:
        """The approximate end date of the earliest pending sleep (inf: none); a cancelled
        one may stand first, which only makes it earlier than the real one."""
        heap = self._sleeps
        return heap[0].end if heap else INF

    def advance(self, delta: float) -> None:
        """The step that ends a sleep of `delta` seconds when no other activity ends in it
        (as `_step` records it)."""
        k = self._k
        self.now = self.now + delta
        if k == self._deltas_max:
            k = self._rebase()
        self._deltas.append(delta)
        self._k = k + 1

    def transfer(self, latency: float, seconds: float) -> None:
        """The two steps of a message alone in the system, its latency then its bytes (as
        `_lone_comm` records them)."""
        now = self.now
        k = self._k
        if k + 2 > self._deltas_max:
            k = self._rebase()
        deltas = self._deltas
        deltas.append(latency)
        deltas.append(seconds)
        self._k = k + 2
        self.now = (now + latency) + seconds

    def kill(self, actor: Actor) -> None:
        """Stop an actor now; its pending sleep or task is cancelled (SimGrid's Actor::kill)."""
        actor.dead = True
        self._cancel(actor.action)
        actor.action = None
        if actor.gen is not None:
            actor.gen.close()

    def mailbox_named(self, name: str) -> Mailbox:
        box = self._mailboxes.get(name)
        if box is None:
            box = self._mailboxes[name] = Mailbox(self)
        return box

    def drop_mailbox(self, name: str) -> None:
        self._mailboxes.pop(name, None)

    def _guard(self, actor: Actor, guarded: Any, timeout: float) -> _Sleep:
        """A sleep that ends `actor`'s wait after `timeout` seconds (resumes with TIMEOUT)."""
        self._seq += 1
        t = _Sleep(timeout, self._k, self.now + timeout, self._seq, actor)
        t.guards = guarded
        sleep_push(self._sleeps, t)
        return t

    def cancel_task(self, actor: Actor) -> bool:
        """Cancel the task `actor` waits for (Batsim's kill of a running ptask); the actor
        resumes with "cancelled". False if it is not waiting for a task."""
        action = actor.action
        if not isinstance(action, _Action):
            return False
        self._cancel(action)
        actor.action = None
        actor.value = ("cancelled", action)
        self.to_run.append(actor)
        return True

    def drop_task(self, action: Any) -> None:
        """Stop a task nobody waits for any more, if it still runs (its last reference in
        Batsim went away: SimGrid then cancels it)."""
        if action in self._actions:
            self._cancel(action)

    def _cancel(self, action: Any) -> None:
        hook = self.on_activity_change
        if isinstance(action, _Sleep):
            if hook is not None and action.actor is not None:
                hook(self._hosts_of(action), False)
            action.actor = None
        elif isinstance(action, _Action):
            if hook is not None:
                hook(self._hosts_of(action), False)
            self._actions.remove(action)
            self._dirty = True
            if action.timeout is not None:
                action.timeout.actor = None

    def task_remains(self, actor: Actor) -> float:
        """Remaining fraction of the task `actor` waits for (1 - progress)."""
        action = actor.action
        return action.remains if isinstance(action, _Action) else 1.0

    def cpu_load(self, host: int) -> float:
        """Flop/s consumed on a host's CPU by enabled tasks, at the rates of the last solve.

        Summed as SimGrid's `Constraint::get_usage` does, over the CPU's enabled-element list:
        an action's elements are pushed at its front when it is enabled, so the most recently
        enabled action comes first and, within one action, its executors in reverse order.
        Any other order may change the last bit of the energy plugin's joules.
        """
        tasks = [a for a in self._actions if a.kind == TASK and a.enabled]
        tasks.sort(key=_enable_seq_of, reverse=True)
        load = 0.0
        for a in tasks:
            rate = a.rate
            hosts = a.row.cpu_hosts.tolist()
            flops = a.row.cpu_flops.tolist()
            for k in range(len(hosts) - 1, -1, -1):
                if hosts[k] == host and flops[k] > 0.0:
                    load += flops[k] * rate
        return load

    def cpu_loads(self) -> dict[int, float]:
        """`cpu_load` of every host with a task on its CPU (the others: 0.0), in one pass over
        the tasks: each host's sum has the same terms in the same order as `cpu_load`'s."""
        tasks = [a for a in self._actions if a.kind == TASK and a.enabled]
        tasks.sort(key=_enable_seq_of, reverse=True)
        loads: dict[int, float] = {}
        for a in tasks:
            rate = a.rate
            hosts = a.row.cpu_hosts.tolist()
            flops = a.row.cpu_flops.tolist()
            for k in range(len(hosts) - 1, -1, -1):
                if flops[k] > 0.0:
                    h = hosts[k]
                    loads[h] = loads.get(h, 0.0) + flops[k] * rate
        return loads

    def set_speed(self, host: int, core_speed: float) -> None:
        """A host changed pstate: its CPU capacity and the bounds of the tasks on it change."""
        tasks = [a for a in self._actions if a.kind == TASK and host in a.row.cpu_hosts]
        rows = self.network.set_speed(host, core_speed, [a.row for a in tasks])
        for a, row in zip(tasks, rows, strict=True):
            a.row = row
        self._dirty = True

    def _start_task(self, actor: Actor, row: Any, timeout: float) -> None:
        if callable(row):
            # Built now, at the end of the round, as SimGrid creates the action: a pstate
            # change made earlier in this round already sets its speed bound.
            row = row()
        self._seq += 1
        a = _Action(TASK, row.latency, row.work, self._seq)
        a.row = row
        a.actor = actor
        actor.action = a
        if len(row.cpu_hosts) == 1 and self.on_activity_change is not None:
            # A single-host execution updates its host as it starts.
            self.on_activity_change(self._hosts_of(a), True)
        self._actions.append(a)
        if a.enabled:
            self._dirty = True
        if timeout >= 0:
            self._seq += 1
            t = _Sleep(timeout, self._k, self.now + timeout, self._seq, actor)
            t.guards = a
            a.timeout = t
            sleep_push(self._sleeps, t)

    def run(self) -> None:
        """Run rounds and steps until nothing can happen any more."""
        mailbox = self.mailbox
        post = mailbox.post  # the server's mailbox
        get = mailbox.get
        step = self._step
        lone_comm = self._lone_comm
        ran: list[tuple[Actor, Request]] = []
        spare: list[Actor] = []  # the list of the round before, reused (fewer allocations)
        shortcut = self.shortcut
        while True:
            to_run = self.to_run
            while to_run:
                if shortcut is not None and len(to_run) <= 2:
                    shortcut(to_run)
                self.to_run = spare
                ran.clear()
                for actor in to_run:
                    if actor.dead:
                        continue
                    pending = actor.pending
                    if pending is not None:  # known without resuming it (SPAWN_THEN)
                        actor.pending = None
                        ran.append((actor, pending))
                        continue
                    script = actor.script
                    if script is not None:
                        pending = self._script_next(actor, script)
                        if pending is None:  # its requests are over
                            actor.dead = True
                            actor.value = None
                        else:
                            ran.append((actor, pending))
                        continue
                    try:
                        ran.append((actor, actor.send(actor.value)))
                    except StopIteration:
                        actor.dead = True
                        # Its last value may hold what holds the actor (a job's completion
                        # message holds the job, which holds its actor): break the cycle.
                        actor.value = None
                # Requests are handled after the whole round, in the order the actors ran.
                for actor, request in ran:
                    if actor.dead:
                        continue
                    kind: int = request[0]
                    if kind == PUT:
                        post(actor, request[1], request[2])
                    elif kind == GET:
                        get(actor)
                    elif kind == SLEEP:
                        self.sleep(actor, request[1])
                    else:
                        self.handle(actor, request)
                to_run.clear()
                spare = to_run
                to_run = self.to_run
            if self._instant and self._deliver_instant():
                continue
            actions = self._actions
            if len(actions) == 1 and actions[0].kind == COMM and lone_comm(actions[0]):
                continue
            if not step():
                return

    def handle(self, actor: Actor, request: Request) -> None:
        """One actor's request, handled after its round (`run` handles the usual three kinds
        itself)."""
        kind: int = request[0]
        if kind == PUT:
            self.mailbox.post(actor, request[1], request[2])
        elif kind == GET:
            self.mailbox.get(actor)
        elif kind == SLEEP:
            self.sleep(actor, request[1])
        elif kind == SPAWN:
            child = Actor(*request[1:])
            self.to_run.append(child)
            actor.value = child
            self.to_run.append(actor)
        elif kind == SPAWN_THEN:
            self.to_run.append(request[1])
            actor.value = request[1]
            actor.pending = request[2]
            self.to_run.append(actor)
        elif kind == EXEC:
            self._start_task(actor, request[1], request[2])
        elif kind == PUT_TO:
            self.mailbox_named(request[3]).post(actor, request[1], request[2])
        elif kind == GET_FROM:
            self.mailbox_named(request[1]).get(actor, request[2])
        else:  # pragma: no cover - programming error
            raise ValueError(f"unknown request {request!r}")

    def _script_next(self, actor: Actor, script: list[Request]) -> Request | None:
        """A scripted actor's next request (None: it is over)."""
        start = actor.start
        if start is not None:
            actor.start = None
            made = start()
            if not isinstance(made, list):  # a generator: an ordinary actor from now on
                actor.script = None
                actor.gen = made
                actor.send = made.send
                try:
                    request: Request = made.send(None)
                except StopIteration:
                    return None
                return request
            actor.script = script = made
        pos = actor.pos
        while pos < len(script):
            request = script[pos]
            pos += 1
            if request[0] == SLEEP_UNTIL:
                date: float = request[1]
                if date > self.now:
                    actor.pos = pos
                    return (SLEEP, date - self.now)
                continue
            actor.pos = pos
            return request
        actor.pos = pos
        return None

    def _start_comm(
        self, sender: Actor, msg: Any, cost: tuple, receiver: Actor, sender_first: bool,
    ) -> None:
        self._seq += 1
        if (cost[2] and cost[0] <= 0.0 and self.instant and self.on_activity_change is None
                and self.availability is None):
            self._instant.append((self._seq, sender, receiver, msg, sender_first, cost))
            return
        if len(cost) == 6:
            latency, rate, free, c_host, c_dst, c_nbytes = cost
        else:  # (latency, rate, free, host): a 1-byte message to the master host
            latency, rate, free, c_host = cost
            c_dst, c_nbytes = "", 1.0
        c = _Action(COMM, latency, 0.0 if free else 1.0, self._seq)
        c.lone_rate = rate
        c.host = c_host
        c.dst = c_dst
        c.nbytes = c_nbytes
        c.sender = sender
        c.receiver = receiver
        c.msg = msg
        c.sender_first = sender_first
        self._actions.append(c)
        if c.enabled:
            self._dirty = True

    def _solve(self) -> None:
        """Rates of the enabled actions (SimGrid re-solves only when the system changed)."""
        self._dirty = False
        enabled = [a for a in self._actions if a.enabled]
        if not enabled:
            return
        if len(enabled) == 1 and enabled[0].kind == COMM:
            enabled[0].rate = enabled[0].lone_rate
            return
        enabled.sort(key=_enable_seq_of)
        network = self.network
        rows = []
        for a in enabled:
            if a.row is None:  # a message sharing the network with tasks
                a.row = network.message_row(a.host, a.dst or self.master_host, a.nbytes)
            rows.append(a.row)
        usage = assemble(rows, network.n_hosts, len(network.link_names))
        try:
            rates = fair_bottleneck(usage, network.capacity, network.fatpipe,
                                    np.array([r.bound for r in rows]))
        except SimulationError as exc:
            raise SimulationError(f"at t={self.now!r}, sharing the resources of "
                                  f"{_describe(enabled)}: {exc}") from None
        for a, x in zip(enabled, rates.tolist(), strict=True):
            a.rate = x

    # -------------------------------------------------------------------- clock
    def _catch_up(self, s: _Sleep, k: int) -> None:
        upd = s.upd
        n = k - upd
        if n <= 0:
            return
        if n <= REPLAY_FROM:  # a loop (compiled, it costs less than numpy's set-up)
            rem = s.rem
            deltas = self._deltas
            for i in range(upd, k):
                rem -= deltas[i]
            s.rem = rem
        else:
            m = self._dnp_n
            if m < k:
                self._dnp[m:k] = self._deltas[m:k]
                self._dnp_n = k
            view = self._dnp[:k]
            rem = self._replay.fold(s.rem, view, upd, k)
            if rem < 0.0:  # the closed form does not apply: replay the fold
                seq = np.empty(n + 1)
                seq[0] = s.rem
                seq[1:] = view[upd:]
                rem = float(np.subtract.accumulate(seq)[-1])
            s.rem = rem
        s.upd = k

    def _rebase(self) -> int:
        """The step record is full: bring every pending sleep up to date (the same
        subtractions it would get later, in the same order) and start the record again."""
        k = self._k
        for s in self._sleeps:
            if s.actor is not None:
                self._catch_up(s, k)
            s.upd = 0
        self._deltas.clear()
        self._dnp_n = 0
        self._replay.reset()
        self._k = 0
        return 0

    def _step(self) -> bool:
        """One SimGrid engine step: advance to the next completion, wake the actors."""
        now = self.now
        k = self._k
        delta = -1.0
        actions = self._actions
        if self._dirty:
            self._solve()
        for c in actions:
            if c.enabled and c.rate > 0:
                v = c.remains / c.rate if c.remains > 0 else 0.0
                if delta < 0 or v < delta:
                    delta = v
            if c.latency > 0 and (delta < 0 or c.latency < delta):
                delta = c.latency
        heap = self._sleeps
        candidates: list[_Sleep] = []
        while heap and heap[0].actor is None:  # cancelled by a kill
            sleep_pop(heap)
        if heap:
            limit = heap[0].end
            if delta >= 0 and now + delta < limit:
                limit = now + delta
            limit += WINDOW
            while heap and heap[0].end <= limit:
                s = sleep_pop(heap)
                if s.actor is None:
                    continue
                self._catch_up(s, k)
                candidates.append(s)
                if delta < 0 or s.rem < delta:
                    delta = s.rem
        if self.availability is not None and delta >= 0:
            delta = self.availability.apply_due(self, now, delta)
        if delta < 0:
            stuck = [a for a in actions if a.enabled and a.remains > 0.0
                     and (a.kind == COMM or a.actor is not None)]
            if stuck:
                raise SimulationError(
                    f"at t={now!r} {_describe(stuck)} can never end: the solved rate is 0 (a "
                    "zero bandwidth or speed on its resources?) and nothing else can happen")
            return False
        if not delta < INF or not now + delta < INF:  # nan, or the clock leaves the floats
            raise SimulationError(
                f"at t={now!r} the next event of {_describe(actions) or 'a sleep'} is "
                f"{delta!r} s away: the simulated clock would not stay finite (check the "
                "platform's speeds and bandwidths and the workload's amounts and delays)")

        self.now = now = now + delta
        if k == self._deltas_max:
            k = self._rebase()
        self._deltas.append(delta)
        self._k = k + 1

        done: list[Any] = []
        hook = self.on_activity_change
        for s in candidates:
            rem = s.rem - delta
            if rem < PRECISION_TIMING:
                done.append(s)
                if hook is not None:
                    hook(self._hosts_of(s), False)
            else:
                s.rem = rem
                s.upd = k + 1
                sleep_push(heap, s)
        enabled_now = False
        if actions:
            alive = []
            for c in actions:
                was_enabled = c.enabled
                if c.latency > 0:
                    if c.latency > delta:
                        c.latency -= delta
                        if c.latency < PRECISION_TIMING:
                            c.latency = 0.0
                    else:
                        c.latency = 0.0
                    if c.latency <= 0.0:
                        c.enabled = enabled_now = True
                        self._seq += 1
                        c.enable_seq = self._seq
                        self._dirty = True
                if was_enabled and c.remains > 0.0:
                    if c.rate == INF:  # the solver's "no limit" (rounds that never end):
                        c.remains = 0.0  # done within this step, never inf * 0 = nan
                    else:
                        c.remains -= c.rate * delta
                        if c.remains < PRECISION_WORK:
                            c.remains = 0.0
                if c.enabled and c.remains <= 0.0:
                    done.append(c)
                    self._dirty = True
                    if hook is not None:
                        hook(self._hosts_of(c), False)
                else:
                    alive.append(c)
            self._actions = alive
        if delta > 0.0 or done or enabled_now:
            self._idle = 0
        else:
            self._idle += 1
            if self._idle > MAX_IDLE_STEPS:
                raise SimulationError(
                    f"at t={now!r} the kernel made {MAX_IDLE_STEPS} steps without progress "
                    f"({_describe(actions)}): internal error, please report the inputs")
        if len(done) > 1:
            done.sort(key=_seq_of)
        to_run = self.to_run
        for a in done:
            if type(a) is _Sleep:
                actor = a.actor
                if actor is None:  # the task it guarded ended in this same step
                    continue
                actor.action = None
                if a.guards is None:  # a plain sleep (the usual case)
                    actor.value = None
                elif isinstance(a.guards, Mailbox):  # nothing came in time
                    a.guards.waiting = None
                    a.guards.guard = None
                    actor.value = TIMEOUT
                else:
                    # A task's timeout. SimGrid's wait_for gives up waiting but does not cancel
                    # the task: it keeps loading its resources until it completes on its own.
                    a.guards.actor = None
                    a.guards.timeout = None
                    actor.value = ("timeout", a.guards)
                to_run.append(actor)
            elif a.kind == COMM:
                _wake_comm(a, to_run)
            else:
                actor = a.actor
                if actor is None:  # an abandoned task (its wait timed out) ends
                    continue
                actor.action = None
                if a.timeout is not None:
                    a.timeout.actor = None
                actor.value = ("done", a)
                to_run.append(actor)
        return True

    def _deliver_instant(self) -> bool:
        """End the messages that take no time, without a step, when nothing else can end in
        the step that would end them; else make them ordinary actions of that step.

        That step would take no time (delta 0: every pending duration stays as it is, so not
        recording it changes no later date) and wake both ends of each message in creation
        order. Anything else that could end in it (a task, a sleep about to end, a message
        with a latency) needs the real step, which then ends these messages too.
        """
        instant = self._instant
        heap = self._sleeps
        if not self._actions and not (heap and heap[0].end <= self.now + WINDOW):
            to_run = self.to_run
            for _, sender, receiver, msg, sender_first, _ in instant:
                receiver.value = msg
                sender.value = None
                if sender_first:
                    to_run.append(sender)
                    to_run.append(receiver)
                else:
                    to_run.append(receiver)
                    to_run.append(sender)
            instant.clear()
            self._idle = 0
            return True
        for seq, sender, receiver, msg, sender_first, cost in instant:
            c = _Action(COMM, 0.0, 0.0, seq)
            c.lone_rate = cost[1]
            c.host = cost[3]
            if len(cost) == 6:
                c.dst = cost[4]
                c.nbytes = cost[5]
            c.sender = sender
            c.receiver = receiver
            c.msg = msg
            c.sender_first = sender_first
            self._actions.append(c)
        instant.clear()
        self._dirty = True
        return False

    def _lone_comm(self, c: _Action) -> bool:
        """Both steps of a transfer at once, when no sleep can end before it.

        The common case (one message in flight, every sleep far away) takes two SimGrid steps:
        the latency, then the byte. Doing them together records the same two deltas and gives
        the same dates, without scanning the sleeps twice.
        """
        if (c.enabled or c.remains <= 0.0 or not c.lone_rate > 0.0
                or self.availability is not None):
            return False
        now = self.now
        k = self._k
        d1 = c.latency
        d2 = c.remains / c.lone_rate
        heap = self._sleeps
        if heap and heap[0].end <= now + d1 + d2 + WINDOW or not (now + d1) + d2 < INF:
            return False  # (an overflowing clock is reported by _step)
        if k + 2 > self._deltas_max:
            k = self._rebase()
        deltas = self._deltas
        deltas.append(d1)
        deltas.append(d2)
        self._k = k + 2
        self.now = (now + d1) + d2  # (remains - rate * d2 is below PRECISION_WORK: done)
        self._actions = []
        if self.on_activity_change is not None:
            self.on_activity_change(self._hosts_of(c), False)
        _wake_comm(c, self.to_run)
        return True

    def _hosts_of(self, activity: Any) -> list[int]:
        """Host indices an activity runs on (for the energy plugin's update points)."""
        index = self.network.host_index
        master = index[self.master_host]
        if isinstance(activity, _Sleep):
            assert activity.actor is not None  # (cancelled sleeps are not reported)
            host = activity.actor.host
            return [index[host] if host else master]
        if activity.kind == COMM:
            return [index[activity.host], index[activity.dst] if activity.dst else master]
        return sorted(set(activity.row.cpu_hosts.tolist()))


def _describe(actions: list[_Action]) -> str:
    """The jobs (actor names) behind tasks and the number of messages, for error messages."""
    names: list[str] = []
    messages = 0
    for a in actions:
        if a.kind == COMM:
            messages += 1
        else:
            actor = a.actor
            names.append(f"job {actor.name}" if actor is not None and actor.name
                         else "an abandoned task")
    if messages:
        names.append(f"{messages} message(s)")
    return ", ".join(names)


def _enable_seq_of(action: _Action) -> int:
    return action.enable_seq


def _wake_comm(c: _Action, to_run: list[Actor]) -> None:
    """A finished transfer wakes both sides, in the order they started waiting on it."""
    sender, receiver = c.sender, c.receiver
    assert sender is not None and receiver is not None  # (set as the transfer starts)
    receiver.value = c.msg
    sender.value = None
    if c.sender_first:
        to_run.append(sender)
        to_run.append(receiver)
    else:
        to_run.append(receiver)
        to_run.append(sender)


def _seq_of(action: Any) -> int:
    return action.seq
