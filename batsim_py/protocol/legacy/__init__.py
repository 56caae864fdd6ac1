"""Batsim's legacy text protocol (2015-2017, seed 001): wire format only.

`framing` packs and unpacks the Unix-socket frames (u32 native-endian size, then the text),
`message` splits and joins `VERSION:TIME|DATE:STAMP[:CONTENT]|...` exactly as Batsim did,
`stamps` says which stamp exists in which version and direction, and `ids` turns machine sets
and job ids into text and back. Nothing here knows the engine or a socket: the decision peer
(`batsim_py/decision/legacy_peer.py`) maps these records to typed events and decisions.
"""
