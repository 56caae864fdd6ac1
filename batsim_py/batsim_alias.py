"""The `batsim` command: batsim-py under Batsim's name, for tools that start Batsim by name.

Under that name batsim-py behaves as Batsim 4.2.1 does wherever a wrapper can tell (facts
read in Batsim 4.2.1's src/batsim.cpp and the docopt library it parses its flags with):

- the default export prefix is `out` (batsim-py's own is `outputs/out`), and it waits for an
  external scheduler forever, to connect and to answer (batsim-py gives up after 30 s and
  600 s, to never hang);
- `--version` prints `4.2.1` and `--simgrid-version` `3.32.0` (the versions whose behaviour
  is reproduced), each on one line on stdout, exit code 0;
- `-h/--help` prints a docopt-style usage text on stdout (exit 0) which says what runs:
  batsim-py, imitating Batsim 4.2.1;
- arguments that do not parse (an unknown flag, a missing value, no `-p`) print the reason on
  stderr, the usage text on stdout, and exit with code 255 (docopt's `exit(-1)`).

Everything else is batsim-py's command line (`batsim_py.cli`), flags and extensions included.
"""

from __future__ import annotations

import re
import sys
import textwrap
from collections.abc import Sequence

from batsim_py import __version__
from batsim_py.cli import FLAGS, Flag, build_parser, no_collection_at_exit
from batsim_py.cli import main as batsim_py_main

BATSIM_VERSION = "4.2.1"  # the Batsim this command imitates
SIMGRID_VERSION = "3.32.0"  # the SimGrid Batsim 4.2.1 was built on (the models reproduced)
DEFAULT_EXPORT = "out"  # Batsim's default; batsim-py's own is outputs/out
EXIT_USAGE = 255  # docopt's exit(-1) on arguments that do not match the usage


# Defaults that differ under Batsim's name, and what the help says of them instead.
ALIAS_DEFAULTS = {
    "--export": (DEFAULT_EXPORT, None),
    # Batsim waits for its scheduler forever; batsim-py's own command gives up, to never hang.
    "--scheduler-timeout": ("inf", "seconds to wait for each reply of an external scheduler "
                            "(default: forever, as Batsim; batsim-py's own default is 600)"),
    "--scheduler-connect-timeout": ("inf", "seconds to wait for an external scheduler to "
                                    "accept the connection at -s (default: forever, as "
                                    "Batsim; batsim-py's own default is 30)"),
}
ALIAS_HELP = {
    "--version": f"print the version of Batsim imitated ({BATSIM_VERSION}) and exit",
    "--simgrid-version": f"print the version of SimGrid whose models are reproduced "
                         f"({SIMGRID_VERSION}) and exit",
}


def _option_line(flag: Flag) -> str:
    names = ", ".join(flag.names)
    metavar = flag.metavar
    if isinstance(metavar, tuple):
        names += " (" + " ".join(f"<{m.lower()}>" for m in metavar) + ")"
    elif metavar:
        names += f" <{metavar.lower()}>"
    long_name = next(n for n in flag.names if n.startswith("--"))
    default, text = ALIAS_DEFAULTS.get(long_name, (flag.default, None))
    if long_name in ALIAS_HELP:
        text = ALIAS_HELP[long_name]
    elif text is None:  # (its own "(default ...)" is said as docopt does)
        text = re.sub(r" ?\(default:? [^;)]*\)", "", flag.help)
        if flag.kind not in ("flag", "list", "pair") and default not in (None, ""):
            text += f" [default: {default}]"
    if not flag.supported:
        text += " [not supported by batsim-py]"
    return textwrap.fill(text, width=100, initial_indent=f"  {names:<36} ",
                         subsequent_indent=" " * 39)


def usage() -> str:
    """The text of `batsim --help`: Batsim's usage patterns, then every option."""
    return "\n".join([
        "A tool to simulate the behaviour of scheduling algorithms: batsim-py "
        f"{__version__}, a",
        f"Python re-implementation imitating Batsim {BATSIM_VERSION} (SimGrid "
        f"{SIMGRID_VERSION} models), run",
        "under the name batsim (`batsim-py --help`: the same options under its own name).",
        "",
        "Usage:",
        "  batsim -p <platform_file> [-w <workload_file>...]",
        "                            [-W <workflow_file>...]",
        "                            [--WS (<cut_workflow_file> <start_time>)...]",
        "                            [--sg-cfg <opt_name:opt_value>...]",
        "                            [--sg-log <log_option>...]",
        "                            [-r <hosts_roles_map>...]",
        "                            [--events <events_file>...]",
        "                            [--sched-cfg <cfg_str> | --sched-cfg-file <cfg_file>]",
        "                            [options]",
        "  batsim --help",
        "  batsim --version",
        "  batsim --simgrid-version",
        "",
        "Options:",
        *(_option_line(flag) for flag in FLAGS),
        f"  {'-h, --help':<36} Shows this help.",
    ])


def _usage_error(reason: str) -> int:
    print(reason, file=sys.stderr)
    print("\n" + usage())
    return EXIT_USAGE


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:  # (the process's own command line)
        no_collection_at_exit()
    argv = list(sys.argv[1:] if argv is None else argv)
    # As docopt: help first, then version, wherever they are in the arguments.
    if "-h" in argv or "--help" in argv:
        print(usage())
        return 0
    if "--version" in argv:
        print(BATSIM_VERSION)
        return 0
    if "--simgrid-version" in argv:
        print(SIMGRID_VERSION)
        return 0
    parser = build_parser()
    parser.prog = "batsim"
    parser.error = _raise_usage_error  # type: ignore[method-assign]
    try:
        args = parser.parse_args(argv)
    except _UsageError as exc:
        return _usage_error(str(exc))
    if not args.platform:
        return _usage_error("Arguments did not match expected patterns: -p <platform_file> "
                            "is required")
    for name, (default, _) in ALIAS_DEFAULTS.items():
        flag = next(f for f in FLAGS if name in f.names)
        if not _given(argv, flag.names):
            argv = [name, default, *argv]
    return batsim_py_main(argv)


class _UsageError(Exception):
    pass


def _raise_usage_error(message: str) -> None:
    raise _UsageError(message)


def _given(argv: Sequence[str], names: Sequence[str]) -> bool:
    """Whether one of the options `names` is in the arguments (`-e X`, `--export=X`, `-eX`)."""
    for arg in argv:
        if arg == "--":
            return False
        for name in names:
            if arg == name or arg.startswith(name + "=") or (
                    len(name) == 2 and arg.startswith(name) and not arg.startswith("--")):
                return True
    return False


if __name__ == "__main__":
    sys.exit(main())
