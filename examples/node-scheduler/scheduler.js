// A complete Batsim scheduler in Node.js: first come, first served.
//
// It speaks the Batsim 4 JSON protocol over ZeroMQ, so it drives batsim-py and the real
// Batsim alike:
//
//   npm install --prefix examples/node-scheduler
//   node examples/node-scheduler/scheduler.js tcp://127.0.0.1:28000 &
//   batsim-py -p platforms/small4.xml -w workloads/delays_small.json -s tcp://127.0.0.1:28000
//
// The scheduler binds a REP socket; the simulator connects and sends one message per call,
// {"now": T, "events": [...]}, and waits for the reply {"now": T, "events": [decisions]}.
// Policy (the same as examples/zmq_fcfs.py): jobs start in submission order on the lowest free
// machines; the first job that does not fit waits and everything behind it waits too; a job
// larger than the platform is rejected; machines made unavailable by external events are not
// used until they are available again.
"use strict";

const zmq = require("zeromq");

// Batsim's interval sets: "0-3 7" -> [0, 1, 2, 3, 7]
function parseIds(text) {
  const ids = [];
  for (const token of text.split(" ").filter((t) => t !== "")) {
    const [lo, hi] = token.split("-").map(Number);
    for (let i = lo; i <= (hi === undefined ? lo : hi); i++) ids.push(i);
  }
  return ids;
}

// [0, 1, 2, 3, 7] -> "0-3 7"
function formatIds(ids) {
  const runs = [];
  for (const i of [...ids].sort((a, b) => a - b)) {
    const last = runs[runs.length - 1];
    if (last && last[1] === i - 1) last[1] = i;
    else runs.push([i, i]);
  }
  return runs.map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`)).join(" ");
}

class Fcfs {
  constructor() {
    this.machines = []; // compute machine ids
    this.busy = new Set();
    this.unavailable = new Set();
    this.queue = []; // [job id, number of machines] in arrival order
  }

  // React to one message's events; return the decisions (all taken at `now`).
  handle(now, events) {
    for (const { type, data } of events) {
      if (type === "SIMULATION_BEGINS") {
        this.machines = data.compute_resources.map((r) => r.id);
      } else if (type === "JOB_SUBMITTED") {
        this.queue.push([data.job_id, data.job.res]);
      } else if (type === "JOB_COMPLETED") {
        for (const m of parseIds(data.alloc)) this.busy.delete(m);
      } else if (type === "NOTIFY" && data.type === "event_machine_unavailable") {
        for (const m of parseIds(data.resources)) this.unavailable.add(m);
      } else if (type === "NOTIFY" && data.type === "event_machine_available") {
        for (const m of parseIds(data.resources)) this.unavailable.delete(m);
      }
    }
    const decisions = [];
    while (this.queue.length > 0) {
      const [jobId, res] = this.queue[0];
      if (res > this.machines.length) {
        decisions.push({ timestamp: now, type: "REJECT_JOB", data: { job_id: jobId } });
        this.queue.shift();
        continue;
      }
      const free = this.machines.filter((m) => !this.busy.has(m) && !this.unavailable.has(m));
      if (free.length < res) break; // strict FCFS: nothing overtakes the first waiting job
      const alloc = free.slice(0, res);
      for (const m of alloc) this.busy.add(m);
      decisions.push({
        timestamp: now,
        type: "EXECUTE_JOB",
        data: { job_id: jobId, alloc: formatIds(alloc) },
      });
      this.queue.shift();
    }
    return decisions;
  }
}

async function main(endpoint) {
  const socket = new zmq.Reply();
  await socket.bind(endpoint);
  const scheduler = new Fcfs();
  for await (const [raw] of socket) {
    const message = JSON.parse(raw.toString());
    const decisions = scheduler.handle(message.now, message.events);
    await socket.send(JSON.stringify({ now: message.now, events: decisions }));
    if (message.events.some((e) => e.type === "SIMULATION_ENDS")) break;
  }
  socket.close();
}

main(process.argv[2] || "tcp://127.0.0.1:28000").catch((err) => {
  console.error(`node scheduler: ${err.message}`);
  process.exit(1);
});
