"""A minimal element tree that remembers the line of every element.

Error messages must point at `platform.xml:12`, which xml.etree does not record; expat does.
SimGrid's own (flex) parser tolerates blank lines before the XML declaration, and Batsim's
`energy_platform_homogeneous_no_net_*.xml` start with one, so leading blanks are skipped here
(line numbers stay those of the file).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from xml.parsers import expat

from batsim_py.errors import PlatformError


@dataclass(eq=False, slots=True)
class Node:
    tag: str
    attrs: dict[str, str]
    line: int
    children: list[Node] = field(default_factory=list)
    text: str = ""

    def describe(self) -> str:
        """`<link id="l3">`: how messages name an element."""
        key = "id" if "id" in self.attrs else ("src" if "src" in self.attrs else None)
        if key is None:
            return f"<{self.tag}>"
        extra = f' dst="{self.attrs["dst"]}"' if key == "src" and "dst" in self.attrs else ""
        return f'<{self.tag} {key}="{self.attrs[key]}"{extra}>'


def parse_file(path: str, label: str) -> Node:
    """Root element of the XML file at `path`; `label` names the file in messages."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise PlatformError(f"{label}: platform file not found (check the -p path)") from None
    except OSError as e:
        raise PlatformError(f"{label}: cannot read the platform file ({e.strerror})") from None

    stripped = data.lstrip(b" \t\r\n")
    skipped_lines = data[: len(data) - len(stripped)].count(b"\n")

    parser = expat.ParserCreate()
    root: list[Node] = []
    stack: list[Node] = []

    def start(tag: str, attrs: dict[str, str]) -> None:
        node = Node(tag, attrs, parser.CurrentLineNumber + skipped_lines)
        if stack:
            stack[-1].children.append(node)
        else:
            root.append(node)
        stack.append(node)

    def end(tag: str) -> None:
        stack.pop()

    def chars(text: str) -> None:
        if stack:
            stack[-1].text += text

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    try:
        parser.Parse(stripped, True)
    except LookupError as e:  # an encoding declaration Python does not know
        raise PlatformError(f"{label}:1: invalid XML: {e} (declare encoding=\"UTF-8\")") from None
    except expat.ExpatError as e:
        line = (e.lineno or 0) + skipped_lines
        raise PlatformError(
            f"{label}:{line}: invalid XML: {expat.ErrorString(e.code)} (column {e.offset + 1}); "
            "fix the XML syntax"
        ) from None
    return root[0]
