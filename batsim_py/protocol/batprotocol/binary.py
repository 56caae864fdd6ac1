"""Binary flatbuffers batprotocol messages, through the classes flatc generated (generated/).

Messages are the same dicts as in the JSON form (json_text.py): a union field `x` is
`x_type` (member name) and `x` (dict), enums are names. The codec walks the schema model
(schema.py) and calls the generated accessors and builder functions by name (flatc's names:
`job_id` -> `JobId()`, `JobSubmittedEventAddJobId(builder, ...)`), so every table of the
schema is covered without code per table.

Decoding checks what a binary buffer can get wrong: required fields missing, union types out
of range, a buffer too short; absent scalars read as their defaults (None for `= null`).
"""

from __future__ import annotations

import importlib
import struct
import sys
from typing import Any

import flatbuffers

from batsim_py.errors import ProtocolError
from batsim_py.protocol.batprotocol.schema import SCALARS, Field, Schema, load_schema

_PACKAGE = "batsim_py.protocol.batprotocol.generated.batprotocol"


def _generated() -> Any:
    """The generated package, also reachable as `batprotocol` (the classes' own imports)."""
    pkg = importlib.import_module(_PACKAGE)
    fb = importlib.import_module(_PACKAGE + ".fb")
    sys.modules.setdefault("batprotocol", pkg)
    sys.modules.setdefault("batprotocol.fb", fb)
    return fb


def _camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


_PREPEND = {"bool": "Bool", "byte": "Int8", "ubyte": "Uint8", "int8": "Int8", "uint8": "Uint8",
            "short": "Int16", "ushort": "Uint16", "int16": "Int16", "uint16": "Uint16",
            "int": "Int32", "uint": "Uint32", "int32": "Int32", "uint32": "Uint32",
            "long": "Int64", "ulong": "Uint64", "int64": "Int64", "uint64": "Uint64",
            "float": "Float32", "double": "Float64", "float32": "Float32",
            "float64": "Float64"}


class BinaryCodec:
    """Encode/decode `Message` dicts as binary flatbuffers."""

    def __init__(self, schema: Schema | None = None) -> None:
        self.schema = schema or load_schema()
        self.fb = _generated()
        self._modules: dict[str, Any] = {}
        self._classes: dict[str, Any] = {}
        self._field_names: dict[str, list[tuple[Field, str]]] = {}
        self._builders: dict[str, Any] = {}

    def _module(self, table: str) -> Any:
        module = self._modules.get(table)
        if module is None:
            module = importlib.import_module(f"{_PACKAGE}.fb.{table}")
            self._modules[table] = module
            self._classes[table] = getattr(module, table)
        return module

    # ------------------------------------------------------------------ decode
    def decode(self, data: bytes, what: str = "message") -> dict[str, Any]:
        data = bytes(data)
        if len(data) < 8:
            raise ProtocolError(f"{what}: {len(data)} bytes is no flatbuffers message")
        root = self.schema.root
        self._module(root)
        try:
            obj = self._classes[root].GetRootAs(data, 0)
            return self._table(root, obj, what)
        except (struct.error, IndexError, UnicodeDecodeError) as exc:
            raise ProtocolError(f"{what}: not a valid batprotocol flatbuffer ({exc})") from None

    def _fields(self, name: str) -> list[tuple[Field, str]]:
        plan = self._field_names.get(name)
        if plan is None:
            plan = [(f, _camel(f.name)) for f in self.schema.tables[name].fields]
            self._field_names[name] = plan
        return plan

    def _table(self, name: str, obj: Any, path: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f, camel in self._fields(name):
            sub = path + "." + f.name
            if f.kind == "union":
                member_index = getattr(obj, camel + "Type")()
                union = self.schema.unions[f.type]
                if member_index == 0:
                    if f.required:
                        raise ProtocolError(f"{path}: required field '{f.name}' is missing in "
                                            f"{name}")
                    continue
                if not 0 < member_index <= len(union.members):
                    raise ProtocolError(f"{sub}_type: {member_index} is not a member of "
                                        f"{f.type}")
                member = union.members[member_index - 1]
                tab = getattr(obj, camel)()
                if tab is None:
                    raise ProtocolError(f"{sub}: missing (its type is {member})")
                self._module(member)
                child = self._classes[member]()
                child.Init(tab.Bytes, tab.Pos)
                out[f.name + "_type"] = member
                out[f.name] = self._table(member, child, f"{sub}({member})")
                continue
            if f.vector:
                if getattr(obj, camel + "IsNone")():
                    if f.required:
                        raise ProtocolError(f"{path}: required field '{f.name}' is missing in "
                                            f"{name}")
                    continue
                n = getattr(obj, camel + "Length")()
                get = getattr(obj, camel)
                out[f.name] = [self._value(f, get(i), f"{sub}[{i}]") for i in range(n)]
                continue
            value = getattr(obj, camel)()
            if value is None:
                if f.required:
                    raise ProtocolError(f"{path}: required field '{f.name}' is missing in "
                                        f"{name}")
                if f.kind in ("scalar", "enum"):
                    out[f.name] = None
                continue
            out[f.name] = self._value(f, value, sub)
        return out

    def _value(self, f: Field, value: Any, path: str) -> Any:
        if f.kind == "string":
            return value.decode("utf-8") if isinstance(value, bytes) else value
        if f.kind == "table":
            self._module(f.type)
            return self._table(f.type, value, path)
        if f.kind == "enum":
            names = self.schema.enums[f.type].names
            if value not in names:
                raise ProtocolError(f"{path}: {value} is not a {f.type}")
            return names[value]
        py = SCALARS[f.type]
        if py == "bool":
            return bool(value)
        if py == "float":
            return float(value)
        return int(value)

    # ------------------------------------------------------------------ encode
    def encode(self, msg: dict[str, Any]) -> bytes:
        builder = flatbuffers.Builder(1024)
        root = self._build(builder, self.schema.root, msg)
        builder.Finish(root)
        return bytes(builder.Output())

    def _builder_plan(self, name: str) -> Any:
        """(start, end, [(field, add, add_type, start_vector)]) of a table, resolved once."""
        plan = self._builders.get(name)
        if plan is None:
            module = self._module(name)
            fields = []
            for f in self.schema.tables[name].fields:
                camel = _camel(f.name)
                fields.append((
                    f, getattr(module, f"{name}Add{camel}"),
                    getattr(module, f"{name}Add{camel}Type", None),
                    getattr(module, f"{name}Start{camel}Vector", None) if f.vector else None))
            plan = (getattr(module, f"{name}Start"), getattr(module, f"{name}End"), fields)
            self._builders[name] = plan
        return plan

    def _build(self, b: flatbuffers.Builder, name: str, obj: dict[str, Any]) -> int:
        start, end, fields = self._builder_plan(name)
        offsets: dict[str, int] = {}
        # Children first: strings, vectors and tables cannot be built inside a table.
        for f, _, _, start_vector in fields:
            value = obj.get(f.name)
            if value is None:
                continue
            kind = f.kind
            if kind == "union":
                member = obj.get(f.name + "_type")
                if member is None or member == "NONE":
                    continue
                offsets[f.name] = self._build(b, member, value)
            elif start_vector is not None:
                offsets[f.name] = self._vector(b, start_vector, f, value)
            elif kind == "string":
                offsets[f.name] = b.CreateString(value)
            elif kind == "table":
                offsets[f.name] = self._build(b, f.type, value)
        start(b)
        for f, add, add_type, _ in fields:
            if f.kind == "union":
                if f.name in offsets:
                    union = self.schema.unions[f.type]
                    add_type(b, union.members.index(obj[f.name + "_type"]) + 1)
                    add(b, offsets[f.name])
            elif f.name in offsets:
                add(b, offsets[f.name])
            elif f.kind in ("scalar", "enum") and not f.vector:
                value = obj.get(f.name)
                if value is None:
                    continue  # absent: its default (or null)
                if f.kind == "enum" and isinstance(value, str):
                    value = self.schema.enums[f.type].values[value]
                add(b, value)
        return end(b)

    def _vector(self, b: flatbuffers.Builder, start_vector: Any, f: Field,
                values: list[Any]) -> int:
        if f.kind == "string":
            items = [b.CreateString(v) for v in values]
        elif f.kind == "table":
            items = [self._build(b, f.type, v) for v in values]
        else:
            items = list(values)
        start_vector(b, len(items))
        if f.kind in ("string", "table"):
            for item in reversed(items):
                b.PrependUOffsetTRelative(item)
        else:
            kind = self.schema.enums[f.type].underlying if f.kind == "enum" else f.type
            prepend = getattr(b, "Prepend" + _PREPEND[kind])
            for item in reversed(items):
                prepend(item)
        return b.EndVector()


