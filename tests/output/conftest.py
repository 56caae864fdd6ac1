"""Fixtures of the output writers' tests."""

from __future__ import annotations

import pytest

from batsim_py.output.fixed import native_text


@pytest.fixture
def native(monkeypatch):  # noqa: ANN201
    """The native writer (its tests skip, saying why, where it was not built)."""
    monkeypatch.delenv("BATSIM_PY_PURE", raising=False)  # (conftest sets it for a pure kernel)
    module = native_text()
    if module is None:
        pytest.skip("the native writer (batsim_py/output/_ctext.c) is not built: "
                    "python setup.py build_ext --inplace")
    return module
