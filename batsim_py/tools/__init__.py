"""Command-line helpers around the simulator (workload conversion and generation).

Each module has a `main(argv) -> int` so it runs as `python -m batsim_py.tools.<name>` and can
be wired as a `batsim-py` subcommand.
"""
