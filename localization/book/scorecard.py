"""The paper's scorecard: every claim of the paper, its settings, a verdict and the check that decides it.

The rows are data, ``book/data/scorecard.yaml``, one per claim of Lufkin, Saxe & Grant (NeurIPS 2024):
each numbered result, each figure's message and each quantitative sentence of Sections 2–4. This
module reads and validates that file (:func:`load`, :func:`validate`), counts the verdicts
(:func:`counts`) and renders the tables of the page ``book/scorecard.md`` (:func:`markdown_table`),
with a ``{ref}`` link to each row's check cell and a link to the paper's public code at its commit
(:func:`code_url`). :func:`check_targets` lists the check labels of the chapters, so that a test can
fail on a row whose check does not exist.

Verdicts (:data:`VERDICTS`): *reproduced* (the check confirms the claim as stated), *reproduced with
caveats* (it holds, with a qualification in the row's reason), *corrected* (it holds once a formula,
number or hypothesis is fixed; the fix is on the errata page), *contradicted* (it does not hold),
*not testable here* (no check can decide it in this book; the reason says why).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

__all__ = [
    "VERDICTS",
    "PARTS",
    "FIELDS",
    "REPOSITORY",
    "DEFAULT_COMMIT",
    "SCORECARD",
    "Code",
    "Row",
    "validate",
    "load",
    "counts",
    "check_targets",
    "code_url",
    "markdown_table",
]

#: The allowed verdicts, in the order the page counts them.
VERDICTS = ("reproduced", "reproduced with caveats", "corrected", "contradicted", "not testable here")
#: The paper's parts the rows are grouped under, in the page's order.
PARTS = (
    "§1 Introduction",
    "§2 Modeling approach",
    "§3 Theoretical results",
    "§4 Experimental results",
    "App. A–B",
    "App. C (proofs)",
    "App. D (Fig. 8)",
)
#: The fields every row must have.
FIELDS = ("id", "part", "section", "statement", "paper", "code", "book", "verdict", "reason", "check")
#: The field every row not *reproduced* must have: one line on what the paper's advocate argued and why the
#: verdict stands (a reviewer who saw only the paper, the row and the check argued the paper's side).
ADVOCATE = "advocate"
#: The paper's public code.
REPOSITORY = "https://github.com/leonlufkin/Localization"
#: The commit the book cites unless a row names another.
DEFAULT_COMMIT = "5ebb565265d429f60e33e220391007144cf0b490"
#: The data file (in a source checkout).
SCORECARD = Path(__file__).resolve().parents[2] / "book" / "data" / "scorecard.yaml"

_ID = re.compile(r"[a-z0-9][a-z0-9.\-]*")
_CHECK = re.compile(r"check-[A-Za-z0-9][A-Za-z0-9\-]*")
_LINES = re.compile(r"(\d+)(?:-(\d+))?")
_COMMIT = re.compile(r"[0-9a-f]{40}")
_TARGET = re.compile(r"^\((check-[^)\s]+)\)=\s*$", re.M)
_CODE_KEYS = ("settings", "file", "lines", "commit", "label")


@dataclass(frozen=True)
class Code:
    """Where and how the paper's public code does what a claim describes.

    Attributes
    ----------
    settings : str
        The settings the code uses ("—" when the code does not concern the claim).
    file : str or None
        Path inside the repository. lines : str or None, ``"12"`` or ``"12-20"``.
    commit : str
        40 hex digits (:data:`DEFAULT_COMMIT` unless given).
    label : str or None
        Link text for a file whose name is too long to show (default: the file's name).
    """

    settings: str
    file: str | None = None
    lines: str | None = None
    commit: str = DEFAULT_COMMIT
    label: str | None = None


@dataclass(frozen=True)
class Row:
    """One claim of the paper (the fields of :data:`FIELDS`; ``check`` is None only when not testable)."""

    id: str
    part: str
    section: str
    statement: str
    paper: str
    code: Code
    book: str
    verdict: str
    reason: str
    check: str | None
    advocate: str | None = None


def _text(raw: Mapping, field: str, where: str) -> str:
    value = raw.get(field)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{where}: field {field!r} must be a non-empty string, got {value!r}")
    return value.strip()


def _code(raw: object, where: str) -> Code:
    if not isinstance(raw, Mapping):
        raise ValueError(f"{where}: field 'code' must be a mapping with 'settings', got {raw!r}")
    unknown = sorted(set(raw) - set(_CODE_KEYS))
    if unknown:
        raise ValueError(f"{where}: field 'code' has unknown keys {unknown} (allowed: {list(_CODE_KEYS)})")
    settings = _text(raw, "settings", f"{where}, code")
    file = raw.get("file")
    if file is not None and (not isinstance(file, str) or not file.strip() or file.startswith("/")):
        raise ValueError(f"{where}: field 'code.file' must be a relative path in the repository, got {file!r}")
    lines = raw.get("lines")
    if lines is not None:
        lines = str(lines)
        match = _LINES.fullmatch(lines)
        if file is None or match is None or (match.group(2) and int(match.group(2)) < int(match.group(1))):
            raise ValueError(f"{where}: field 'code.lines' must be 'N' or 'N-M' (M >= N) with a file, got {lines!r}")
    commit = raw.get("commit", DEFAULT_COMMIT)
    if not isinstance(commit, str) or not _COMMIT.fullmatch(commit):
        raise ValueError(f"{where}: field 'code.commit' must be 40 lower-case hex digits, got {commit!r}")
    label = raw.get("label")
    if label is not None and (not isinstance(label, str) or not label.strip()):
        raise ValueError(f"{where}: field 'code.label' must be a non-empty string, got {label!r}")
    return Code(settings, file, lines, commit, label)


def validate(data: object) -> list[Row]:
    """Validate the scorecard's data (the parsed YAML) and return its rows.

    Parameters
    ----------
    data : object
        A mapping with a list ``rows`` of mappings, each with the fields of :data:`FIELDS`.

    Returns
    -------
    list[Row]
        The rows, in the file's order.

    Raises
    ------
    ValueError
        Naming the row (its id, or its position) and the field: a missing or empty field, an unknown
        field, a verdict not in :data:`VERDICTS`, a part not in :data:`PARTS`, a check that is not a
        ``check-...`` label (or is missing although the verdict is testable), a malformed code
        reference, or a duplicate id.
    """
    if not isinstance(data, Mapping) or not isinstance(data.get("rows"), list) or not data["rows"]:
        raise ValueError("the scorecard must be a mapping with a non-empty list 'rows'")
    rows: list[Row] = []
    seen: set[str] = set()
    for position, raw in enumerate(data["rows"]):
        where = f"row {position}"
        if not isinstance(raw, Mapping):
            raise ValueError(f"{where}: must be a mapping of the fields {list(FIELDS)}, got {raw!r}")
        if isinstance(raw.get("id"), str):
            where = f"row {position} ({raw['id']!r})"
        for field in FIELDS:
            if field not in raw:
                raise ValueError(f"{where}: missing field {field!r}")
        unknown = sorted(set(raw) - set(FIELDS) - {ADVOCATE})
        if unknown:
            raise ValueError(f"{where}: unknown fields {unknown} (allowed: {list(FIELDS) + [ADVOCATE]})")
        row_id = _text(raw, "id", where)
        if not _ID.fullmatch(row_id):
            raise ValueError(f"{where}: field 'id' must be lower-case letters, digits, '.' and '-', got {row_id!r}")
        if row_id in seen:
            raise ValueError(f"{where}: field 'id' duplicates an earlier row's id {row_id!r}")
        seen.add(row_id)
        part = _text(raw, "part", where)
        if part not in PARTS:
            raise ValueError(f"{where}: field 'part' must be one of {list(PARTS)}, got {part!r}")
        verdict = _text(raw, "verdict", where)
        if verdict not in VERDICTS:
            raise ValueError(f"{where}: field 'verdict' must be one of {list(VERDICTS)}, got {verdict!r}")
        check = raw["check"]
        if check is None:
            if verdict != "not testable here":
                raise ValueError(f"{where}: field 'check' is required for the verdict {verdict!r}")
        elif not isinstance(check, str) or not _CHECK.fullmatch(check):
            raise ValueError(f"{where}: field 'check' must be a label 'check-...' (or null), got {check!r}")
        advocate = _text(raw, ADVOCATE, where) if verdict != "reproduced" or ADVOCATE in raw else None
        rows.append(
            Row(
                id=row_id,
                part=part,
                section=_text(raw, "section", where),
                statement=_text(raw, "statement", where),
                paper=_text(raw, "paper", where),
                code=_code(raw["code"], where),
                book=_text(raw, "book", where),
                verdict=verdict,
                reason=_text(raw, "reason", where),
                check=check,
                advocate=advocate,
            )
        )
    return rows


def load(path: str | Path | None = None) -> list[Row]:
    """Read and validate the scorecard file.

    Parameters
    ----------
    path : str or Path, optional
        The YAML file (default :data:`SCORECARD`, ``book/data/scorecard.yaml``).

    Returns
    -------
    list[Row]
        As :func:`validate` returns.

    Raises
    ------
    TypeError
        ``path`` is not a str or a Path.
    FileNotFoundError
        No such file.
    ValueError
        The file is not valid YAML, or a row is invalid (:func:`validate`).
    """
    import yaml

    if path is None:
        path = SCORECARD
    if not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a str or a Path, got {type(path).__name__}")
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"path must name the scorecard file, got {str(path)!r} (no such file)")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise ValueError(f"path {path.name!r} is not valid YAML: {error}") from error
    return validate(data)


def counts(rows: Sequence[Row]) -> dict[str, int]:
    """Return the number of rows of each verdict, in the order of :data:`VERDICTS` (zeros included).

    Parameters
    ----------
    rows : sequence of Row
        As :func:`load` returns.

    Returns
    -------
    dict[str, int]
        Verdict → number of rows.
    """
    if not all(isinstance(row, Row) for row in rows):
        raise TypeError("rows must be Row objects (as scorecard.load returns)")
    return {verdict: sum(row.verdict == verdict for row in rows) for verdict in VERDICTS}


def check_targets(book_dir: str | Path) -> dict[str, list[str]]:
    """Return every ``(check-...)=`` target of the chapters and the chapters that define it.

    Parameters
    ----------
    book_dir : str or Path
        The directory of the chapters (``book``); its ``*.md`` files are read.

    Returns
    -------
    dict[str, list[str]]
        Label → the chapters (file stems) with that target; a label with two chapters is ambiguous.
    """
    if not isinstance(book_dir, (str, Path)):
        raise TypeError(f"book_dir must be a str or a Path, got {type(book_dir).__name__}")
    if not Path(book_dir).is_dir():
        raise ValueError(f"book_dir must be a directory, got {str(book_dir)!r}")
    targets: dict[str, list[str]] = {}
    for page in sorted(Path(book_dir).glob("*.md")):
        for label in _TARGET.findall(page.read_text(encoding="utf-8")):
            targets.setdefault(label, []).append(page.stem)
    return targets


def code_url(code: Code) -> str | None:
    """Return the address of a code reference at its commit (lines anchored), or None without a file.

    Parameters
    ----------
    code : Code
        A row's code reference.

    Returns
    -------
    str or None
        ``https://github.com/leonlufkin/Localization/blob/<commit>/<file>#L12-L20``, the path
        percent-encoded (notebooks are shown as plain text, ``?plain=1``, so that their lines can be
        anchored).
    """
    if not isinstance(code, Code):
        raise TypeError(f"code must be a scorecard.Code, got {type(code).__name__}")
    if code.file is None:
        return None
    url = f"{REPOSITORY}/blob/{code.commit}/{quote(code.file)}"
    if code.lines:
        first, _, last = code.lines.partition("-")
        plain = "?plain=1" if code.file.endswith(".ipynb") else ""
        url += f"{plain}#L{first}" + (f"-L{last}" if last else "")
    return url


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _code_cell(code: Code) -> str:
    url = code_url(code)
    if url is None:
        return _cell(code.settings)
    name = code.label or Path(code.file).name
    if len(name) > 32:
        name = "file"
    lines = ""
    if code.lines:
        first, _, last = code.lines.partition("-")
        lines = f" L{first}" + (f"–{last}" if last else "")
    commit = "" if code.commit == DEFAULT_COMMIT else f" @ `{code.commit[:7]}`"
    link = f"[{name}{lines}]({url}){commit}"
    return _cell(link if code.settings == "—" else f"{code.settings}; {link}")


def markdown_table(rows: Sequence[Row], part: str) -> str:
    """Return the page's MyST Markdown table of one part of the paper.

    Columns: claim (section and statement), the paper's settings, the paper's code (settings and a
    link at its commit), the book's settings, the verdict with its reason, and the check (a
    ``{ref}`` link to the check cell; "—" when not testable).

    Parameters
    ----------
    rows : sequence of Row
        As :func:`load` returns.
    part : str
        One of :data:`PARTS`.

    Returns
    -------
    str
        The table (header and one line per row of that part, in the file's order).

    Raises
    ------
    ValueError
        ``part`` is not one of :data:`PARTS`, or no row belongs to it.
    """
    if part not in PARTS:
        raise ValueError(f"part must be one of {list(PARTS)}, got {part!r}")
    if not all(isinstance(row, Row) for row in rows):
        raise TypeError("rows must be Row objects (as scorecard.load returns)")
    chosen = [row for row in rows if row.part == part]
    if not chosen:
        raise ValueError(f"part {part!r} has no row")
    lines = [
        "| Claim | Paper's settings | Paper's code | Book's settings | Verdict | Check |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for row in chosen:
        check = f"{{ref}}`check <{row.check}>`" if row.check else "—"
        cells = [
            f"**{_cell(row.section)}**: {_cell(row.statement)}",
            _cell(row.paper),
            _code_cell(row.code),
            _cell(row.book),
            f"**{row.verdict}**: {_cell(row.reason)}" + (f" *Advocate:* {_cell(row.advocate)}" if row.advocate else ""),
            check,
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
