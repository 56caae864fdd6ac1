"""flatc 2.0.8's Python classes for batprotocol.fbs (do not edit: run
`python -m batsim_py.protocol.batprotocol.regenerate`). The classes import each other as
`batprotocol.fb.X`; batsim_py.protocol.batprotocol.binary makes that name resolve here."""
