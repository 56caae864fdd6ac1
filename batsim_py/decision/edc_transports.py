"""Where an EDC runs: a ZeroMQ process, a C-ABI shared library, or a Python module.

All three carry the same bytes (seed-systems §2.3-2.4, §2.12):
- init: the init data in, `(flags, hello message)` out; flags bit 0x1 = binary, 0x2 = JSON
  (JSON wins), 0 = binary;
- then one serialised message in, one out, until the reply to `SimulationEndsEvent`.

`ProcessEdc`: Batsim connects a REQ socket to the EDC's REP socket; the init request is
`u32 N` (native endian) + N bytes, the init reply `u32 flags` + the hello message; then one
frame each way. The connection is watched like the Batsim 4 peer's (decision/zmq_peer.py:
connect timeout, reply timeout, a vanished EDC found at once).

`LibraryEdc`: `batsim_edc_init`, `batsim_edc_take_decisions`, `batsim_edc_deinit` called
through ctypes; the EDC owns its output buffers, so replies are copied at once. Loaded with
dlopen(RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND) as Batsim does, or in a new link namespace with
dlmopen (`--edc-library-load-method dlmopen`), through libc's own dlmopen/dlsym.

`PythonEdc`: a Python module with the same three functions, called in-process, no socket:
`batsim_edc_init(init_data: bytes) -> (flags, hello)`, `batsim_edc_take_decisions(message:
bytes) -> bytes` and `batsim_edc_deinit()`. Each run loads the module afresh, so module-level
state starts clean. With the flag 0x4 (batsim-py's extension) the messages are the dicts of
the JSON form, not serialised at all.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import struct
import sys
import uuid
from typing import Any

import zmq

from batsim_py.decision.zmq_peer import ZmqPeer
from batsim_py.errors import ProtocolError, SchedulerError, UsageError, UserCodeError


class ProcessEdc(ZmqPeer):
    """An EDC process bound to a ZeroMQ REP socket at `endpoint`."""

    def __init__(self, endpoint: str, timeout: float | None = None,
                 connect_timeout: float | None = None, command: str | None = None) -> None:
        super().__init__(endpoint, timeout, connect_timeout, command)
        self.description = f"process EDC at '{endpoint}'"

    def init(self, init_data: bytes) -> tuple[int, bytes]:
        raw = self._request(struct.pack("=I", len(init_data)) + init_data, "the init request",
                            False)
        if len(raw) < 4:
            raise ProtocolError(f"the EDC at '{self.endpoint}' answered the init request with "
                                f"{len(raw)} bytes: expected u32 flags then its hello message")
        (flags,) = struct.unpack("=I", raw[:4])
        return flags, raw[4:]

    def take_decisions(self, data: bytes, ending: bool) -> bytes:
        n = self.nb_exchanges
        what = f"message {n}{' (SimulationEndsEvent)' if ending else ''}"
        return self._request(data, what, ending)

    def _request(self, payload: bytes, what: str, ending: bool) -> bytes:
        try:
            self._read_monitor()
            if self._gone:
                self._fail(f"went away (connection lost) before {what}", ending)
            self._socket.send(payload)
            self._wait_reply(what, ending)
            raw = self._socket.recv()
        except zmq.ZMQError as exc:
            raise SchedulerError(
                f"connection to the EDC at '{self.endpoint}' broke: {exc}") from None
        except SchedulerError as exc:  # the Batsim 4 peer's words, for an EDC
            raise SchedulerError(_edc_words(str(exc))) from None
        self.nb_exchanges += 1
        if ending:
            self._ended = True
        return raw


def _edc_words(message: str) -> str:
    return (message.replace("check -s", "check --edc-socket-str")
            .replace("the scheduler", "the EDC").replace("a scheduler", "an EDC")
            .replace("no scheduler", "no EDC"))


_InitFn = ctypes.CFUNCTYPE(ctypes.c_uint8, ctypes.POINTER(ctypes.c_uint8), ctypes.c_uint32,
                           ctypes.POINTER(ctypes.c_uint32),
                           ctypes.POINTER(ctypes.POINTER(ctypes.c_uint8)),
                           ctypes.POINTER(ctypes.c_uint32))
_TakeFn = ctypes.CFUNCTYPE(ctypes.c_uint8, ctypes.POINTER(ctypes.c_uint8), ctypes.c_uint32,
                           ctypes.POINTER(ctypes.POINTER(ctypes.c_uint8)),
                           ctypes.POINTER(ctypes.c_uint32))
_DeinitFn = ctypes.CFUNCTYPE(ctypes.c_uint8)
_SYMBOLS = ("batsim_edc_init", "batsim_edc_take_decisions", "batsim_edc_deinit")


class LibraryEdc:
    """An EDC shared library called through its C ABI (seed-systems §2.4)."""

    def __init__(self, path: str, load_method: str = "dlopen") -> None:
        self.path = path
        self.description = f"library EDC '{path}'"
        self._initialised = False
        self._closed = False
        if not os.path.exists(path):
            raise UsageError(f"EDC library '{path}': no such file")
        if load_method == "dlopen":
            mode = os.RTLD_NOW | os.RTLD_LOCAL | getattr(os, "RTLD_DEEPBIND", 0)
            try:
                lib = ctypes.CDLL(os.path.abspath(path), mode=mode)
            except OSError as exc:
                raise UsageError(f"EDC library '{path}' cannot be loaded: {exc}") from None
            addresses = {}
            for name in _SYMBOLS:
                try:
                    addresses[name] = ctypes.cast(getattr(lib, name), ctypes.c_void_p).value
                except AttributeError:
                    raise UsageError(_missing(path, name)) from None
            self._lib = lib
        elif load_method == "dlmopen":
            addresses = _dlmopen(path)
        else:
            raise UsageError(f"--edc-library-load-method must be dlopen or dlmopen, not "
                             f"'{load_method}'")
        self._init = _InitFn(addresses["batsim_edc_init"])
        self._take = _TakeFn(addresses["batsim_edc_take_decisions"])
        self._deinit = _DeinitFn(addresses["batsim_edc_deinit"])

    def init(self, init_data: bytes) -> tuple[int, bytes]:
        buf = (ctypes.c_uint8 * max(1, len(init_data))).from_buffer_copy(
            init_data or b"\0")
        flags = ctypes.c_uint32(0)
        out = ctypes.POINTER(ctypes.c_uint8)()
        size = ctypes.c_uint32(0)
        code = self._init(buf, len(init_data), ctypes.byref(flags), ctypes.byref(out),
                          ctypes.byref(size))
        self._initialised = True
        if code != 0:
            raise SchedulerError(f"{self.description}: batsim_edc_init returned {code} "
                                 "(nonzero: the EDC refused to start; check its init data)")
        return flags.value, ctypes.string_at(out, size.value) if size.value else b""

    def take_decisions(self, data: bytes, ending: bool) -> bytes:
        buf = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
        out = ctypes.POINTER(ctypes.c_uint8)()
        size = ctypes.c_uint32(0)
        code = self._take(buf, len(data), ctypes.byref(out), ctypes.byref(size))
        if code != 0:
            raise SchedulerError(f"{self.description}: batsim_edc_take_decisions returned "
                                 f"{code} (nonzero: the EDC failed)")
        return ctypes.string_at(out, size.value) if size.value else b""

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._initialised:
            code = self._deinit()
            if code != 0:
                raise SchedulerError(f"{self.description}: batsim_edc_deinit returned {code}")


def _missing(path: str, name: str) -> str:
    return (f"EDC library '{path}' does not export '{name}' (an EDC exports batsim_edc_init, "
            "batsim_edc_take_decisions and batsim_edc_deinit, unmangled: extern \"C\")")


def _dlmopen(path: str) -> dict[str, int]:
    """Load `path` in a new link namespace (glibc's dlmopen) and find the three symbols."""
    libc = ctypes.CDLL(None)
    try:
        dlmopen = libc.dlmopen
    except AttributeError:
        raise UsageError("--edc-library-load-method dlmopen needs glibc's dlmopen, absent "
                         "here; use dlopen") from None
    dlmopen.restype = ctypes.c_void_p
    dlmopen.argtypes = [ctypes.c_long, ctypes.c_char_p, ctypes.c_int]
    libc.dlsym.restype = ctypes.c_void_p
    libc.dlsym.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    libc.dlerror.restype = ctypes.c_char_p
    lm_id_newlm = -1
    handle = dlmopen(lm_id_newlm, os.path.abspath(path).encode(), os.RTLD_NOW)
    if not handle:
        raise UsageError(f"EDC library '{path}' cannot be loaded with dlmopen: "
                         f"{(libc.dlerror() or b'').decode(errors='replace')}")
    out = {}
    for name in _SYMBOLS:
        address = libc.dlsym(handle, name.encode())
        if not address:
            raise UsageError(_missing(path, name))
        out[name] = address
    return out


class PythonEdc:
    """A Python module exposing the C ABI's three functions, called in-process."""

    def __init__(self, ref: str) -> None:
        self.ref = ref
        self.description = f"Python EDC '{ref}'"
        self.module = load_edc_module(ref)
        self._initialised = False
        self._closed = False
        self.accepts_objects = True  # it may ask for Python objects (flag 0x4)
        self.objects = False  # set by the peer when it did

    def init(self, init_data: bytes) -> tuple[int, bytes]:
        result = _call(self, "batsim_edc_init", init_data)
        self._initialised = True
        if not (isinstance(result, tuple) and len(result) == 2):
            raise UserCodeError(f"{self.description}: batsim_edc_init must return (flags, "
                                f"hello message), not {type(result).__name__}")
        flags, hello = result
        if isinstance(hello, dict):  # Python objects: the peer checks them
            return int(flags), hello  # type: ignore[return-value]
        return int(flags), _as_bytes(self, hello)

    def take_decisions(self, data: Any, ending: bool) -> Any:
        reply = _call(self, "batsim_edc_take_decisions", data)
        return reply if self.objects else _as_bytes(self, reply)

    def close(self) -> None:
        if self._initialised and not self._closed:
            self._closed = True
            _call(self, "batsim_edc_deinit")


def _call(edc: PythonEdc, name: str, *args: Any) -> Any:
    try:
        return getattr(edc.module, name)(*args)
    except (SchedulerError, ProtocolError):
        raise
    except Exception as exc:
        import traceback

        frames = traceback.extract_tb(exc.__traceback__)
        at = f" ({frames[-1].filename}:{frames[-1].lineno})" if frames else ""
        raise SchedulerError(f"{edc.description}: {name} failed: {type(exc).__name__}: "
                             f"{exc}{at}") from exc


def _as_bytes(edc: PythonEdc, value: Any) -> bytes:
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise UserCodeError(f"{edc.description}: a message must be bytes or str, not "
                        f"{type(value).__name__}")


def load_edc_module(ref: str) -> Any:
    """A fresh instance of the module `ref` names (`package.module` or `path/to/file.py`)."""
    if ref.endswith(".py") or "/" in ref or os.sep in ref:
        if not os.path.isfile(ref):
            raise UsageError(f"Python EDC '{ref}': no such file")
        spec = importlib.util.spec_from_file_location(
            "batsim_py_edc_" + uuid.uuid4().hex, ref)
    else:
        try:
            spec = importlib.util.find_spec(ref)
        except (ImportError, ValueError) as exc:
            raise UsageError(f"Python EDC '{ref}': {exc}") from None
    if spec is None or spec.loader is None:
        raise UsageError(f"Python EDC '{ref}': no such module (give a module name such as "
                         "batsim_py.edcs.fcfs or a path to a .py file)")
    module = importlib.util.module_from_spec(spec)
    directory = os.path.dirname(os.path.abspath(spec.origin or "."))
    added = directory not in sys.path
    if added:
        sys.path.insert(0, directory)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise UserCodeError(f"Python EDC '{ref}' failed to load: {type(exc).__name__}: "
                            f"{exc}") from exc
    finally:
        if added:
            sys.path.remove(directory)
    for name in _SYMBOLS:
        if not callable(getattr(module, name, None)):
            raise UserCodeError(f"Python EDC '{ref}' does not define {name}() (an EDC module "
                                "defines batsim_edc_init, batsim_edc_take_decisions and "
                                "batsim_edc_deinit)")
    return module
