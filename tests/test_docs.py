"""Every ```sh and ```python block of docs/*.md and README.md runs, in order, and succeeds.

The convention (tags, the skip mark, the sandbox folder, the `batsim-py` shim) is described in
tests/docs_runner.py; a failing block fails its page's test naming ``page:line``.
"""

from __future__ import annotations

import shlex
import textwrap
from pathlib import Path

import pytest
from docs_runner import (
    BlockFailure,
    DocsFormatError,
    PageRunner,
    parse_blocks,
    run_page,
)

PROJECT = Path(__file__).resolve().parents[1]
PAGES = sorted((PROJECT / "docs").glob("*.md")) + [PROJECT / "README.md"]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(PROJECT)))
def test_page_blocks_run(page: Path) -> None:
    try:
        run_page(page, PROJECT)
    except BlockFailure as failure:
        pytest.fail(str(failure), pytrace=False)


def test_readme_install_commands_are_marked_not_run() -> None:
    """The README's two set-up commands install the package: they are marked, never run here."""
    blocks = parse_blocks((PROJECT / "README.md").read_text(encoding="utf-8"), "README.md")
    installs = [b for b in blocks if b.lang == "sh" and "pip install" in b.code]
    assert len(installs) >= 2, "README lost its set-up commands"
    for b in installs:
        assert b.skip_reason, f"{b.where}: a pip install block must carry a docs-test skip mark"


def test_readme_first_run_command_works() -> None:
    """What the README's first set-up command runs once installed (the part after the install)."""
    blocks = parse_blocks((PROJECT / "README.md").read_text(encoding="utf-8"), "README.md")
    first = next(b for b in blocks if b.lang == "sh" and "pip install" in b.code)
    install, sep, command = first.code.strip().partition("&&")
    assert sep and command.strip().startswith("batsim-py"), first.code
    runner = PageRunner(PROJECT)
    try:
        runner.run(first.__class__(first.page, first.line, "sh", command, None))
        prefix = shlex.split(command)[shlex.split(command).index("-e") + 1]
        assert (runner.cwd / f"{prefix}_jobs.csv").stat().st_size > 0
    except BlockFailure as failure:
        pytest.fail(str(failure), pytrace=False)
    finally:
        runner.cleanup()


# -- the harness itself -------------------------------------------------------------------


def _page(tmp_path: Path, text: str) -> Path:
    page = tmp_path / "page.md"
    page.write_text(textwrap.dedent(text), encoding="utf-8")
    return page


def test_harness_runs_blocks_in_order_in_one_folder(tmp_path: Path) -> None:
    page = _page(tmp_path, """\
        # A page
        ```sh
        echo one > note.txt
        test -e platforms/small4.xml && test -e workloads/delays_small.json
        batsim-py --version
        ```
        ```text
        this is output, not run: exit 1
        ```
        ```python
        value = open("note.txt").read().strip()
        import batsim_py
        ```
        <!-- docs-test: skip needs a network -->
        ```sh
        exit 1
        ```
        ```python
        assert value == "one"
        assert batsim_py.__file__.startswith(%r)
        ```
        """ % str(PROJECT))
    ran = run_page(page, PROJECT)
    assert [b.line for b in ran] == [2, 10, 18]


def test_harness_names_page_and_line_of_a_failing_sh_block(tmp_path: Path) -> None:
    page = _page(tmp_path, """\
        Intro.

        ```sh
        true
        ```

        ```sh
        echo about to fail
        false
        echo never
        ```
        """)
    with pytest.raises(BlockFailure) as info:
        run_page(page, PROJECT)
    assert info.value.block.line == 7
    assert str(info.value).startswith(f"{page}:7: ```sh block failed: exit status 1")
    assert "about to fail" in str(info.value) and "never" in info.value.block.code


def test_harness_names_page_and_line_of_a_failing_python_block(tmp_path: Path) -> None:
    page = _page(tmp_path, """\
        ```python
        x = 1
        ```
        ```python
        raise ValueError("the docs are wrong")
        ```
        """)
    with pytest.raises(BlockFailure) as info:
        run_page(page, PROJECT)
    text = str(info.value)
    assert text.startswith(f"{page}:4: ```python block failed")
    assert "ValueError: the docs are wrong" in text


def test_harness_fails_a_failing_batsim_py_command(tmp_path: Path) -> None:
    page = _page(tmp_path, """\
        ```sh
        batsim-py -p platforms/no_such.xml -w workloads/delays_small.json --scheduler easy
        ```
        """)
    with pytest.raises(BlockFailure) as info:
        run_page(page, PROJECT)
    assert "no_such.xml" in str(info.value)


def test_harness_stops_a_block_that_hangs(tmp_path: Path) -> None:
    page = _page(tmp_path, """\
        ```python
        import time
        time.sleep(60)
        ```
        """)
    with pytest.raises(BlockFailure, match="still running after 1 s"):
        run_page(page, PROJECT, timeout=1)


@pytest.mark.parametrize("tag", ["bash", "py", "shell"])
def test_harness_refuses_runnable_looking_tags(tag: str) -> None:
    with pytest.raises(DocsFormatError, match=f"page.md:2: code block tagged '{tag}'"):
        parse_blocks(f"x\n```{tag}\nls\n```\n", "page.md")


def test_harness_refuses_a_skip_mark_without_reason() -> None:
    with pytest.raises(DocsFormatError, match="without a reason"):
        parse_blocks("<!-- docs-test: skip -->\n```sh\nls\n```\n", "page.md")


def test_harness_stops_a_shell_block_that_hangs_with_a_child(tmp_path: Path) -> None:
    page = _page(tmp_path, """\
        ```sh
        sleep 60 &
        sleep 60
        ```
        """)
    with pytest.raises(BlockFailure, match="page.md:1: ```sh block failed: still running"):
        run_page(page, PROJECT, timeout=1)


def test_harness_checks_excerpts_against_their_file(tmp_path: Path) -> None:
    good = _page(tmp_path, """\
        <!-- docs-test: excerpt examples/zmq_fcfs.py -->
        ```python
        def parse_ids(text: str) -> set[int]:
            \"\"\"Batsim's interval sets: "0-3 7" -> {0, 1, 2, 3, 7}.\"\"\"
        ```
        """)
    assert run_page(good, PROJECT) == []  # checked, not run
    bad = _page(tmp_path, """\
        Text.
        <!-- docs-test: excerpt examples/zmq_fcfs.py -->
        ```python
        def parse_ids(text):
        ```
        """)
    with pytest.raises(BlockFailure, match="page.md:3: .*not found verbatim in examples/zmq_fcfs"):
        run_page(bad, PROJECT)


# -- links ------------------------------------------------------------------------------------

INTERNALS = {"engine.md", "errors.md"}  # contributors' pages: may cite the research notes


def _anchors(text: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to dashes."""
    import re

    found = set()
    for line in text.splitlines():
        m = re.match(r"#{1,6}\s+(.*)", line)
        if m:
            slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
            found.add(slug)
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(PROJECT)))
def test_links_between_pages_resolve(page: Path) -> None:
    import re

    text = page.read_text(encoding="utf-8")
    for target, anchor in re.findall(r"\]\(([^)#\s]*\.md)(?:#([^)\s]+))?\)", text):
        if "://" in target:
            continue
        path = (page.parent / target).resolve()
        assert path.is_file(), f"{page.name}: link to missing page {target}"
        if anchor:
            assert anchor in _anchors(path.read_text(encoding="utf-8")), \
                f"{page.name}: link to missing heading {target}#{anchor}"


def test_the_guide_points_to_no_file_users_lack() -> None:
    for page in sorted((PROJECT / "docs").glob("*.md")):
        if page.name not in INTERNALS:
            text = page.read_text(encoding="utf-8")
            assert "../shared" not in text and "research/" not in text, page.name


def test_harness_checks_marked_outputs(tmp_path: Path) -> None:
    page = _page(tmp_path, """\
        ```sh
        printf 'alpha 1\\nbeta /some/where/x.xml\\nmore\\nlines\\nend\\n'
        ```
        <!-- docs-test: output -->
        ```text
        alpha 1
        beta /…/x.xml
        …
        end
        ```
        ```python
        print("from python")
        ```
        <!-- docs-test: output -->
        ```text
        from python
        ```
        """)
    assert len(run_page(page, PROJECT)) == 2
    wrong = _page(tmp_path, """\
        ```sh
        echo 42
        ```
        <!-- docs-test: output -->
        ```text
        43
        ```
        """)
    with pytest.raises(BlockFailure, match=r"page.md:5: .*output of .*page.md:1 differs"):
        run_page(wrong, PROJECT)
