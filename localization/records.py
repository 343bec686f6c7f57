r"""The book's recorded runs: the manifest of ``book/data/`` and its listing on the reproducibility page.

Heavy computations are run once by a stated command and written to ``book/data/``; the chapters read
those records and check them against a cheap live slice. :data:`MANIFEST` says, for every file there,
what it is, the command that regenerates it and the chapter that reads it. **Adding a record is one
line**: ``"<file or glob under book/data>": Record("what it is", "command", "chapter"),``, then
``python -m localization records --write`` regenerates the listing on ``book/reproducibility.md``
(sizes are read from the files). A unit test fails when a file in ``book/data/`` matches no entry,
when an entry matches no file, when its chapter does not exist, or when the page's listing is stale
(:func:`stale_rows`: a size may drift by a quarter, as rerunning a record changes it a little).

Every record is written by :func:`write` (JSON, with the commit that ran it, :func:`commit`, and JAX's
version), so that all records carry the same provenance under the same keys.
"""

from __future__ import annotations

import fnmatch
import json
import math
import os
import re
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

__all__ = [
    "Record",
    "MANIFEST",
    "ROOT",
    "DATA",
    "PAGE",
    "files",
    "unlisted",
    "missing",
    "listing",
    "update_page",
    "stale_rows",
    "commit",
    "write",
]

#: The repository (the package's parent directory).
ROOT = Path(__file__).resolve().parents[1]
#: The records' directory.
DATA = ROOT / "book" / "data"
#: The page that lists them, between :data:`BEGIN` and :data:`END`.
PAGE = ROOT / "book" / "reproducibility.md"
BEGIN = "<!-- records: written by `python -m localization records --write` (localization/records.py); do not edit -->"
END = "<!-- end of records -->"


class Record(NamedTuple):
    """One entry of :data:`MANIFEST`.

    Attributes
    ----------
    what : str
        What the file holds (one sentence, Markdown).
    command : str
        The shell command, run from the repository's root, that regenerates it (``"none: ..."`` for a
        file written by hand, with the reason).
    chapter : str
        The chapter that reads it (``book/<chapter>.md``).
    """

    what: str
    command: str
    chapter: str


#: File name or glob (relative to ``book/data``, ``/`` separated) → :class:`Record`.
MANIFEST: dict[str, Record] = {
    "claims/*.json": Record(
        "the recorded sweep of every measured claim: one file per executable chapter, each claim's value and "
        "verdict under the development seeds 100–109 and the fresh held-out seeds, with the commit, the "
        "chapter's source hash and every held-out run",
        ".venv/bin/python -m localization claims --seeds 100-109; .venv/bin/python -m localization claims --held-out",
        "claims",
    ),
    "claim_revisions.yaml": Record(
        "every claim whose bound, statistic or sentence changed after a run under seeds meant to be held out: "
        "what failed and what changed",
        "none: written by hand when a claim changes after a held-out run",
        "claims",
    ),
    "fig1_full_scale.npz": Record(
        "paper Fig. 1 (right) at full scale: the 20 receptive fields of the committee trained on NLGP(100) over "
        "a 30 × 30 torus, batches of 10 000 for 10 000 steps, with its settings",
        "nice -n 19 .venv/bin/python benchmarks/record_fig1.py book/data/fig1_full_scale.npz",
        "two_dimensions",
    ),
    "fig5_paper_scale.json": Record(
        "paper Fig. 5 at the paper's scale: final IPR against excess kurtosis for NLGP and Kur, with settings, "
        "seeds and timings",
        ".venv/bin/python benchmarks/bench.py --only c --fig5-steps 6000 --fig5-record book/data/fig5_paper_scale.json",
        "simulation",
    ),
    "fig5_near_zero.json": Record(
        "paper Fig. 5 just below zero excess kurtosis at the paper's settings (batch 5000, 10 000 steps): "
        "localization share, bump width and IPR along training for NLGP and Kur near zero over ten development "
        "seeds, and at twice the length-scales",
        "nice -n 10 .venv/bin/python -m localization.experiments.runs near_zero book/data/fig5_near_zero.json",
        "simulation",
    ),
    "fig5_near_zero_positive.json": Record(
        "the same for Kur at small positive excess kurtosis (k = 5.5, 5.6, 5.7) over five development seeds",
        "nice -n 10 .venv/bin/python -m localization.experiments.runs near_zero_positive "
        "book/data/fig5_near_zero_positive.json",
        "simulation",
    ),
    "fig5_batch_scan.json": Record(
        "NLGP(0.278) and Kur(6.1) from the same initialisations at batches 1000, 5000 and 25 000 (6000 steps, "
        "three seeds): the bump's width and share against the gradient noise",
        "nice -n 10 .venv/bin/python -m localization.experiments.runs near_zero_batch book/data/fig5_batch_scan.json",
        "simulation",
    ),
    "large_n.json": Record(
        "the Fig. 5 transition at N = 40, 100, 200, 400 (NLGP and Kur near the crossing, xi = (0.3, 0.7), "
        "batch 500, 4 initialisations, steps 60 N within [4000, 12 000]) and two width tasks, with IPR "
        "paths, final IPR and sites holding 90 % of |w|^2",
        "nice -n 10 .venv/bin/python -m localization.experiments.runs large_n book/data/large_n.json --seed 0",
        "simulation",
    ),
    "large_n_long.json": Record(
        "four points of the large-N sweep at N = 100 trained for four times its horizon (24 000 steps)",
        "nice -n 10 .venv/bin/python -m localization.experiments.runs large_n_long "
        "book/data/large_n_long.json --seed 0",
        "simulation",
    ),
    "real_image_fields.json": Record(
        "the fields learned on the clone task of the two scikit-learn photographs (rows of 40 pixels and 8 x 8 "
        "patches, raw and whitened) by the single neuron, a committee of 8 ReLU units and FastICA, with their "
        "shapes (localized, size, frequency, phase, orientation, selectivity); seed 0, the held-out run of "
        "bounds frozen from seeds 1-3",
        "nice -n 10 .venv/bin/python -m localization.experiments.real_image_fields book/data/real_image_fields.json "
        "--seed 0",
        "real_images",
    ),
    "t3_protocol_long.json": Record(
        "the paper's two Student-t(3) protocols of Fig. 4 continued past t = 100 (the notebook's cell 7: batch 1000 "
        "from init_scale 1, 16 initialisations to t = 400; the published script's: batch 50 000 from init_scale "
        "0.001, 2 initialisations to t = 200), three seeds: every field's dominant frequency and shares of "
        "frequencies 0 and 1 at every checkpoint, the flow's, and the escape times from the saddle at t = 100",
        "nice -n 10 .venv/bin/python -m localization.experiments.runs t3_protocol_long book/data/t3_protocol_long.json",
        "elliptical",
    ),
    "large_n_batch.json": Record(
        "four points of the large-N sweep at N = 100 with the paper's batch 5000 at its horizon (6000 steps)",
        "nice -n 10 .venv/bin/python -m localization.experiments.runs large_n_batch "
        "book/data/large_n_batch.json --seed 0",
        "simulation",
    ),
    "large_n_near_zero.json": Record(
        "the Fig. 5 transition at N = 100 with batch 5000 (50 N) for 10 000 steps, near zero excess kurtosis: "
        "NLGP(0.14, 0.19, 0.278) and Kur(5.8, 6.0, 6.1) with the references NLGP(0.464) and Kur(7.7), "
        "4 initialisations, seed 0",
        "nice -n 10 .venv/bin/python -m localization.experiments.runs large_n_near_zero "
        "book/data/large_n_near_zero.json --seed 0",
        "simulation",
    ),
    "large_n_near_zero_seed*.json": Record(
        "the same run under seeds 1 and 2 (the file's suffix is the seed: replace 1 by 2 in the command)",
        "nice -n 10 .venv/bin/python -m localization.experiments.runs large_n_near_zero "
        "book/data/large_n_near_zero_seed1.json --seed 1",
        "simulation",
    ),
    "large_n_near_zero_long.json": Record(
        "the six points of the N = 100 near-zero run nearest zero (NLGP 0.14, 0.19, 0.278; Kur 5.8, 6.0, 6.1) "
        "for twice its horizon (20 000 steps), seed 0",
        "nice -n 10 .venv/bin/python -m localization.experiments.runs large_n_near_zero_long "
        "book/data/large_n_near_zero_long.json --seed 0",
        "simulation",
    ),
    "variance_data_init.json": Record(
        "final IPR and peak site of M2 on a 10 × 10 grid of data streams × initialisations at Kur(10), "
        "Kur(6.1), Kur(5)",
        "nice -n 10 .venv/bin/python -m localization.experiments.runs data_init "
        "book/data/variance_data_init.json --seed 0",
        "simulation",
    ),
    "lr_scale_sweep.json": Record(
        "SGD and the effective flow over learning rates and initial scales, at a localizing and a "
        "non-localizing setting",
        ".venv/bin/python -c 'from localization.figures import effective_dynamics as f; f.record_lr_scale()'",
        "effective_dynamics",
    ),
    "paper_samplers.json": Record(
        "the paper code's own samplers (Metropolis Ising chain; AlgQDF Kur in float64, as its notebooks ran, "
        "and in float32) against the book's in Figs. 5 and 7",
        ".venv/bin/python -m localization.experiments.data_properties",
        "data",
    ),
    "hypercube_basins.json": Record(
        "the basins of the exact flow on the hypercube at n = 6, 8, ..., 16 (Ising (0.3, 0.7) and the NLGP "
        "law of sign(Z)): per ring size, 5 keys × 400 small starts followed to certified fixed points, the "
        "counts and fractions at w_loc and at any localized fixed point, with the settings",
        "nice -n 10 .venv/bin/python -m localization.experiments.hypercube_basin_scaling "
        "--record book/data/hypercube_basins.json",
        "hypercube",
    ),
    "scorecard.yaml": Record(
        "the scorecard's rows: each claim of the paper, its settings, verdict and check (written by hand)",
        "none: edited by hand (the scorecard page renders it)",
        "scorecard",
    ),
}


def files(data: Path = DATA) -> list[str]:
    """Return every file under ``data``, as ``/``-separated paths relative to it, sorted.

    Parameters
    ----------
    data : Path
        The records' directory.

    Returns
    -------
    list of str
        The relative paths (hidden files excluded).
    """
    return sorted(
        p.relative_to(data).as_posix()
        for p in Path(data).rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(data).parts)
    )


def _matches(pattern: str, names: list[str]) -> list[str]:
    return [name for name in names if fnmatch.fnmatchcase(name, pattern)]


def unlisted(data: Path = DATA, manifest: dict[str, Record] | None = None) -> list[str]:
    """Return the files under ``data`` that no entry of the manifest matches.

    Parameters
    ----------
    data : Path
        The records' directory.
    manifest : dict of str to Record, optional
        Default :data:`MANIFEST`.

    Returns
    -------
    list of str
        Their relative paths.
    """
    manifest = MANIFEST if manifest is None else manifest
    return [name for name in files(data) if not any(fnmatch.fnmatchcase(name, p) for p in manifest)]


def missing(data: Path = DATA, manifest: dict[str, Record] | None = None) -> list[str]:
    """Return the entries of the manifest that match no file under ``data``.

    Parameters
    ----------
    data : Path
        The records' directory.
    manifest : dict of str to Record, optional
        Default :data:`MANIFEST`.

    Returns
    -------
    list of str
        Their patterns.
    """
    manifest = MANIFEST if manifest is None else manifest
    names = files(data)
    return [pattern for pattern in manifest if not _matches(pattern, names)]


def _size(nbytes: int) -> str:
    """Return a size in B, kB or MB with two significant digits (1 kB = 1000 B)."""
    for unit, scale in (("MB", 1e6), ("kB", 1e3)):
        if nbytes >= scale:
            value = nbytes / scale
            return f"{value:.2g} {unit}" if value < 10 else f"{value:.0f} {unit}"
    return f"{nbytes} B"


def listing(data: Path = DATA, manifest: dict[str, Record] | None = None) -> str:
    """Return the Markdown table of the records: file, what it is, command, size, chapter.

    Parameters
    ----------
    data : Path
        The records' directory.
    manifest : dict of str to Record, optional
        Default :data:`MANIFEST`.

    Returns
    -------
    str
        The table (one row per entry; a glob's row gives its number of files and their total size).

    Raises
    ------
    ValueError
        Naming the unlisted files or the entries without a file.
    """
    manifest = MANIFEST if manifest is None else manifest
    bad_files, bad_entries = unlisted(data, manifest), missing(data, manifest)
    if bad_files or bad_entries:
        raise ValueError(
            f"book/data and localization/records.py MANIFEST disagree: files without an entry {bad_files}, "
            f"entries without a file {bad_entries}"
        )
    names = files(data)
    rows = ["| file | what it is | command that regenerates it | size | read by |", "| --- | --- | --- | --- | --- |"]
    for pattern, record in manifest.items():
        found = _matches(pattern, names)
        size = _size(sum((Path(data) / name).stat().st_size for name in found))
        if any(ch in pattern for ch in "*?["):
            size += f" ({len(found)} files)"
        command = record.command if record.command.startswith("none") else f"`{record.command}`"
        what, command = (text.replace("|", "\\|") for text in (record.what, command))  # a '|' would split the cell
        rows.append(f"| `book/data/{pattern}` | {what} | {command} | {size} | {{doc}}`{record.chapter}` |")
    return "\n".join(rows)


def update_page(
    page: Path = PAGE, data: Path = DATA, manifest: dict[str, Record] | None = None, *, write: bool = True
) -> bool:
    """Replace the listing between :data:`BEGIN` and :data:`END` on ``page`` by :func:`listing`.

    Parameters
    ----------
    page : Path
        The page (``book/reproducibility.md``).
    data : Path
        The records' directory.
    manifest : dict of str to Record, optional
        Default :data:`MANIFEST`.
    write : bool
        Write the page (``False``: only say whether it is current).

    Returns
    -------
    bool
        Whether the page was already current.

    Raises
    ------
    ValueError
        If the page lacks the markers, or as :func:`listing`.
    """
    text = Path(page).read_text(encoding="utf-8")
    pattern = re.compile(re.escape(BEGIN) + r"\n(?:.*?\n)?" + re.escape(END), re.S)
    if not pattern.search(text):
        raise ValueError(f"page {page} must hold the lines {BEGIN!r} and {END!r}")
    table = listing(data, manifest)
    new = pattern.sub(lambda _: f"{BEGIN}\n{table}\n{END}", text)
    if write and new != text:
        Path(page).write_text(new, encoding="utf-8")
    return new == text


_SIZE = re.compile(r"\| ([0-9.]+) (B|kB|MB)( \(\d+ files\))? \|")


def stale_rows(
    page: Path = PAGE, data: Path = DATA, tolerance: float = 0.25, *, manifest: dict[str, Record] | None = None
) -> list[str]:
    """Return the rows of the page's listing that differ from :func:`listing` beyond size drift.

    A record rewritten with other seeds or settings changes its size a little (the claims' records
    change with every sweep); such a row is current while its size is within ``tolerance`` (relative)
    of the file's, and everything else in the row is equal.

    Parameters
    ----------
    page : Path
        The page (``book/reproducibility.md``).
    data : Path
        The records' directory.
    tolerance : float
        Relative size difference allowed (> 0).
    manifest : dict of str to Record, optional
        Default :data:`MANIFEST`.

    Returns
    -------
    list of str
        Each stale row, as the listing would write it (empty: the page is current).

    Raises
    ------
    ValueError
        If ``tolerance`` is not positive, the page lacks the markers, or as :func:`listing`.
    """
    if not tolerance > 0:
        raise ValueError(f"tolerance must be > 0, got {tolerance!r}")
    text = Path(page).read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        raise ValueError(f"page {page} must hold the lines {BEGIN!r} and {END!r}")
    shown = text.split(BEGIN, 1)[1].split(END, 1)[0].strip().splitlines()
    shown_rows = dict(_without_size(row) for row in shown)
    current = listing(data, manifest).splitlines()
    stale = []
    for row in current:
        key, size = _without_size(row)
        if key not in shown_rows or abs(shown_rows[key] - size) > tolerance * max(size, 1.0):
            stale.append(row)
    keys = {_without_size(row)[0] for row in current}
    return stale + [f"(no longer listed) {row}" for row in shown if _without_size(row)[0] not in keys]


def _without_size(row: str) -> tuple[str, float]:
    """Return a row of the listing with its size replaced by ``SIZE``, and the size in bytes (0 if none)."""
    m = _SIZE.search(row)
    if not m:
        return row, 0.0
    value = float(m.group(1)) * {"B": 1, "kB": 1e3, "MB": 1e6}[m.group(2)]
    return row[: m.start()] + "| SIZE" + (m.group(3) or "") + " |" + row[m.end() :], value


def commit(paths: tuple[str, ...] = ("localization",)) -> str:
    """Return the repository's commit, with ``+uncommitted`` when ``paths`` differ from it.

    Parameters
    ----------
    paths : tuple of str
        Paths (relative to :data:`ROOT`) whose uncommitted changes mark the commit.

    Returns
    -------
    str
        The commit's hash, ``"<hash>+uncommitted"``, or ``"unknown"`` outside a git checkout.
    """
    if not isinstance(paths, tuple) or not all(isinstance(p, str) for p in paths):
        raise TypeError(f"paths must be a tuple of str, got {paths!r}")
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
        dirty = subprocess.run(
            ["git", "status", "--porcelain", *paths], cwd=ROOT, capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head.stdout.strip() + ("+uncommitted" if dirty.stdout.strip() else "")


def _finite(value, where: str) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"record: {where} is {value}; a record holds finite numbers (write null for a missing one)")
    if isinstance(value, Mapping):
        for k, x in value.items():
            _finite(x, f"{where}[{k!r}]")
    elif isinstance(value, (list, tuple)):
        for i, x in enumerate(value):
            _finite(x, f"{where}[{i}]")


def write(path: str | os.PathLike, record: Mapping, *, compact: bool = False) -> Path:
    """Write a run's record as JSON, with its provenance: the one way a record is written.

    ``commit`` (:func:`commit`, unless the record names one already, as a resumed run keeps the first)
    and ``jax_version`` are added when absent. The file is written to a temporary name and moved into
    place, so that a run stopped while writing never leaves half a record.

    Parameters
    ----------
    path : str or os.PathLike
        The file; its directory must exist.
    record : Mapping
        JSON-serialisable: strings, finite numbers, None, and lists and mappings of them.
    compact : bool
        No indentation (large records of arrays); default one space per level.

    Returns
    -------
    Path
        The path written.

    Raises
    ------
    TypeError
        ``record`` is not a mapping, or holds something JSON cannot write.
    ValueError
        The directory does not exist, or the record holds NaN or an infinity.
    """
    import jax

    if not isinstance(record, Mapping):
        raise TypeError(f"record must be a mapping, got {type(record).__name__}")
    path = Path(path)
    if not path.parent.is_dir():
        raise ValueError(f"path must be in an existing directory, got {str(path)!r}")
    _finite(dict(record), "record")
    full = {**record}
    full.setdefault("commit", commit())
    full.setdefault("jax_version", jax.__version__)
    text = json.dumps(full, separators=(",", ":")) if compact else json.dumps(full, indent=1)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text + "\n", encoding="utf-8")
    os.replace(partial, path)
    return path
