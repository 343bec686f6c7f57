"""Measured claims: stated once, asserted, recorded over seeds, and shown with their margin.

A chapter states every claim that rests on a sampled or trained quantity through :func:`claim`::

    book.claim("gauss-sgd-amp-median", rel_dev, "<", 0.1,
               says="the median |u0| of the SGD fields is within 10 % of Eq. (gauss-fixed)")

which asserts it (``AssertionError`` naming the claim, the value, the bound and the seed), shows a
one-line verdict below the check (a measured output: never compared by nbval), and, when the
environment variable ``LOCALIZATION_CLAIMS_LOG`` names a file, appends the observation to it as one
JSON line. Exact checks (SymPy, quadrature, enumeration) keep plain ``assert``.

``python -m localization claims`` (:mod:`localization.book.claims_sweep`) executes the chapters under the
development seeds 100-109 and, once every bound is frozen, ``--held-out`` under the fresh held-out
seeds :data:`HELD_OUT_SEEDS`, once per chapter source; it writes one record per chapter,
``book/data/claims/<chapter>.json``: the commit, the chapter's source hash, and every claim's
observations. :func:`read_records` and :func:`summarise` turn the records into the rows of the page
"How sure is each claim": the range over seeds, the margin (the nearest observed value's distance
from the bound, in standard deviations over seeds) and whether the bound is *loose* (far beyond
anything observed: more than :data:`LOOSE_SPREADS` standard deviations *and* more than
:data:`LOOSE_FRACTION` of the value's scale away), which a claim must justify with ``loose=``.
"""

from __future__ import annotations

import hashlib
import json
import math
import numbers
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from localization import validation as v
from localization.book import page

__all__ = [
    "LOG_ENV",
    "KEEP_GOING_ENV",
    "CHAPTER_ENV",
    "OPERATORS",
    "LOOSE_SPREADS",
    "LOOSE_FRACTION",
    "RECORD_DIR",
    "DEVELOPMENT_SEEDS",
    "HELD_OUT_SEEDS",
    "MIN_DEVELOPMENT",
    "REVISIONS",
    "read_revisions",
    "claim",
    "source_hash",
    "sources",
    "held_out_current",
    "claim_ids",
    "stated_id",
    "read_records",
    "ClaimSummary",
    "summarise",
    "observed_range",
    "glue_range",
    "markdown_tables",
]

#: File to which :func:`claim` appends one JSON line per observation (unset: nothing is recorded).
LOG_ENV = "LOCALIZATION_CLAIMS_LOG"
#: When set to 1 (by the sweep), a claim that does not hold is recorded and the chapter goes on.
KEEP_GOING_ENV = "LOCALIZATION_CLAIMS_KEEP_GOING"
#: The chapter being executed (set by the sweep; recorded with each observation).
CHAPTER_ENV = "LOCALIZATION_CHAPTER"

#: The comparisons a claim may state. ``"in"`` takes a closed interval ``(low, high)``.
OPERATORS = ("<", "<=", ">", ">=", "==", "in")

#: A bound is loose when the nearest observed value is more than this many standard deviations
#: (over the recorded seeds) away from it ...
LOOSE_SPREADS = 5.0
#: ... and more than this fraction of the value's scale (the larger of the absolute bound and the absolute median).
LOOSE_FRACTION = 0.2

#: The development seeds: a bound was chosen from them (0-9, in the chapters' scratch runs) or revised
#: after seeing them (100-109: the first recorded sweep, meant as held out, after whose failures some
#: bounds and statistics were changed; so it is development too).
DEVELOPMENT_SEEDS = tuple(range(10)) + tuple(range(100, 110))

#: The fresh held-out seeds: no bound was chosen from or revised after them. ``--held-out`` runs them once
#: per chapter source, after the bounds are frozen; a claim changed after that is listed in :data:`REVISIONS`.
HELD_OUT_SEEDS = (4001, 4002, 4003)

#: Development seeds of 100-109 a chapter's record must hold before its held-out seeds run (a chapter swept
#: before issue 33 holds all ten; one whose claims changed then was swept again on at least the first five).
MIN_DEVELOPMENT = 5

#: Where the sweep writes the records: ``book/data/claims`` of the repository the package is installed from.
RECORD_DIR = Path(__file__).resolve().parents[2] / "book" / "data" / "claims"

_ID = re.compile(r"^[a-z0-9][a-z0-9\-]*$")


def _scalar(name: str, value: Any) -> float | int:
    """Return a claim's number: integers (counts) stay integers, anything else is a finite float."""
    if np.ndim(value) != 0:
        raise TypeError(f"{name} must be a scalar (reduce an array first), got shape {np.shape(value)}")
    if isinstance(value, (bool, np.bool_, numbers.Integral)) or np.issubdtype(np.asarray(value).dtype, np.integer):
        return int(value)
    return v.real_scalar(name, value)


def _check_bound(op: str, bound: Any):
    if op not in OPERATORS:
        raise ValueError(f"op must be one of {', '.join(map(repr, OPERATORS))}, got {op!r}")
    if op == "in":
        if not (isinstance(bound, (tuple, list)) and len(bound) == 2):
            raise TypeError(f"bound of op 'in' must be a pair (low, high), got {bound!r}")
        low, high = _scalar("bound[0]", bound[0]), _scalar("bound[1]", bound[1])
        if not low <= high:
            raise ValueError(f"bound of op 'in' must have low <= high, got ({low}, {high})")
        return [low, high]
    return _scalar("bound", bound)


def _holds(value: float, op: str, bound) -> bool:
    if op == "in":
        return bound[0] <= value <= bound[1]
    return {
        "<": value < bound,
        "<=": value <= bound,
        ">": value > bound,
        ">=": value >= bound,
        "==": value == bound,
    }[op]


def _format(x) -> str:
    if isinstance(x, list):
        return f"[{_format(x[0])}, {_format(x[1])}]"
    return str(x) if isinstance(x, int) else f"{x:.4g}"


def claim(claim_id: str, value: Any, op: str, bound: Any, *, says: str, loose: str | None = None):
    """State a measured claim: assert ``value op bound``, show the verdict, record the observation.

    Parameters
    ----------
    claim_id
        Unique in the book, lower case with hyphens, prefixed like the chapter's glue names
        (``"gauss-sgd-amp-median"``).
    value
        The measured quantity the sentence rests on: a real scalar (reduce arrays first: the
        smallest share, the median deviation, a count); NaN and infinities are refused.
    op
        One of :data:`OPERATORS`.
    bound
        A real scalar, or ``(low, high)`` for ``"in"``.
    says
        The claim in words, as the text states it (shown on the page "How sure is each claim").
    loose
        Why a bound far beyond anything observed is still the right one (e.g. "the text claims only
        the sign"); without it such a claim is flagged on that page.

    Returns
    -------
    None
        (A cell that ends on a claim shows its sentence, not its value: the value depends on the seed.)

    Raises
    ------
    AssertionError
        The claim does not hold (unless the sweep asked to keep going: then it is recorded as such).
    TypeError, ValueError
        A malformed id, value, operator or bound.
    """
    if not isinstance(claim_id, str) or not _ID.match(claim_id):
        raise ValueError(f"claim_id must be lower-case words joined by hyphens, got {claim_id!r}")
    if not isinstance(says, str) or not says.strip():
        raise TypeError(f"says must be a non-empty sentence, got {says!r}")
    if loose is not None and (not isinstance(loose, str) or not loose.strip()):
        raise TypeError(f"loose must be a non-empty reason or None, got {loose!r}")
    value = _scalar("value", value)
    bound = _check_bound(op, bound)
    holds = _holds(value, op, bound)
    seed = page.seed()
    log = os.environ.get(LOG_ENV, "").strip()
    if log:
        line = {
            "id": claim_id,
            "value": value,
            "op": op,
            "bound": bound,
            "holds": holds,
            "seed": seed,
            "chapter": os.environ.get(CHAPTER_ENV) or None,
            "says": says,
            "loose": loose,
        }
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(line) + "\n")
    mark = "\u2714" if holds else "\u2718"
    page.show_measured(
        f"{mark} {claim_id}: {_format(value)} {op} {_format(bound)} (seed {seed})",
        sentence(claim_id, says, value, op, bound, seed, holds),
    )
    if not holds and os.environ.get(KEEP_GOING_ENV, "") != "1":
        stated = f"{_format(value)} {op} {_format(bound)}"
        raise AssertionError(f"claim {claim_id!r} does not hold for seed {seed}: {stated} is false ({says})")


def sentence(claim_id: str, says: str, value, op: str, bound, seed: int, holds: bool) -> str:
    """Write a claim's verdict as the page shows it: its statement, then the measurement behind it.

    "✔ The SGD drift … within 2.5 ‖s.e.‖ — measured 0.849 < 2.5 (seed 0, claim ``gauss-drift-mc``)",
    with the statement's equation references numbered (:func:`localization.book.page.with_references`).

    Parameters
    ----------
    claim_id, says, value, op, bound, seed, holds
        As :func:`claim` checked them.

    Returns
    -------
    str
        MyST Markdown.
    """
    statement = page.with_references(says.strip())
    statement = statement[0].upper() + statement[1:]
    mark = "\u2714" if holds else "\u2718 (fails)"
    measured = f"{_format(value)} {_bound_text(op, bound)}"
    return f"{mark} {statement} \u2014 measured {measured} (seed {seed}, claim `{claim_id}`)"


_CLAIM_CALL = re.compile(r"""\bclaim\(\s*f?["']([a-z0-9{][^"']*)["']""")
_CODE_CELL = re.compile(r"^(`{3,})\{code-cell\}.*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)
_LABEL = re.compile(r"^\(([A-Za-z0-9_\-]+)\)=[ \t]*$", re.MULTILINE)


def _code_cells(text: str) -> str:
    """Return the code cells of a MyST notebook's text (their options and sources, in order), without the prose."""
    return "".join(m.group(0) for m in _CODE_CELL.finditer(text))


def source_hash(path: str | os.PathLike) -> str:
    """Return the SHA-256 of a chapter's code cells.

    It is the record's test of whether what computes a claim changed since (an edit of the prose leaves
    the record current; any edit of a code cell makes it stale).

    Parameters
    ----------
    path : str or os.PathLike
        The chapter's ``.md`` file.

    Returns
    -------
    str
        The hex digest.
    """
    return hashlib.sha256(_code_cells(Path(path).read_text(encoding="utf-8")).encode()).hexdigest()


def _id_pattern(stated: str) -> re.Pattern:
    """Return a pattern of the ids a stated claim id stands for.

    That is the id itself, or, for an f-string id stated in a loop (``f"ica-{slug}-sub"``), every id
    with a lower-case word in place of each ``{...}``.
    """
    parts = re.split(r"\{[^}]*\}", stated)
    return re.compile("[a-z0-9.\\-]+".join(re.escape(part) for part in parts) + "$")


def stated_id(claim_id: str, stated) -> str | None:
    """Return the stated id (or f-string template) among ``stated`` that ``claim_id`` comes from."""
    if claim_id in stated:
        return claim_id
    return next((s for s in stated if "{" in s and _id_pattern(s).match(claim_id)), None)


def claim_ids(path: str | os.PathLike) -> dict[str, str | None]:
    """Return the claim ids a chapter states, in order, each with the label of its check.

    Ids are the ``claim("id", ...)`` calls in its source (an f-string id as its template, see
    :func:`_id_pattern`); the label is that of the nearest ``(label)=`` target above the claim (the check
    the claims page links to).

    Parameters
    ----------
    path : str or os.PathLike
        The chapter's ``.md`` file.

    Returns
    -------
    dict[str, str or None]
        Stated id → label of its check (None without a label above it).
    """
    found: dict[str, str | None] = {}
    text = Path(path).read_text(encoding="utf-8")
    # one pass in the order of the text: a call may span lines (formatted code puts its id on the next)
    events = [(m.start(), "label", m.group(1)) for m in _LABEL.finditer(text)]
    events += [(m.start(), "claim", m.group(1)) for m in _CLAIM_CALL.finditer(text)]
    label = None
    for _, kind, value in sorted(events):
        if kind == "label":
            label = value
        elif value in found:
            raise ValueError(f"{path}: claim id {value!r} is stated twice")
        else:
            found[value] = label
    return found


def sources(record: dict) -> set[str]:
    """Return the chapter sources a record stands for: its own and those it was carried over from.

    A carry-over (``claims_sweep.carry_over``) moves a record to a refactored source after every claim
    came out the same under one seed; a held-out run on a source the record was carried from counts for
    the current source.

    Parameters
    ----------
    record : dict
        A chapter's record (:func:`read_records`).

    Returns
    -------
    set of str
        Source hashes.
    """
    found = {record["source_sha256"]}
    found.update(e["from_source_sha256"] for e in record.get("carried_over", []) if "from_source_sha256" in e)
    return found


def held_out_current(record: dict) -> bool:
    """Tell whether the held-out seeds ran on the record's source (or one it was carried over from).

    Parameters
    ----------
    record : dict
        A chapter's record (:func:`read_records`).

    Returns
    -------
    bool
        Whether a held-out run is recorded for one of :func:`sources`.
    """
    return any(run["source_sha256"] in sources(record) for run in record.get("held_out_runs", []))


def read_records(directory: str | os.PathLike = RECORD_DIR) -> dict[str, dict]:
    """Return every chapter record in ``directory`` (``<chapter>.json``), by chapter name.

    Parameters
    ----------
    directory : str or os.PathLike
        The record directory (default :data:`RECORD_DIR`).

    Returns
    -------
    dict[str, dict]
        Chapter name → its record.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise FileNotFoundError(f"no claims record at {directory}: run 'python -m localization claims'")
    return {path.stem: json.loads(path.read_text(encoding="utf-8")) for path in sorted(directory.glob("*.json"))}


@dataclass(frozen=True)
class ClaimSummary:
    """One row of the page "How sure is each claim"."""

    claim_id: str
    chapter: str
    says: str
    op: str
    bound: Any
    seeds: tuple[int, ...]
    development: int  # number of recorded development seeds (DEVELOPMENT_SEEDS)
    held_out: int  # number of recorded held-out seeds (HELD_OUT_SEEDS)
    low: float
    high: float
    failures: tuple[int, ...]
    gap: float  # nearest observed distance from the bound (negative: a seed where it fails)
    spread: float  # standard deviation over seeds
    margin: float  # gap / spread (inf when the value does not vary over seeds)
    loose: bool
    loose_reason: str | None
    stale: bool  # the chapter changed after the record was written


def _gaps(values: np.ndarray, op: str, bound) -> np.ndarray:
    if op == "in":
        return np.minimum(values - bound[0], bound[1] - values)
    if op in ("<", "<="):
        return bound - values
    if op in (">", ">="):
        return values - bound
    return -np.abs(values - bound)  # "==": 0 when it holds


def summarise(records: dict[str, dict], book_dir: str | os.PathLike | None = None) -> list[ClaimSummary]:
    """Return one :class:`ClaimSummary` per recorded claim, chapter by chapter.

    With ``book_dir``, a claim is marked stale when its chapter's code cells no longer have the
    recorded hash (:func:`source_hash`).

    Parameters
    ----------
    records : dict[str, dict]
        As :func:`read_records` returns.
    book_dir : str or os.PathLike or None
        The chapters' directory, for the staleness check.

    Returns
    -------
    list[ClaimSummary]
        One row per claim.
    """
    rows = []
    for chapter, record in records.items():
        stale = False
        if book_dir is not None:
            source = Path(book_dir) / f"{chapter}.md"
            stale = not source.exists() or source_hash(source) != record.get("source_sha256")
        for claim_id, entry in record["claims"].items():
            observations = entry["observations"]
            values = np.array([o["value"] for o in observations], dtype=float)
            bound = observations[-1]["bound"]
            bound_arr = np.array(bound, dtype=float)
            gaps = _gaps(values, entry["op"], bound_arr)
            gap = float(gaps.min())
            spread = float(np.std(values, ddof=1)) if len(values) > 1 else 0.0
            margin = math.inf if spread == 0 else gap / spread
            scale = max(float(np.max(np.abs(bound_arr))), abs(float(np.median(values))))
            loose = entry["op"] != "==" and gap > LOOSE_SPREADS * spread and gap > LOOSE_FRACTION * scale
            rows.append(
                ClaimSummary(
                    claim_id=claim_id,
                    chapter=chapter,
                    says=entry["says"],
                    op=entry["op"],
                    bound=bound,
                    seeds=tuple(o["seed"] for o in observations),
                    development=sum(o["seed"] in DEVELOPMENT_SEEDS for o in observations),
                    held_out=sum(o["seed"] in HELD_OUT_SEEDS for o in observations),
                    low=float(values.min()),
                    high=float(values.max()),
                    failures=tuple(o["seed"] for o in observations if not o["holds"]),
                    gap=gap,
                    spread=spread,
                    margin=margin,
                    loose=loose,
                    loose_reason=entry.get("loose"),
                    stale=stale,
                )
            )
    return rows


def observed_range(claim_id: str, records: dict[str, dict] | None = None) -> tuple[float, float, int]:
    """Return (smallest, largest, number of seeds) of a claim's value over the recorded seeds."""
    records = read_records() if records is None else records
    for record in records.values():
        if claim_id in record["claims"]:
            values = [o["value"] for o in record["claims"][claim_id]["observations"]]
            return min(values), max(values), len(values)
    raise KeyError(f"claim {claim_id!r} is not in the record: run 'python -m localization claims'")


def glue_range(name: str, claim_id: str, fmt: str = ".3g", records: dict[str, dict] | None = None) -> str:
    """Glue ``"low–high over N seeds"`` of a claim's recorded values for the prose and return the text.

    It is a measured glue: the record changes when the sweep is re-run.

    Parameters
    ----------
    name : str
        The glue name.
    claim_id : str
        The claim.
    fmt : str
        Format of the two numbers.
    records : dict[str, dict] or None
        As :func:`read_records` returns (default: read them).

    Returns
    -------
    str
        The glued text.
    """
    try:
        low, high, count = observed_range(claim_id, records)
    except KeyError:
        if not os.environ.get(LOG_ENV, "").strip():
            raise
        # the sweep that writes the record executes the chapter before the claim is in it
        text = "(not yet recorded)"
        page.glue_measured(name, text)
        return text
    text = f"{low:{fmt}}\u2013{high:{fmt}} over {count} seeds"
    page.glue_measured(name, text)
    return text


def _bound_text(op: str, bound) -> str:
    return f"in [{_format(bound[0])}, {_format(bound[1])}]" if op == "in" else f"{op} {_format(bound)}"


def _status(row: ClaimSummary) -> str:
    if row.failures:
        held = [s for s in row.failures if s in HELD_OUT_SEEDS]
        where = "**fails on held-out seeds**" if held else "**fails** for seeds"
        return f"{where} {', '.join(map(str, row.failures))}"
    if row.loose:
        return f"loose: {row.loose_reason}" if row.loose_reason else "**loose**, no reason given"
    return "holds"


def markdown_tables(rows: list[ClaimSummary], book_dir: str | os.PathLike) -> dict[str, str]:
    """Return the page's Markdown (MyST) table of each chapter's claims.

    Columns: claim, bound, range over seeds, margin, status; each claim links to the check that
    states it by a ``{ref}`` role.

    Parameters
    ----------
    rows : list[ClaimSummary]
        As :func:`summarise` returns.
    book_dir : str or os.PathLike
        The chapters' directory (for the check labels).

    Returns
    -------
    dict[str, str]
        Chapter → its Markdown table.
    """
    tables: dict[str, str] = {}
    labels: dict[str, dict[str, str | None]] = {}
    for row in rows:
        if row.chapter not in labels:
            source = Path(book_dir) / f"{row.chapter}.md"
            labels[row.chapter] = claim_ids(source) if source.exists() else {}
        stated = stated_id(row.claim_id, labels[row.chapter])
        label = labels[row.chapter].get(stated) if stated else None
        # the page's Markdown is parsed as MyST: a role links to the check's label (or to the chapter)
        link = f"{{ref}}`{row.claim_id} <{label}>`" if label else f"{{doc}}`{row.claim_id} <{row.chapter}>`"
        margin = "constant" if math.isinf(row.margin) else f"{row.margin:.1f} sd"
        stale = " (chapter changed since the record)" if row.stale else ""
        observed = f"{_format(row.low)} to {_format(row.high)} ({row.development} dev., {row.held_out} held-out)"
        cells = [
            f"{link}: {page.with_references(row.says)}{stale}",
            _bound_text(row.op, row.bound),
            observed,
            margin,
            _status(row),
        ]
        line = "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"
        if row.chapter not in tables:
            tables[row.chapter] = "| claim | bound | observed | margin | status |\n| --- | --- | --- | --- | --- |\n"
        tables[row.chapter] += line + "\n"
    return tables


from localization.book.claim_revisions import REVISIONS, read_revisions  # noqa: E402
