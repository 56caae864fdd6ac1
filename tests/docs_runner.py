"""Runs the code blocks of a Markdown page the way a reader would (used by tests/test_docs.py).

Why a runner of its own: the user's guide promises commands that work when typed; the only
way to keep that promise as the code moves is to execute every block, in order, against the
tree under test. The convention (shared with every docs writer, see HELPER rules / docs):

- Fenced blocks tagged ```sh or ```python are run; ```text, ```console, ```json, ```xml ...
  (outputs, sketches, file contents) are not. Tags that look runnable but are not the two
  agreed ones (bash, shell, py, ...) are refused so that a block never escapes by accident.
- A block right after the line ``<!-- docs-test: skip REASON -->`` is not run (REASON is
  required: e.g. the README's install commands, which cannot run inside a test).
- A block right after ``<!-- docs-test: excerpt PATH -->`` is not run but must appear verbatim
  in the project's file PATH (so code quoted from an example cannot drift from it).
- A ```text block right after ``<!-- docs-test: output -->`` is the expected output of the
  runnable block just before it (sh: stdout and stderr together; python: stdout), compared
  line by line after trailing spaces are dropped; ``…`` in a line stands for any text, a line
  that is only ``…`` for any number of lines.
- The blocks of one page run in order in one fresh temporary directory in which
  ``platforms``, ``workloads`` and ``examples`` are symlinks to the project's folders, and
  ``batsim-py`` on PATH runs ``python -m batsim_py.cli`` of the tree under test.
- ```sh blocks run with ``bash -e`` (the first failing command fails the block).
- ```python blocks of a page share one interpreter and one namespace (a tutorial may define
  something in one block and use it in the next); the tree under test is importable.
- A failing block (non-zero exit, exception, or more than ``timeout`` seconds) fails the page
  with ``page:line`` of the block's opening fence, the block, and the tail of its output.
"""

from __future__ import annotations

import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

RUN_TAGS = {"sh", "python"}
# Tags that a writer may use by mistake for something meant to run: refused, not skipped.
LOOKS_RUNNABLE = {"bash", "shell", "zsh", "py", "python3", "pycon", "ipython"}
SKIP_MARK = re.compile(r"<!--\s*docs-test:\s*skip\b(?P<reason>[^>]*)-->")
OUTPUT_MARK = re.compile(r"<!--\s*docs-test:\s*output\s*-->")
EXCERPT_MARK = re.compile(r"<!--\s*docs-test:\s*excerpt\s+(?P<path>\S+)\s*-->")
FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
LINKED_FOLDERS = ("platforms", "workloads", "examples")


class DocsFormatError(Exception):
    """A page breaks the docs convention (bad tag, unclosed fence, skip without a reason)."""


@dataclass(frozen=True)
class Block:
    page: str  # the page's path as shown in messages (relative to the project)
    line: int  # 1-based line of the opening fence
    lang: str  # first word of the info string, lower-case ("" when untagged)
    code: str
    skip_reason: str | None  # set when the block is marked not to run
    excerpt_of: str | None = None  # project file the block is quoted from (not run)
    is_output: bool = False  # the expected output of the previous runnable block

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def runs(self) -> bool:
        return self.lang in RUN_TAGS and self.skip_reason is None and self.excerpt_of is None


def parse_blocks(text: str, page: str) -> list[Block]:
    """Every fenced block of a Markdown text, with the line of its opening fence."""
    blocks: list[Block] = []
    lines = text.splitlines()
    i = 0
    pending_skip: str | None = None
    pending_excerpt: str | None = None
    pending_output = False
    while i < len(lines):
        line = lines[i]
        if OUTPUT_MARK.search(line):
            pending_output = True
            i += 1
            continue
        excerpt = EXCERPT_MARK.search(line)
        if excerpt:
            pending_excerpt = excerpt.group("path")
            i += 1
            continue
        mark = SKIP_MARK.search(line)
        if mark:
            reason = mark.group("reason").strip(" :-")
            if not reason:
                raise DocsFormatError(f"{page}:{i + 1}: docs-test skip mark without a reason")
            pending_skip = reason
            i += 1
            continue
        m = FENCE.match(line)
        if not m:
            if line.strip():
                # a mark applies to the next block only
                pending_skip = pending_excerpt = None
                pending_output = False
            i += 1
            continue
        fence = m.group("fence")
        lang = (m.group("info").strip().split() or [""])[0].lower()
        if lang in LOOKS_RUNNABLE:
            raise DocsFormatError(
                f"{page}:{i + 1}: code block tagged '{lang}': tag it 'sh' or 'python' to have "
                "it run by tests/test_docs.py, or 'text'/'console' if it must not run"
            )
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines):
            close = lines[i].strip()
            if close.startswith(fence[0] * len(fence)) and not close.strip(fence[0]):
                break
            body.append(lines[i])
            i += 1
        else:
            raise DocsFormatError(f"{page}:{start + 1}: code block is never closed")
        indent = len(m.group("indent"))
        code = "\n".join(b[indent:] if b[:indent].isspace() else b for b in body) + "\n"
        if pending_output and lang in RUN_TAGS:
            raise DocsFormatError(f"{page}:{start + 1}: an expected output must be tagged "
                                  f"'text', not '{lang}'")
        blocks.append(Block(page, start + 1, lang, code, pending_skip, pending_excerpt,
                            pending_output))
        pending_skip = pending_excerpt = None
        pending_output = False
        i += 1
    return blocks


@dataclass
class BlockFailure(Exception):
    block: Block
    detail: str

    def __str__(self) -> str:
        shown = "\n".join("    " + ln for ln in self.block.code.rstrip().splitlines())
        return (
            f"{self.block.where}: ```{self.block.lang} block failed: {self.detail}\n"
            f"  block:\n{shown}"
        )


# The Python worker: execs each block in one namespace, reports "ok"/"fail" on a pipe.
_WORKER = r"""
import os, sys, traceback
status = os.fdopen(int(os.environ.pop("DOCS_STATUS_FD")), "w", buffering=1)
namespace = {"__name__": "__main__"}
for request in sys.stdin:
    path, where = request.rstrip("\n").split("\t", 1)
    with open(path, encoding="utf-8") as f:
        source = f.read()
    print(f"----- {where}", flush=True)
    print(f"----- {where}", file=sys.stderr, flush=True)
    try:
        exec(compile(source, where, "exec"), namespace)
    except SystemExit as e:
        sys.stdout.flush(); sys.stderr.flush()
        status.write("ok\n" if e.code in (None, 0) else f"fail SystemExit({e.code!r})\n")
        continue
    except BaseException:
        traceback.print_exc()
        sys.stdout.flush(); sys.stderr.flush()
        status.write("fail exception (traceback above)\n")
        continue
    sys.stdout.flush(); sys.stderr.flush()
    status.write("ok\n")
"""


def _tail(path: Path, since: int, limit: int = 3000) -> str:
    data = path.read_bytes()[since:].decode("utf-8", "replace")
    return data if len(data) <= limit else "...\n" + data[-limit:]


class PageRunner:
    """One page's sandbox: a temp dir, the shims, and a lazily started Python worker."""

    def __init__(self, project: Path, timeout: float = 120.0) -> None:
        project = project.resolve()  # the symlinks and PYTHONPATH must not depend on the cwd
        self.project = project
        self.timeout = timeout
        self.root = Path(tempfile.mkdtemp(prefix="batsim-py-docs-"))
        self.cwd = self.root / "work"
        self.cwd.mkdir()
        self.ctl = self.root / "ctl"
        self.ctl.mkdir()
        for name in LINKED_FOLDERS:
            if (project / name).is_dir():
                (self.cwd / name).symlink_to(project / name, target_is_directory=True)
        bindir = self.root / "bin"
        bindir.mkdir()
        shims = {"batsim-py": f'exec "{sys.executable}" -m batsim_py.cli "$@"',
                 # `python` in a block is the interpreter running the tests
                 "python": f'exec "{sys.executable}" "$@"',
                 "python3": f'exec "{sys.executable}" "$@"'}
        for name, line in shims.items():
            shim = bindir / name
            shim.write_text(f"#!/bin/sh\n{line}\n")
            shim.chmod(0o755)
        env = dict(os.environ)
        env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
        old = env.get("PYTHONPATH")
        env["PYTHONPATH"] = str(project) + (os.pathsep + old if old else "")
        env["PYTHONUNBUFFERED"] = "1"
        self.env = env
        self.out = self.ctl / "python.out"
        self.err = self.ctl / "python.err"
        self._worker: subprocess.Popen[str] | None = None
        self._status_r: int | None = None
        self._count = 0

    # -- sh -----------------------------------------------------------------------------
    def _run_sh(self, block: Block) -> str:
        # Output goes to files, not pipes, and the block's whole process group is ended
        # afterwards: a background process a block leaves behind (a scheduler started with
        # `&`) can neither hold the test up nor outlive it.
        self._count += 1
        out_path = self.ctl / f"block{self._count}.out"
        with out_path.open("wb") as out:
            p = subprocess.Popen(
                ["bash", "-e", "-o", "pipefail", "-c", block.code],
                cwd=self.cwd, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True,
            )
            try:
                status: int | None = p.wait(timeout=self.timeout)
            except subprocess.TimeoutExpired:
                status = None
            finally:
                try:
                    os.killpg(p.pid, 9)
                except ProcessLookupError:
                    pass
                p.wait()
        if status is None:
            raise BlockFailure(block, f"still running after {self.timeout:g} s\n  output:\n"
                               + _tail(out_path, 0))
        if status != 0:
            raise BlockFailure(block, f"exit status {status}\n  output:\n{_tail(out_path, 0)}")
        return out_path.read_text(encoding="utf-8", errors="replace")

    # -- python -------------------------------------------------------------------------
    def _start_worker(self) -> None:
        script = self.ctl / "worker.py"
        script.write_text(_WORKER)
        r, w = os.pipe()
        self._status_r = r
        env = dict(self.env, DOCS_STATUS_FD=str(w))
        with self.out.open("wb") as out, self.err.open("wb") as err:
            self._worker = subprocess.Popen(
                [sys.executable, str(script)], cwd=self.cwd, env=env, text=True,
                stdin=subprocess.PIPE, stdout=out, stderr=err, pass_fds=(w,),
                start_new_session=True,
            )
        os.close(w)

    def _run_python(self, block: Block) -> str:
        if self._worker is None:
            self._start_worker()
        assert self._worker is not None and self._worker.stdin is not None
        assert self._status_r is not None
        self._count += 1
        src = self.ctl / f"block{self._count}.py"
        src.write_text(block.code, encoding="utf-8")
        out0 = self.out.stat().st_size
        err0 = self.err.stat().st_size
        self._worker.stdin.write(f"{src}\t{block.where}\n")
        self._worker.stdin.flush()
        deadline = time.monotonic() + self.timeout
        line = b""
        while not line.endswith(b"\n"):
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._status_r], [], [], max(left, 0))
            if not ready:
                self.close(kill=True)
                raise BlockFailure(block, f"still running after {self.timeout:g} s")
            chunk = os.read(self._status_r, 4096)
            if not chunk:
                detail = _tail(self.err, err0)
                self.close()
                raise BlockFailure(block, f"the Python interpreter died\n  output:\n{detail}")
            line += chunk
        verdict = line.decode().strip()
        if verdict != "ok":
            out = (_tail(self.out, out0, 1500) + "\n" + _tail(self.err, err0)).strip()
            raise BlockFailure(block, f"{verdict.removeprefix('fail ')}\n  output:\n{out}")
        text = self.out.read_bytes()[out0:].decode("utf-8", "replace")
        return text.split("\n", 1)[1] if text.startswith("----- ") else text

    # -----------------------------------------------------------------------------------
    def run(self, block: Block) -> str:
        """Run one block; return what it printed."""
        if block.lang == "sh":
            return self._run_sh(block)
        if block.lang == "python":
            return self._run_python(block)
        return ""

    def close(self, kill: bool = False) -> None:
        if self._worker is not None:
            w = self._worker
            self._worker = None
            try:
                if kill:
                    raise subprocess.TimeoutExpired(w.args, 0)
                if w.stdin:
                    w.stdin.close()
                w.wait(timeout=5)
            except (subprocess.TimeoutExpired, OSError):
                try:
                    os.killpg(w.pid, 9)
                except ProcessLookupError:
                    pass
                w.wait()
                if w.stdin:
                    w.stdin.close()
        if self._status_r is not None:
            os.close(self._status_r)
            self._status_r = None

    def cleanup(self) -> None:
        self.close()
        shutil.rmtree(self.root, ignore_errors=True)


def check_excerpt(block: Block, project: Path) -> None:
    """An excerpt block must be found, line for line, in the file it quotes."""
    source = project / str(block.excerpt_of)
    if not source.is_file():
        raise BlockFailure(block, f"the quoted file {block.excerpt_of} does not exist")
    if block.code.rstrip("\n") not in source.read_text(encoding="utf-8"):
        raise BlockFailure(
            block, f"not found verbatim in {block.excerpt_of}: copy it again from the file"
        )


def _normalised(text: str) -> list[str]:
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def output_matches(expected: str, actual: str) -> bool:
    """Line by line, trailing spaces ignored; `…` is any text, a line `…` any lines."""
    parts = []
    for line in _normalised(expected):
        if line.strip() == "…":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(".*".join(re.escape(p) for p in line.split("…")) + r"\n")
    body = "\n".join(_normalised(actual)) + "\n"
    return re.fullmatch("".join(parts), body) is not None


def check_output(block: Block, previous: Block | None, actual: str) -> None:
    if previous is None:
        raise BlockFailure(block, "an expected output with no block run before it")
    if not output_matches(block.code, actual):
        shown = "\n".join("    " + ln for ln in _normalised(actual)[:40])
        raise BlockFailure(
            block, f"the output of {previous.where} differs from this expected output; "
            f"the block printed:\n{shown}"
        )


def run_page(path: Path, project: Path, timeout: float = 120.0) -> list[Block]:
    """Run the runnable blocks of one page in order; raise BlockFailure at the first failure.

    Returns the blocks that ran (so a caller can check a page is not silently empty)."""
    try:
        shown = str(path.relative_to(project))
    except ValueError:
        shown = str(path)
    blocks = parse_blocks(path.read_text(encoding="utf-8"), shown)
    for block in blocks:
        if block.excerpt_of is not None:
            check_excerpt(block, project)
    ran: list[Block] = []
    runner = PageRunner(project, timeout)
    last_output = ""
    previous: Block | None = None
    try:
        for block in blocks:
            if block.runs:
                last_output = runner.run(block)
                previous = block
                ran.append(block)
            elif block.is_output:
                check_output(block, previous, last_output)
    finally:
        runner.cleanup()
    return ran
