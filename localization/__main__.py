"""Command line of the library: ``python -m localization figures --out DIR [--only NAMES] [--scale S]``.

``figures`` regenerates every figure the book reproduces from the paper (the registry of
:mod:`localization.figures`), as ``DIR/<name>.png``, with the chapters' library calls and random keys
(the book seed ``LOCALIZATION_SEED``). Bad arguments give a message on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
from pathlib import Path


def _parsers() -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    """The top-level parser and its ``figures`` sub-parser."""
    from localization.figures import registry

    parser = argparse.ArgumentParser(
        prog="python -m localization", description="Command line of the localization library and book."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    figures = commands.add_parser(
        "figures",
        help="regenerate the figures the book reproduces from the paper",
        description=textwrap.fill(
            "Regenerate the figures the book reproduces from the paper as DIR/<name>.png (paper numbering "
            "in the names), with the chapters' library calls and random keys (localization.book.key: the "
            "book seed LOCALIZATION_SEED, default 0).",
            100,
        ),
        epilog="figures:\n" + registry.describe(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    figures.add_argument("--out", required=True, metavar="DIR", help="directory for the PNG files (created)")
    figures.add_argument(
        "--only",
        action="append",
        metavar="NAMES",
        help="only these figures (comma-separated; the option may be repeated); default: all",
    )
    figures.add_argument(
        "--scale",
        choices=registry.SCALES,
        default="chapter",
        help="chapter: the chapter's settings (default); paper: the paper's settings where the chapter "
        "uses smaller ones (slow: paper Fig. 5 is about 1e9 sample-steps)",
    )
    figures.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser, figures


def _writable_dir(out: str) -> Path:
    path = Path(out)
    path.mkdir(parents=True, exist_ok=True)
    if not os.access(path, os.W_OK | os.X_OK):
        raise PermissionError(f"{path} is not writable")
    return path


def main(argv: list[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); returns the exit code (argument
    errors exit with code 2 through ``argparse``)."""
    parser, figures_parser = _parsers()
    args = parser.parse_args(argv)
    from localization.figures import registry

    try:
        names = registry.resolve_names(args.only)
    except ValueError as e:
        figures_parser.error(f"--only: {e}")
    try:
        out = _writable_dir(args.out)
    except OSError as e:
        figures_parser.error(f"--out {args.out!r}: cannot write there ({e.strerror or e})")
    try:
        registry.render(names, out, args.scale, progress=not args.no_progress)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
