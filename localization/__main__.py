"""Command line of the library: ``python -m localization figures``, ``claims``, ``records`` and ``predict``.

Usage: ``python -m localization figures --out DIR [--only NAMES] [--scale S] [--data]``,
``python -m localization claims [--seeds 100-109] [--chapters NAMES] [--jobs 2] [--scheduler A] [--carry-over SEED]``,
``python -m localization records [--write]`` and
``python -m localization predict FILE [--shape H W] [--array NAME] [--key-seed K] [--resamples R] [--train] [--json]``.

``figures`` regenerates every figure the book reproduces from the paper (the registry of
:mod:`localization.figures`), as ``DIR/<name>.png``, with the chapters' library calls and random keys
(the book seed ``LOCALIZATION_SEED``); with ``--data``, also the numbers each figure plots
(``DIR/<name>.*.csv`` and ``DIR/<name>.npz``, :func:`localization.figures.export.write_data`).
``claims`` is the recorded sweep of every measured claim (:mod:`localization.book.claims_sweep`).
``records`` lists the recorded runs of ``book/data`` (:mod:`localization.records`). ``predict`` says
whether the paper's theory predicts localized receptive fields for the data in a ``.npy``/``.npz`` file
(:func:`localization.experiments.own_data.predict`), and with ``--train`` checks it by training
(:func:`localization.experiments.own_data.train_on_samples`); it writes nothing. Bad arguments (and, for
``predict``, a bad file) give a message on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
from pathlib import Path


def _parsers() -> tuple[argparse.ArgumentParser, ...]:
    """Build the top-level parser and its ``figures``, ``claims``, ``records`` and ``predict`` sub-parsers.

    Returns
    -------
    tuple of argparse.ArgumentParser
        The top-level parser, the ``figures``, the ``claims`` and the ``predict`` sub-parsers.
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
    sweep.add_argument("--jobs", type=int, default=2, help="chapters executed at once (default 2): local workers")
    sweep.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        default=None,
        help="a running Dask scheduler (tcp://HOST:8786) to execute the chapters on (default: $LOCALIZATION_SCHEDULER "
        "if set, else a local cluster of --jobs workers); see the README's 'On a cluster'",
    )
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
    return parser, figures, sweep, _predict_parser(commands)


def _predict_parser(commands) -> argparse.ArgumentParser:
    """Add the ``predict`` sub-parser to ``commands`` and return it."""
    predict = commands.add_parser(
        "predict",
        help="does the paper's theory predict localized receptive fields for the data in FILE?",
        description=textwrap.fill(
            "Read samples from FILE and report what the paper's theory predicts for a single ReLU neuron trained "
            "on them: the excess kurtosis of each z-scored coordinate and of the pooled marginal (with a bootstrap "
            "interval over the samples), the amplifier phi of paper Eq. (6) against the Gaussian line, and the "
            "verdict of the paper's sign rule (Claim 3.2: excess kurtosis < 0 -> localized fields). With --train, "
            "also train the neuron and say whether its fields agree. Nothing is written to disk.",
            100,
        ),
    )
    predict.add_argument(
        "file",
        metavar="FILE",
        help=".npy array of samples, one per row: (S, N) signals or (S, h, w) patches; or .npz holding one such "
        "array (or name it with --array)",
    )
    predict.add_argument(
        "--shape",
        nargs=2,
        type=int,
        metavar=("H", "W"),
        help="the rows of an (S, N) array are flattened H x W patches (N = H W)",
    )
    predict.add_argument(
        "--array", metavar="NAME", help="the array of a .npz file to read (needed if it holds several)"
    )
    predict.add_argument("--key-seed", type=int, default=0, metavar="K", help="seed of the random key (default 0)")
    predict.add_argument(
        "--resamples", type=int, default=200, metavar="R", help="bootstrap resamples (>= 10; default 200)"
    )
    predict.add_argument(
        "--level", type=float, default=0.95, help="confidence level of the interval and bands (default 0.95)"
    )
    predict.add_argument(
        "--train",
        action="store_true",
        help="also train the single neuron by online SGD on the data against white Gaussian noise from 8 starts "
        "(a few seconds at N = 40) and compare its fields with the prediction",
    )
    predict.add_argument(
        "--against",
        choices=("white", "clone"),
        default="white",
        help="with --train, the class y = 0: white Gaussian noise (default; the task the sign rule is about) or the "
        "data's Gaussian clone (same covariance)",
    )
    predict.add_argument(
        "--geometry",
        choices=("ring", "line"),
        default="ring",
        help="with --train, the samples cyclically shifted by random shifts (default: translation invariant, as the "
        "theory assumes) or as they are",
    )
    predict.add_argument("--json", action="store_true", help="print one JSON object instead of the report")
    predict.add_argument("--quiet", action="store_true", help="no progress bars")
    return predict


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
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["predict"]:
        # predict alone: building every sub-parser imports the figure registry (~2.5 s), which a
        # predict call, even one that only reports a bad file, does not need
        parser = argparse.ArgumentParser(prog="python -m localization")
        predict_parser = _predict_parser(parser.add_subparsers(dest="command", required=True, metavar="COMMAND"))
        return _predict(parser.parse_args(argv), predict_parser)
    parser, figures_parser, claims_parser, _ = _parsers()
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
    from localization import jobs

    try:
        records = claims_sweep.sweep(
            chapters,
            seeds,
            jobs=args.jobs,
            progress=not args.no_progress,
            held_out=args.held_out,
            scheduler=args.scheduler,
        )
    except ValueError as e:
        claims_parser.error(str(e))
    except (ConnectionError, jobs.WorkerMismatchError, jobs.JobFailedError) as e:
        print(f"claims: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted (the finished executions are stored: run the same command again to resume)", file=sys.stderr)
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
    from localization import jobs
    from localization.book import claims_sweep

    try:
        result = claims_sweep.carry_over(
            chapters,
            args.carry_over,
            jobs=args.jobs,
            progress=not args.no_progress,
            baseline=args.baseline,
            scheduler=args.scheduler,
        )
    except ValueError as e:
        claims_parser.error(f"--carry-over: {e}")
    except (ConnectionError, jobs.WorkerMismatchError, jobs.JobFailedError) as e:
        print(f"claims --carry-over: {e}", file=sys.stderr)
        return 1
    for chapter, found in result.items():
        print(
            f"{chapter}: " + ("carried over" if not found else "differs, record kept stale:\n  " + "\n  ".join(found))
        )
    if not result:
        print("every record is current: nothing to carry over")
    return 1 if any(result.values()) else 0


# -------------------------------------------------------------------------------------------------
# predict
# -------------------------------------------------------------------------------------------------
def _load_samples(args, parser) -> tuple[object, str]:
    """Return the array FILE holds (``--array`` of an .npz), and a description of where it came from.

    Every problem with the file ends in ``parser.error`` (stderr, exit code 2), naming it.
    """
    import numpy as np

    path = Path(args.file)
    if not path.exists():
        parser.error(f"{args.file}: no such file")
    if not path.is_file():
        parser.error(f"{args.file}: not a file")
    try:
        with path.open("rb") as f:
            magic = f.read(6)
        if not magic.startswith((b"\x93NUMPY", b"PK\x03\x04")):
            parser.error(f"{args.file}: not a readable .npy or .npz file (it does not start as one)")
        loaded = np.load(path, allow_pickle=False)
    except ValueError as e:
        if "Object arrays" in str(e):
            parser.error(f"{args.file}: holds Python objects, not a numeric array (saved with allow_pickle)")
        parser.error(f"{args.file}: not a readable .npy or .npz file ({e})")
    except (OSError, EOFError) as e:
        parser.error(f"{args.file}: cannot be read as a .npy or .npz file ({e})")
    if isinstance(loaded, np.ndarray):
        if args.array is not None:
            parser.error(f"--array {args.array}: {args.file} is a .npy file (one array); --array is for .npz files")
        return loaded, args.file
    with loaded:
        names = list(loaded.files)
        if not names:
            parser.error(f"{args.file}: the .npz file holds no array")
        if args.array is None:
            if len(names) > 1:
                parser.error(f"{args.file}: holds several arrays ({', '.join(names)}); choose one with --array NAME")
            name = names[0]
        elif args.array not in names:
            parser.error(f"--array {args.array}: {args.file} has no such array (it holds: {', '.join(names)})")
        else:
            name = args.array
        try:
            return loaded[name], f"{args.file} (array {name!r})"
        except ValueError as e:
            parser.error(f"{args.file}: array {name!r} holds Python objects, not numbers ({e})")


def _predict(args, parser) -> int:
    import json

    import jax

    from localization.data.empirical import EmpiricalModel
    from localization.experiments import own_data

    if args.resamples < 10:
        parser.error(f"--resamples: resamples must be an integer >= 10, got {args.resamples}")
    if not 0 < args.level < 1:
        parser.error(f"--level: level must lie in (0, 1), got {args.level}")
    samples, source = _load_samples(args, parser)
    progress = not args.quiet and sys.stderr.isatty()
    try:
        model = EmpiricalModel.of(samples, None if args.shape is None else tuple(args.shape), name=Path(args.file).name)
    except (TypeError, ValueError) as e:
        parser.error(f"{source}: {e}")
    boot_key, train_key = jax.random.split(jax.random.key(args.key_seed))
    try:
        prediction = own_data.predict(boot_key, model, resamples=args.resamples, level=args.level, progress=progress)
    except (TypeError, ValueError) as e:  # the options are checked above: a problem of the data
        parser.error(f"{source}: {e}")
    run = None
    if args.train:
        try:
            run = own_data.train_on_samples(
                train_key, model, against=args.against, geometry=args.geometry, progress=progress
            )
        except ValueError as e:
            print(f"training failed: {e}", file=sys.stderr)
            return 1
    if args.json:
        out = {"file": args.file, "array": args.array, **prediction.as_dict()}
        if run is not None:
            out["training"] = {**run.as_dict(), "agrees": run.agrees_with(prediction)}
        print(json.dumps(out, allow_nan=False))
    else:
        print(_report(source, prediction, run))
    return 0


#: What each verdict says, after "verdict: <verdict>".
_VERDICT_TEXT = {
    "localizes": "the whole interval lies below 0 (sub-Gaussian data): phi is super-linear near 0, and the "
    "paper's rule (Claim 3.2) predicts localized receptive fields",
    "does not localize": "the whole interval lies above 0 (super-Gaussian data): phi is sub-linear near 0, and "
    "the paper's rule predicts no localization",
    "undecided": "the interval contains 0: the sign of the excess kurtosis is not settled at this sample size, "
    "and the paper's rule predicts neither",
}


def _onset_text(p) -> str:
    """Return the end of the sign rule's caveat: the reference case's finite-N onset at the data's ring size."""
    from localization.experiments import onset_scaling

    if len(p.shape) != 1 or not 8 <= p.n_inputs <= 2560:
        return ")"
    try:
        onset = onset_scaling.onset_gain(p.n_inputs, xtol=1e-6)
    except ValueError:  # no onset inside the bracket at this N: say nothing rather than guess
        return ")"
    xi = ", ".join(f"{x:g}" for x in onset_scaling.XI)
    return (
        f": on a ring of N = {p.n_inputs} sites the NLGP task of the book's mechanism chapter, xi = ({xi}), "
        f"localizes only below an excess kurtosis of {onset.excess_kurtosis:+.2f})"
    )


def _report(source: str, p, run) -> str:
    """Return the readable report of ``predict`` (and of ``--train``'s run)."""
    import numpy as np

    from localization.field_analysis import LOCALIZED_SHARE

    pct = f"{100 * p.level:g}%"
    where = f"a ring of {p.n_inputs} sites" if len(p.shape) == 1 else f"{p.shape[0]} x {p.shape[1]} patches (a torus)"
    ck = p.coordinate_kurtosis
    lines = [
        f"data: {source}: {p.n_samples} samples of N = {p.n_inputs} inputs ({where}), every coordinate z-scored",
        f"excess kurtosis of the coordinates: median {np.median(ck):+.3f}, range [{ck.min():+.3f}, {ck.max():+.3f}]",
        f"excess kurtosis of the pooled marginal: {p.excess_kurtosis:+.4f}, {pct} interval "
        f"[{p.kurtosis_interval[0]:+.4f}, {p.kurtosis_interval[1]:+.4f}] "
        f"({p.resamples} bootstrap resamples of the samples)",
        "",
        "amplifier phi(a) of paper Eq. (6) against the Gaussian line sqrt(2/pi) a:",
        f"     a   phi(a)   phi - line   {pct} band of phi - line",
    ]
    picks = sorted({int(np.argmin(np.abs(p.a - t))) for t in (0.2, 0.4, 0.6, 0.8, 0.95)})
    for i in picks:
        low, high = p.deviation_band[:, i]
        lines.append(f"  {p.a[i]:.2f}   {p.amplifier[i]:.4f}   {p.deviation[i]:+.5f}   [{low:+.5f}, {high:+.5f}]")
    lines += ["", f"verdict: {p.verdict} -- {_VERDICT_TEXT[p.verdict]}."]
    caveat = "  (the rule is the paper's N -> infinity sign rule; at finite N the onset needs a margin below 0"
    lines.append(caveat + _onset_text(p))
    if p.verdict != "localizes" and p.superlinear.any():
        lines.append(
            f"  note: phi lies above the line (its band too) for a >= {p.a[p.superlinear].min():.2f}; the sign rule "
            "speaks of a -> 0. In the paper's task such a phi does not localize Kur(5) (the book's mechanism "
            "chapter, exercise 3), but against the data's Gaussian clone (--against clone) it can"
        )
    if run is not None:
        shares = ", ".join(f"{s:.2f}" for s in run.localization_share)
        partner = "white Gaussian noise" if run.against == "white" else "its Gaussian clone"
        agree = run.agrees_with(p)
        lines += [
            "",
            f"training: {run.localized.size} starts, online SGD (lr {run.lr:g}, batch {run.batch}, {run.steps} steps, "
            f"time {run.time:g}) on the data (y = 1) against {partner} (y = 0)",
            f"  localized (over {LOCALIZED_SHARE:g} of |w|^2 in a quarter window): {int(run.localized.sum())} of "
            f"{run.localized.size}; "
            f"shares {shares}",
            "  agrees with the prediction: "
            + {True: "yes", False: "no", None: "nothing to compare (the prediction is undecided)"}[agree],
        ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
