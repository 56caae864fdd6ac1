"""What a run wrote: the CLI's last line says exactly which files exist (or why none do)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class OutputReport:
    """Filled by the output writer as files are renamed into place."""

    paths: list[str] = field(default_factory=list)
    error: str | None = None  # why the outputs could not be written, if they could not
