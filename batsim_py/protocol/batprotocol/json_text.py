"""flatbuffers' strict JSON form of batprotocol messages, written and read like flatc does.

Messages are plain dicts in that JSON form: a union field `x` is two keys, `"x_type"` (the
member table's name) and `"x"` (its dict); enums are their names.

Writer: the bytes flatbuffers' own text generator (flatc 2.0.8, `strict_json`, default scalars
output) prints for the same message, which is what Batsim 5 sends through batprotocol-cpp:
- keys in schema field order, `x_type` just before `x`; absent tables, strings and vectors
  omitted; every scalar written, its default when absent, `null` for an unset `= null` one
  (e.g. `"walltime": null` for a job without walltime: flatc does so with defaults output);
- doubles in flatbuffers' `NumToString`: fixed notation with 12 decimals, trailing zeros cut
  down to one (`1e20` is `100000000000000000000.0`, `1/3` is `0.333333333333`);
- strings escaped as flatbuffers' `EscapeString` does: `\\n \\t \\r \\b \\f \\" \\\\`,
  printable ASCII as is, everything else as `\\uXXXX` (upper-case hex, surrogate pairs);
- `compact` (what Batsim sends, `indent_step = -1`): no newlines and no indentation, but
  flatbuffers still writes a space after each `:`; otherwise the 2-space pretty form flatc's
  command line writes (tests compare it with flatc itself byte for byte).

Reader: Python's JSON parser, then the message checked against the schema: a trailing NUL is
tolerated, unknown fields are refused (as Batsim's flatbuffers parser does) unless `strict`
is off (they are then dropped, and reported by `decode_message`'s `ignored` list), required
fields and types are checked, absent scalars get their schema defaults.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from batsim_py.errors import ProtocolError
from batsim_py.protocol.batprotocol.schema import INT_RANGES, SCALARS, Field, Schema, load_schema


def format_double(x: float) -> str:
    """flatbuffers' NumToString<double>: fixed, 12 decimals, trailing zeros trimmed."""
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    s = "%.12f" % x
    p = len(s.rstrip("0")) - 1
    s = s[: p + (2 if s[p] == "." else 1)]
    return "0.0" if s == "-0.0" else s


def escape_string(s: str) -> str:
    """flatbuffers' EscapeString (strict JSON, natural_utf8 off)."""
    out = ['"']
    for c in s:
        o = ord(c)
        if c == "\n":
            out.append("\\n")
        elif c == "\t":
            out.append("\\t")
        elif c == "\r":
            out.append("\\r")
        elif c == "\b":
            out.append("\\b")
        elif c == "\f":
            out.append("\\f")
        elif c == '"':
            out.append('\\"')
        elif c == "\\":
            out.append("\\\\")
        elif 0x20 <= o <= 0x7E:
            out.append(c)
        elif o <= 0xFFFF:
            out.append("\\u%04X" % o)
        else:
            base = o - 0x10000
            out.append("\\u%04X\\u%04X" % ((base >> 10) + 0xD800, (base & 0x3FF) + 0xDC00))
    out.append('"')
    return "".join(out)


class JsonWriter:
    """Writes messages of one schema; `compact` as Batsim does, else flatc's pretty form."""

    def __init__(self, schema: Schema | None = None, compact: bool = True) -> None:
        self.schema = schema or load_schema()
        self.step = -1 if compact else 2

    def message(self, msg: dict[str, Any]) -> str:
        out: list[str] = []
        self._table(self.schema.root, msg, 0, out)
        if self.step >= 0:
            out.append("\n")
        return "".join(out)

    def table(self, name: str, obj: dict[str, Any]) -> str:
        out: list[str] = []
        self._table(name, obj, 0, out)
        return "".join(out)

    def _nl(self, out: list[str], indent: int) -> None:
        if self.step >= 0:
            out.append("\n")
            out.append(" " * indent)

    def _table(self, name: str, obj: dict[str, Any], indent: int, out: list[str]) -> None:
        schema = self.schema
        table = schema.tables[name]
        step = max(self.step, 0)
        inner = indent + step
        out.append("{")
        n = 0
        for f in table.fields:
            kind = f.kind
            if kind == "union":
                member = obj.get(f.name + "_type")
                value = obj.get(f.name)
                if member is None or member == "NONE" or value is None:
                    continue
                union = schema.unions[f.type]
                if member not in union.members:
                    raise ProtocolError(f"{name}.{f.name}_type: '{member}' is not a member of "
                                        f"{f.type} ({', '.join(union.members)})")
                if n:
                    out.append(",")
                n += 1
                self._nl(out, inner)
                out.append(f'"{f.name}_type": "{member}",')
                self._nl(out, inner)
                out.append(f'"{f.name}": ')
                self._table(member, value, inner, out)
                continue
            value = obj.get(f.name)
            if value is None:
                if kind in ("scalar", "enum") and not f.vector:
                    if f.optional:  # flatc prints an unset `= null` scalar as null
                        if n:
                            out.append(",")
                        n += 1
                        self._nl(out, inner)
                        out.append(f'"{f.name}": null')
                        continue
                    value = f.default
                else:
                    continue
            if n:
                out.append(",")
            n += 1
            self._nl(out, inner)
            out.append(f'"{f.name}": ')
            if f.vector:  # flatbuffers: "[", newline, items (", " newline between), newline
                pretty = self.step >= 0
                out.append("[\n" if pretty else "[")
                pad = " " * (inner + step)
                for i, item in enumerate(value):
                    if i:
                        out.append(",\n" if pretty else ",")
                    out.append(pad)
                    self._value(f, item, inner + step, out)
                self._nl(out, inner)
                out.append("]")
            else:
                self._value(f, value, inner, out)
        self._nl(out, indent)
        out.append("}")

    def _value(self, f: Field, value: Any, indent: int, out: list[str]) -> None:
        kind = f.kind
        if kind == "string":
            out.append(escape_string(value))
        elif kind == "table":
            self._table(f.type, value, indent, out)
        elif kind == "enum":
            enum = self.schema.enums[f.type]
            if isinstance(value, str):
                out.append(f'"{value}"')
            elif value in enum.names:
                out.append(f'"{enum.names[value]}"')
            else:
                out.append(str(int(value)))
        else:
            py = SCALARS[f.type]
            if py == "float":
                out.append(format_double(float(value)))
            elif py == "bool":
                out.append("true" if value else "false")
            else:
                out.append(str(int(value)))


_DEFAULT_WRITER: JsonWriter | None = None


def encode_message(msg: dict[str, Any], nul: bool = True) -> bytes:
    """A message as Batsim 5 sends it in JSON mode: compact, UTF-8, NUL-terminated."""
    global _DEFAULT_WRITER
    if _DEFAULT_WRITER is None:
        _DEFAULT_WRITER = JsonWriter()
    text = _DEFAULT_WRITER.message(msg).encode("utf-8")
    return text + b"\0" if nul else text


def decode_message(data: bytes | str, strict: bool = True,
                   ignored: list[str] | None = None, what: str = "message") -> dict[str, Any]:
    """Parse and check a JSON message (a trailing NUL is tolerated).

    strict: unknown fields are errors (Batsim's parser); else they are dropped and their
    paths appended to `ignored`."""
    if isinstance(data, bytes):
        if data.endswith(b"\0"):
            data = data[:-1]
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ProtocolError(f"{what}: not UTF-8 ({exc})") from None
    else:
        text = data[:-1] if data.endswith("\0") else data
    try:
        obj = json.loads(text)
    except ValueError as exc:
        raise ProtocolError(f"{what}: not JSON ({exc}): {text[:200]!r}") from None
    schema = load_schema()
    return Checker(schema, strict, ignored).table(schema.root, obj, what)


class Checker:
    """Checks a parsed JSON object against the schema, filling scalar defaults."""

    def __init__(self, schema: Schema, strict: bool = True,
                 ignored: list[str] | None = None) -> None:
        self.schema = schema
        self.strict = strict
        self.ignored = ignored if ignored is not None else []

    def table(self, name: str, obj: Any, path: str) -> dict[str, Any]:
        if not isinstance(obj, dict):
            raise ProtocolError(f"{path}: expected a {name} object, got {_kind(obj)}")
        table = self.schema.tables[name]
        by_name = table.by_name
        out: dict[str, Any] = {}
        for key in obj:
            f = by_name.get(key)
            if f is None and key.endswith("_type"):
                f2 = by_name.get(key[:-5])
                if f2 is not None and f2.kind == "union":
                    continue
            if f is None:
                if self.strict:
                    known = ", ".join(_json_names(table.fields))
                    raise ProtocolError(
                        f"{path}: unknown field '{key}' in {name} (the schema defines: "
                        f"{known}); batsim-py rejects unknown fields as Batsim 5 does "
                        "(--edc-allow-unknown-fields drops them instead)")
                self.ignored.append(f"{path}.{key}")
        for f in table.fields:
            sub = f"{path}.{f.name}"
            if f.kind == "union":
                member = obj.get(f.name + "_type")
                value = obj.get(f.name)
                if member is None and value is None or member == "NONE":
                    if f.required:
                        raise ProtocolError(f"{path}: required field '{f.name}' (with "
                                            f"'{f.name}_type') is missing in {name}")
                    continue
                union = self.schema.unions[f.type]
                if isinstance(member, int) and 0 < member <= len(union.members):
                    member = union.members[member - 1]
                if member not in union.members:
                    raise ProtocolError(
                        f"{path}.{f.name}_type: {member!r} is not a member of union {f.type} "
                        f"({', '.join(union.members)})")
                if value is None:
                    raise ProtocolError(f"{sub}: missing (its '{f.name}_type' is {member})")
                out[f.name + "_type"] = member
                out[f.name] = self.table(member, value, f"{sub}({member})")
                continue
            if f.name not in obj or obj[f.name] is None:
                if f.required:
                    raise ProtocolError(f"{path}: required field '{f.name}' is missing in "
                                        f"{name}")
                if f.kind in ("scalar", "enum") and not f.vector:
                    out[f.name] = self._enum_name(f, f.default) if f.kind == "enum" else \
                        f.default
                continue
            value = obj[f.name]
            if f.vector:
                if not isinstance(value, list):
                    raise ProtocolError(f"{sub}: expected an array, got {_kind(value)}")
                out[f.name] = [self.value(f, v, f"{sub}[{i}]") for i, v in enumerate(value)]
            else:
                out[f.name] = self.value(f, value, sub)
        return out

    def _enum_name(self, f: Field, value: Any) -> Any:
        if value is None:
            return None
        return self.schema.enums[f.type].names.get(value, value)

    def value(self, f: Field, v: Any, path: str) -> Any:
        kind = f.kind
        if kind == "string":
            if not isinstance(v, str):
                raise ProtocolError(f"{path}: expected a string, got {_kind(v)}")
            return v
        if kind == "table":
            return self.table(f.type, v, path)
        if kind == "enum":
            enum = self.schema.enums[f.type]
            if isinstance(v, str) and v in enum.values:
                return v
            if isinstance(v, int) and not isinstance(v, bool) and v in enum.names:
                return enum.names[v]
            raise ProtocolError(f"{path}: {v!r} is not a {f.type} "
                                f"({', '.join(enum.values)})")
        py = SCALARS[f.type]
        if py == "bool":
            if not isinstance(v, bool):
                raise ProtocolError(f"{path}: expected true or false, got {_kind(v)}")
            return v
        if py == "int":
            if isinstance(v, bool) or not isinstance(v, int):
                raise ProtocolError(f"{path}: expected an integer ({f.type}), got {v!r}")
            lo, hi = INT_RANGES[f.type]
            if not lo <= v <= hi:
                raise ProtocolError(f"{path}: {v} is out of the range of {f.type}")
            return v
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ProtocolError(f"{path}: expected a number, got {_kind(v)}")
        return float(v)


def _json_names(fields: list[Field]) -> list[str]:
    names = []
    for f in fields:
        if f.kind == "union":
            names.append(f.name + "_type")
        names.append(f.name)
    return names


def _kind(v: Any) -> str:
    if isinstance(v, dict):
        return "an object"
    if isinstance(v, list):
        return "an array"
    if isinstance(v, str):
        return f"the string {v[:40]!r}"
    return repr(v)


Encoder = Callable[[dict[str, Any]], bytes]
