"""Writing Batsim JSON workloads the way people read them: one job or profile per line.

A generated workload with thousands of jobs stays diff-able and greppable, and numbers keep
their JSON type (integers stay integers) so the file loads back to the same descriptions.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def workload_json_text(data: Mapping[str, Any]) -> str:
    """Top-level keys in their given order; `jobs` and `profiles` one entry per line."""
    lines = ["{"]
    items = list(data.items())
    for i, (key, value) in enumerate(items):
        comma = "," if i < len(items) - 1 else ""
        k = json.dumps(key)
        if key == "jobs" and isinstance(value, list) and value:
            lines.append(f" {k}: [")
            body = [f"  {json.dumps(job, allow_nan=False)}" for job in value]
            lines.append(",\n".join(body))
            lines.append(f" ]{comma}")
        elif key == "profiles" and isinstance(value, Mapping) and value:
            lines.append(f" {k}: {{")
            body = [
                f"  {json.dumps(name)}: {json.dumps(prof, allow_nan=False)}"
                for name, prof in value.items()
            ]
            lines.append(",\n".join(body))
            lines.append(f" }}{comma}")
        else:
            lines.append(f" {k}: {json.dumps(value, allow_nan=False)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def write_workload_json(data: Mapping[str, Any], path: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(workload_json_text(data))
