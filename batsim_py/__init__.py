"""batsim-py: a standalone Python simulator compatible with Batsim 4 (inputs, protocol, outputs)."""

__version__ = "0.1.0"
