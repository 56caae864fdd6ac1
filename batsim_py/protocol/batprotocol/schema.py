"""The batprotocol schema (seed 002, `batprotocol.fbs`) read into a small model.

Why a model of our own: flatbuffers' JSON form is defined by the schema (key order = field
order, a union field `x` is written `x_type` then `x`, scalars with their defaults, enums by
name), and the reader must reject what the schema does not define. The generated classes
(`generated/`) carry none of that in a usable form, so the JSON writer and reader walk this
model, built once from the very schema file flatc compiles.

Only the subset of the flatbuffers IDL the seed uses is read: `namespace`, `table`, `enum
NAME : byte`, `union`, `root_type`, comments, field defaults (`= value`, `= null`) and the
`(required)` attribute. Anything else is an error naming the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

SCHEMA_PATH = Path(__file__).with_name("batprotocol.fbs")

SCALARS = {
    "bool": "bool", "byte": "int", "ubyte": "int", "int8": "int", "uint8": "int",
    "short": "int", "ushort": "int", "int16": "int", "uint16": "int",
    "int": "int", "uint": "int", "int32": "int", "uint32": "int",
    "long": "int", "ulong": "int", "int64": "int", "uint64": "int",
    "float": "float", "double": "float", "float32": "float", "float64": "float",
}
INT_RANGES = {
    "byte": (-2**7, 2**7 - 1), "int8": (-2**7, 2**7 - 1), "ubyte": (0, 2**8 - 1),
    "uint8": (0, 2**8 - 1), "short": (-2**15, 2**15 - 1), "int16": (-2**15, 2**15 - 1),
    "ushort": (0, 2**16 - 1), "uint16": (0, 2**16 - 1), "int": (-2**31, 2**31 - 1),
    "int32": (-2**31, 2**31 - 1), "uint": (0, 2**32 - 1), "uint32": (0, 2**32 - 1),
    "long": (-2**63, 2**63 - 1), "int64": (-2**63, 2**63 - 1), "ulong": (0, 2**64 - 1),
    "uint64": (0, 2**64 - 1),
}


@dataclass(slots=True)
class Field:
    name: str
    type: str  # scalar name, "string", a table, enum or union name
    vector: bool = False
    default: object = None  # scalars: their default (None for `= null`: optional)
    optional: bool = False  # `= null`: absent unless set
    required: bool = False
    kind: str = ""  # "scalar", "enum", "string", "table", "union" (set once all is read)
    id: int = 0  # vtable slot; a union field takes two (its `_type` first)


@dataclass(slots=True)
class Table:
    name: str
    fields: list[Field] = field(default_factory=list)
    by_name: dict[str, Field] = field(default_factory=dict)


@dataclass(slots=True)
class Enum:
    name: str
    underlying: str
    values: dict[str, int] = field(default_factory=dict)
    names: dict[int, str] = field(default_factory=dict)


@dataclass(slots=True)
class Union:
    name: str
    members: list[str] = field(default_factory=list)  # type index i + 1 (0 is NONE)


@dataclass(slots=True)
class Schema:
    namespace: str
    tables: dict[str, Table]
    enums: dict[str, Enum]
    unions: dict[str, Union]
    root: str


_TOKEN = re.compile(r'\s*(?:(//[^\n]*)|([A-Za-z_][A-Za-z0-9_.]*)|(-?[0-9][0-9.eE+-]*)|(\S))',
                    re.S)


def _tokens(text: str) -> list[tuple[str, int]]:
    """(token, offset) pairs; comments dropped."""
    out = []
    for m in _TOKEN.finditer(text):
        comment, word, number, punct = m.groups()
        tok = word if word is not None else number if number is not None else punct
        if tok is not None and comment is None:
            out.append((tok, m.start(m.lastindex or 0)))
    return out


def parse_schema(text: str, where: str = "batprotocol.fbs") -> Schema:
    toks = _tokens(text)
    i = 0

    def fail(msg: str) -> None:
        line = text.count("\n", 0, toks[min(i, len(toks) - 1)][1]) + 1 if toks else 0
        raise ValueError(f"{where}:{line}: {msg}")

    def take(expected: str | None = None) -> str:
        nonlocal i
        if i >= len(toks):
            fail("unexpected end of the schema")
        tok = toks[i][0]
        if expected is not None and tok != expected:
            fail(f"expected '{expected}', found '{tok}'")
        i += 1
        return tok

    namespace = ""
    root = ""
    tables: dict[str, Table] = {}
    enums: dict[str, Enum] = {}
    unions: dict[str, Union] = {}
    while i < len(toks):
        kw = take()
        if kw == "namespace":
            namespace = take()
            take(";")
        elif kw == "root_type":
            root = take()
            take(";")
        elif kw == "table":
            t = Table(take())
            take("{")
            slot = 0
            while toks[i][0] != "}":
                f = Field(take(), "")
                take(":")
                if toks[i][0] == "[":
                    take("[")
                    f.type = take()
                    f.vector = True
                    take("]")
                else:
                    f.type = take()
                if toks[i][0] == "=":
                    take("=")
                    value = take()
                    if value == "null":
                        f.optional = True
                    else:
                        f.default = value
                if toks[i][0] == "(":
                    take("(")
                    while toks[i][0] != ")":
                        attr = take()
                        if attr == "required":
                            f.required = True
                        elif attr != ",":
                            fail(f"attribute '{attr}' is not read by batsim-py")
                    take(")")
                take(";")
                f.id = slot
                t.fields.append(f)
                t.by_name[f.name] = f
                slot += 1
            take("}")
            tables[t.name] = t
        elif kw == "enum":
            e = Enum(take(), "")
            take(":")
            e.underlying = take()
            take("{")
            value = 0
            while toks[i][0] != "}":
                name = take()
                if toks[i][0] == "=":
                    take("=")
                    value = int(take())
                e.values[name] = value
                e.names[value] = name
                value += 1
                if toks[i][0] == ",":
                    take(",")
            take("}")
            enums[e.name] = e
        elif kw == "union":
            u = Union(take())
            take("{")
            while toks[i][0] != "}":
                name = take()
                if name != ",":
                    u.members.append(name)
            take("}")
            unions[u.name] = u
        else:
            fail(f"unexpected '{kw}'")
    # Resolve kinds, defaults, and the slots a union's hidden `_type` field takes.
    for t in tables.values():
        slot = 0
        for f in t.fields:
            if f.type in unions:
                f.kind = "union"
                slot += 1  # the hidden NAME_type field comes first
            elif f.type in enums:
                f.kind = "enum"
                e = enums[f.type]
                if f.default is None and not f.optional:
                    f.default = min(e.names)
                elif isinstance(f.default, str):
                    f.default = e.values[f.default] if f.default in e.values else int(f.default)
            elif f.type in SCALARS:
                f.kind = "scalar"
                py = SCALARS[f.type]
                if f.optional:
                    f.default = None
                elif py == "bool":
                    f.default = f.default in ("true", "1")
                elif py == "int":
                    f.default = int(f.default) if f.default is not None else 0
                else:
                    f.default = float(f.default) if f.default is not None else 0.0
            elif f.type == "string":
                f.kind = "string"
            elif f.type in tables:
                f.kind = "table"
            else:
                raise ValueError(f"{where}: table {t.name}: field {f.name} has an unknown type "
                                 f"'{f.type}'")
            f.id = slot
            slot += 1
    return Schema(namespace, tables, enums, unions, root)


@lru_cache(maxsize=1)
def load_schema() -> Schema:
    """The seed schema shipped with batsim-py (read once)."""
    return parse_schema(SCHEMA_PATH.read_text(encoding="utf-8"))
