"""Shipped Batsim 5 external decision components (EDCs) written in Python.

Each module exposes the C ABI's three functions as Python functions (batsim_edc_init,
batsim_edc_take_decisions, batsim_edc_deinit), so batsim-py runs it in-process
(`-l batsim_py.edcs.fcfs '{}'`), and `python -m batsim_py.edcs.serve MODULE ENDPOINT` runs it
as a ZeroMQ process EDC that batsim-py, or Batsim 5, drives over a socket. `kit` holds the
helpers they share (message parsing and building, JSON or binary). docs/batprotocol.md shows
how to write one.
"""
