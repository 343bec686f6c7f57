"""Command line of the library: ``python -m localization figures``, ``claims`` and ``records``.

Usage: ``python -m localization figures --out DIR [--only NAMES] [--scale S] [--data]``,
``python -m localization claims [--seeds 100-109] [--chapters NAMES] [--jobs 2] [--carry-over SEED]`` and
``python -m localization records [--write]``.

``figures`` regenerates every figure the book reproduces from the paper (the registry of
:mod:`localization.figures`), as ``DIR/<name>.png``, with the chapters' library calls and random keys
(the book seed ``LOCALIZATION_SEED``); with ``--data``, also the numbers each figure plots
(``DIR/<name>.*.csv`` and ``DIR/<name>.npz``, :func:`localization.figures.export.write_data`).
``claims`` is the recorded sweep of every measured claim (:mod:`localization.book.claims_sweep`).
``records`` lists the recorded runs of ``book/data`` (:mod:`localization.records`). Bad arguments give
a message on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
from pathlib import Path


def _parsers() -> tuple[argparse.ArgumentParser, argparse.ArgumentParser, argparse.ArgumentParser]:
    """Build the top-level parser and its ``figures``, ``claims`` and ``records`` sub-parsers.

    Returns
    -------
    tuple of argparse.ArgumentParser
        The top-level parser, the ``figures`` sub-parser and the ``claims`` sub-parser.
    """
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
    figures.add_argument(
        "--data",
        action="store_true",
        help="also write the numbers each figure plots beside its PNG: its computed data as "
        "DIR/<name>.<part>.csv (curves, tables) and DIR/<name>.npz (fields), and what it draws as "
        "DIR/<name>.plotted.csv/.npz, each with a header naming the figure, chapter, scale, settings, seed "
        "and commit (see the reproducibility page)",
    )
    figures.add_argument("--no-progress", action="store_true", help="no progress bar")
    sweep = commands.add_parser(
        "claims",
        help="execute the chapters under many seeds and record every measured claim (book/data/claims)",
        description=textwrap.fill(
            "Execute each chapter once per seed in a fresh kernel, recording every claim stated with "
            "localization.book.claim (a claim that fails is recorded and the chapter goes on), and write one "
            "record per chapter to book/data/claims/<chapter>.json. The default seeds 100-109 are development "
            "seeds (bounds were revised after them); --held-out runs the fresh held-out seeds once the bounds are "
            "frozen.",
            100,
        ),
    )
    sweep.add_argument("--seeds", default="100-109", help="seeds, e.g. 100-109 or 3,5,8 (default 100-109)")
    sweep.add_argument("--chapters", action="append", metavar="NAMES", help="chapters (comma-separated); default: all")
    sweep.add_argument("--jobs", type=int, default=2, help="chapters executed at once (default 2)")
    sweep.add_argument(
        "--held-out",
        action="store_true",
        help="run the fresh held-out seeds (localization.book.claims.HELD_OUT_SEEDS) instead of --seeds: once per "
        "chapter source, only on chapters whose record is current for the development seeds",
    )
    sweep.add_argument("--no-progress", action="store_true", help="no progress bar")
    sweep.add_argument(
        "--carry-over",
        type=int,
        metavar="SEED",
        help="instead of sweeping: re-execute each chapter whose code changed under this recorded seed and keep its "
        "record (moved to the new code) only if every claim comes out the same (a refactor's check)",
    )
    sweep.add_argument(
        "--baseline",
        metavar="COMMIT",
        help="with --carry-over: compare with that commit's chapter (the recorded source) executed now on this "
        "machine, not with the recorded values (float32 SGD differs between machines in its last bits)",
    )
    records = commands.add_parser(
        "records",
        help="list the recorded runs in book/data (what, command, size, chapter)",
        description=textwrap.fill(
            "Print the table of the recorded runs in book/data (localization/records.py MANIFEST: what each "
            "file is, the command that regenerates it, its size and the chapter that reads it); with --write, "
            "update that table on book/reproducibility.md. Exit code 1 if a file has no entry or an entry no file.",
            100,
        ),
    )
    records.add_argument("--write", action="store_true", help="update the listing on book/reproducibility.md")
    return parser, figures, sweep


def _writable_dir(out: str) -> Path:
    path = Path(out)
    path.mkdir(parents=True, exist_ok=True)
    if not os.access(path, os.W_OK | os.X_OK):
        raise PermissionError(f"{path} is not writable")
    return path


def main(argv: list[str] | None = None) -> int:
    """Run the command line with ``argv`` in JAX's 64-bit mode (``localization.enable_float64``).

    Parameters
    ----------
    argv : list of str, optional
        The arguments (default ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit code (argument errors exit with code 2 through ``argparse``).
    """
    import localization

    localization.enable_float64()  # the figures' library calls are those of the chapters (book.start)
    parser, figures_parser, claims_parser = _parsers()
    args = parser.parse_args(argv)
    if args.command == "claims":
        return _claims(args, claims_parser)
    if args.command == "records":
        return _records(args)
    from localization.figures import export, registry

    try:
        names = registry.resolve_names(args.only)
    except ValueError as e:
        figures_parser.error(f"--only: {e}")
    try:
        out = _writable_dir(args.out)
    except OSError as e:
        figures_parser.error(f"--out {args.out!r}: cannot write there ({e.strerror or e})")
    try:
        export.render(names, out, args.scale, progress=not args.no_progress, data=args.data)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return 0


def _records(args) -> int:
    from localization import records

    try:
        print(records.listing())
        if args.write:
            current = records.update_page()
            print(f"{records.PAGE}: " + ("already current" if current else "listing updated"), file=sys.stderr)
    except ValueError as e:
        print(e, file=sys.stderr)
        return 1
    return 0


def _claims(args, claims_parser) -> int:
    from localization.book import claims_sweep

    try:
        seeds = claims_sweep.parse_seeds(args.seeds)
    except ValueError as e:
        claims_parser.error(f"--seeds: {e}")
    known = claims_sweep.executable_chapters()
    chapters = [c.strip() for group in (args.chapters or [",".join(known)]) for c in group.split(",") if c.strip()]
    unknown = sorted(set(chapters) - set(known))
    if unknown:
        claims_parser.error(f"--chapters: not executable chapters: {', '.join(unknown)} (known: {', '.join(known)})")
    if args.jobs < 1:
        claims_parser.error(f"--jobs must be a positive integer, got {args.jobs}")
    if args.carry_over is not None:
        return _carry_over(chapters, args, claims_parser)
    try:
        records = claims_sweep.sweep(
            chapters, seeds, jobs=args.jobs, progress=not args.no_progress, held_out=args.held_out
        )
    except ValueError as e:
        claims_parser.error(str(e))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    failed = [
        f"{chapter} seed {seed}: {run['error']}"
        for chapter, record in records.items()
        for seed, run in record["runs"].items()
        if run["error"]
    ]
    failed += [
        f"{claim_id} fails for seeds {[o['seed'] for o in entry['observations'] if not o['holds']]}"
        for record in records.values()
        for claim_id, entry in record["claims"].items()
        if not all(o["holds"] for o in entry["observations"])
    ]
    seeds_text = "the held-out seeds" if args.held_out else f"seeds {args.seeds}"
    print("\n".join(failed) if failed else f"every claim held for {seeds_text} in {len(chapters)} chapters")
    return 1 if failed else 0


def _carry_over(chapters, args, claims_parser) -> int:
    from localization.book import claims_sweep

    try:
        result = claims_sweep.carry_over(
            chapters, args.carry_over, jobs=args.jobs, progress=not args.no_progress, baseline=args.baseline
        )
    except ValueError as e:
        claims_parser.error(f"--carry-over: {e}")
    for chapter, found in result.items():
        print(
            f"{chapter}: " + ("carried over" if not found else "differs, record kept stale:\n  " + "\n  ".join(found))
        )
    if not result:
        print("every record is current: nothing to carry over")
    return 1 if any(result.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
