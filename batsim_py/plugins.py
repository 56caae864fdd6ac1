"""User code named on the command line: `MODULE:NAME` or `path/to/file.py:NAME`, and the
schedulers installed packages declare in the `batsim_py.schedulers` entry-point group.

Every failure is one `UserCodeError` naming what was asked and how to fix it: a missing
module or file, a missing name, an import that raised (its exception and line).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
import traceback
from collections.abc import Callable
from typing import Any

from batsim_py.errors import UserCodeError

ENTRY_POINT_GROUP = "batsim_py.schedulers"


def is_reference(text: str) -> bool:
    """`MODULE:NAME` or `FILE.py:NAME` (not a scheduler name, not `replay:FILE`)."""
    head, sep, tail = text.rpartition(":")
    return bool(sep and head and tail and tail.isidentifier() and head != "replay")


def load_object(ref: str, what: str) -> Any:
    """The object `ref` names: `package.module:NAME` or `path/to/file.py:NAME`."""
    head, sep, name = ref.rpartition(":")
    if not sep or not head or not name.isidentifier():
        raise UserCodeError(
            f"{what} '{ref}': expected MODULE:NAME or path/to/file.py:NAME"
        )
    module = _load_module(head, ref, what)
    try:
        return getattr(module, name)
    except AttributeError:
        defined = sorted(n for n in vars(module) if not n.startswith("_"))
        raise UserCodeError(
            f"{what} '{ref}': {head} defines no '{name}' (it defines: "
            f"{', '.join(defined[:12]) or 'nothing'}{'...' if len(defined) > 12 else ''})"
        ) from None


def _load_module(head: str, ref: str, what: str) -> Any:
    is_file = head.endswith(".py") or os.sep in head or "/" in head
    try:
        if is_file:
            if not os.path.isfile(head):
                raise UserCodeError(f"{what} '{ref}': no file {head}")
            module_name = "batsim_py_user_" + os.path.splitext(os.path.basename(head))[0]
            spec = importlib.util.spec_from_file_location(module_name, head)
            if spec is None or spec.loader is None:
                raise UserCodeError(f"{what} '{ref}': {head} is not a Python file")
            module = importlib.util.module_from_spec(spec)
            sys.modules[module_name] = module
            directory = os.path.dirname(os.path.abspath(head))
            sys.path.insert(0, directory)  # its sibling modules import as in a script
            try:
                spec.loader.exec_module(module)
            finally:
                sys.path.remove(directory)
            return module
        if "" not in sys.path and os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())  # a module of the current folder, as `python -m`
        return importlib.import_module(head)
    except UserCodeError:
        raise
    except ModuleNotFoundError as exc:
        if exc.name and (head == exc.name or head.startswith(exc.name + ".")):
            raise UserCodeError(
                f"{what} '{ref}': no module named '{head}' (is it installed, or in the current "
                "folder? a file is given as path/to/file.py:NAME)"
            ) from None
        raise UserCodeError(f"{what} '{ref}': importing {head} failed: {_where(exc)}") from None
    except Exception as exc:
        raise UserCodeError(f"{what} '{ref}': importing {head} failed: {_where(exc)}") from None


def _where(exc: BaseException) -> str:
    """`Type: message (file:line)` of the innermost frame of an exception."""
    frames = traceback.extract_tb(exc.__traceback__)
    at = f" ({frames[-1].filename}:{frames[-1].lineno})" if frames else ""
    if isinstance(exc, SyntaxError) and exc.filename:
        at = f" ({exc.filename}:{exc.lineno})"
    return f"{type(exc).__name__}: {exc}{at}"


def installed_schedulers() -> dict[str, Any]:
    """Entry points of the `batsim_py.schedulers` group, by name (loaded on use)."""
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def load_entry_point(name: str, ep: Any) -> Any:
    try:
        return ep.load()
    except Exception as exc:
        raise UserCodeError(
            f"scheduler '{name}' (entry point {ep.value} of an installed package) cannot be "
            f"loaded: {_where(exc)}"
        ) from None


def check_process_function(fn: Any, ref: str) -> Callable[..., Any]:
    """A `--process` target must be callable as FUNCTION(env, sim)."""
    if not callable(fn):
        raise UserCodeError(f"process '{ref}' is a {type(fn).__name__}, not a function")
    try:
        inspect.signature(fn).bind(None, None)
    except TypeError:
        raise UserCodeError(
            f"process '{ref}' must take two arguments, (env, sim): "
            f"it is {getattr(fn, '__name__', ref)}{inspect.signature(fn)}"
        ) from None
    except ValueError:  # no signature (a builtin): let the call tell
        pass
    return fn  # type: ignore[no-any-return]


def call_user(fn: Callable[..., Any], ref: str, *args: Any) -> Any:
    """Call user code, turning its exception into one line naming it."""
    try:
        return fn(*args)
    except UserCodeError:
        raise
    except Exception as exc:
        raise UserCodeError(f"{ref} failed: {_where(exc)}") from exc
