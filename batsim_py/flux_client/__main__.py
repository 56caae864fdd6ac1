"""`python -m batsim_py.flux_client POLICY -s ENDPOINT`: serve a Flux-style scheduler.

POLICY is `fifo`, `easy` or your class as MODULE:CLASS or path/to/file.py:CLASS (a
`batsim_py.flux_client.Scheduler` subclass). It binds ENDPOINT (ZeroMQ REP) and serves
batsim-py (`batsim-py --protocol flux -s ENDPOINT ...`) until the simulation ends.
"""

from __future__ import annotations

import argparse
import json
import sys

from batsim_py.errors import BatsimPyError
from batsim_py.flux_client.scheduler import load_scheduler


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m batsim_py.flux_client",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("policy", help="fifo, easy, MODULE:CLASS or path/to/file.py:CLASS")
    parser.add_argument("-s", "--socket-endpoint", default="tcp://*:28000",
                        help="ZeroMQ endpoint to bind (default tcp://*:28000)")
    parser.add_argument("--queue-depth", default=None,
                        help="limited mode with N pending allocs, or 'unlimited'")
    parser.add_argument("--options", default=None, help="JSON object of policy options")
    parser.add_argument("--idle-timeout", type=float, default=600.0,
                        help="give up after SECONDS without a message (default 600)")
    args = parser.parse_args(argv)
    try:
        options = json.loads(args.options) if args.options else {}
        if not isinstance(options, dict):
            raise ValueError("not an object")
    except ValueError as exc:
        parser.error(f"--options must be a JSON object ({exc})")
    if args.queue_depth is not None:
        depth = args.queue_depth
        options["queue_depth"] = depth if depth == "unlimited" else int(depth)
    try:
        scheduler = load_scheduler(args.policy, options)
        scheduler.run(args.socket_endpoint, args.idle_timeout)
    except (TimeoutError, BatsimPyError, TypeError) as exc:  # (TypeError: bad options)
        print(f"flux_client: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
