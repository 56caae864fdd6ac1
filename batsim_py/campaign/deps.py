"""The campaign's libraries are an extra (`pip install 'batsim-py-sim[campaign]'`): a plain
install simulates without Dask; a campaign without them says what to install, once."""

from __future__ import annotations

import importlib
from types import ModuleType

from batsim_py.errors import UsageError

INSTALL = "pip install 'batsim-py-sim[campaign]'"


def need(module: str, why: str) -> ModuleType:
    """Import `module` or raise a UsageError saying which extra brings it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise UsageError(f"campaigns need {module} ({why}), which is not installed: "
                         f"{INSTALL}") from None
