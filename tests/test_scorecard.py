"""The paper's scorecard (book/data/scorecard.yaml, rendered by book/scorecard.md).

A row cannot lose its check silently: every check label must be a ``(check-...)=`` target of exactly
one chapter; every error the errata page lists against the paper must be a row, corrected or
contradicted, with the same check; the counts at the top of the page must be the file's.
"""

import copy
import re
from pathlib import Path

import nbformat
import pytest
import yaml

from localization.book import scorecard

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
PAGE = BOOK / "scorecard.md"
REFERENCE = ROOT / "tests" / "references" / "scorecard.ipynb"
GLUE_TEXT = "application/papermill.record/text/plain"


@pytest.fixture(scope="module")
def rows():
    return scorecard.load()


@pytest.fixture(scope="module")
def raw():
    return yaml.safe_load(scorecard.SCORECARD.read_text(encoding="utf-8"))


def _paper_errata():
    """(file, where, checks) of every row of book/errata/*_errors.md whose source is the paper.

    "Where" starts with "paper" (the paper's text); rows about the paper's code only ("paper's public
    code", "paper's code") and about the notes are left out.
    """
    out = []
    for path in sorted((BOOK / "errata").glob("*_errors.md")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.startswith("| ") or line.startswith("| Where") or line.startswith("| ---"):
                continue
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            where = cells[0]
            if not where.startswith("paper") or where.startswith("paper's"):
                continue
            out.append((path.name, where, re.findall(r"<(check-[^>]+)>", cells[-1])))
    return out


def test_the_file_is_the_whole_ledger(rows):
    assert len(rows) >= 60
    assert {row.part for row in rows} == set(scorecard.PARTS)
    for name in ("Lemma 3.1", "Claim 3.2", "Proposition 3.3", "Lemma B.1"):
        assert any(row.section.startswith(name) or f"; {name}" in row.section for row in rows), name
    for figure in range(1, 9):
        assert any(re.search(rf"Fig\. {figure}\b", row.section) for row in rows), f"Fig. {figure}"


def test_every_check_label_is_a_target_of_exactly_one_chapter(rows):
    targets = scorecard.check_targets(BOOK)
    assert len(targets) > 100
    dangling = [(row.id, row.check) for row in rows if row.check and row.check not in targets]
    assert not dangling, f"rows linking to checks that do not exist: {dangling}"
    ambiguous = {row.check: targets[row.check] for row in rows if row.check and len(targets[row.check]) != 1}
    assert not ambiguous, f"check labels defined in more than one chapter: {ambiguous}"
    assert "scorecard" not in {chapter for chapters in targets.values() for chapter in chapters}


def test_verdicts_ids_and_checks(rows):
    assert {row.verdict for row in rows} <= set(scorecard.VERDICTS)
    ids = [row.id for row in rows]
    assert len(ids) == len(set(ids))
    for row in rows:
        assert (row.check is None) == (row.verdict == "not testable here") or row.check, row.id
        if row.check is None:
            assert row.reason, row.id


def test_every_paper_erratum_is_a_corrected_or_contradicted_row(rows):
    errata = _paper_errata()
    assert len(errata) >= 21, errata  # 21 after the advocates and referees moved 9 rows to the notes (issue 33)
    decided = {}
    for row in rows:
        if row.verdict in ("corrected", "contradicted"):
            decided.setdefault(row.check, []).append(row.id)
    missing = [(name, where, checks) for name, where, checks in errata if not any(c in decided for c in checks)]
    assert not missing, f"errata against the paper without a corrected/contradicted row with their check: {missing}"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r.__setitem__("verdict", "confirmed"), r"row 0 \('fig1-biology'\): field 'verdict' must be one of"),
        (lambda r: r.pop("reason"), r"row 0 \('fig1-biology'\): missing field 'reason'"),
        (lambda r: r.__setitem__("part", "§9"), r"row 0 \('fig1-biology'\): field 'part' must be one of"),
        (lambda r: r.__setitem__("statement", " "), r"field 'statement' must be a non-empty string"),
        (lambda r: r.__setitem__("extra", 1), r"unknown fields \['extra'\]"),
        (lambda r: r.__setitem__("code", {"file": "a.py"}), r"field 'settings' must be a non-empty string"),
        (lambda r: r.pop("advocate"), r"row 0 \('fig1-biology'\): field 'advocate' must be a non-empty string"),
    ],
)
def test_a_bad_row_names_its_row_and_field(raw, change, message):
    data = copy.deepcopy(raw)
    change(data["rows"][0])
    with pytest.raises(ValueError, match=message):
        scorecard.validate(data)


def test_a_duplicate_id_and_a_missing_check_are_refused(raw):
    data = copy.deepcopy(raw)
    data["rows"].append(copy.deepcopy(data["rows"][1]))
    with pytest.raises(ValueError, match=r"field 'id' duplicates an earlier row's id 'fig1-scm-2d'"):
        scorecard.validate(data)
    data = copy.deepcopy(raw)
    data["rows"][1]["check"] = None
    with pytest.raises(ValueError, match=r"row 1 \('fig1-scm-2d'\): field 'check' is required"):
        scorecard.validate(data)
    data = copy.deepcopy(raw)
    data["rows"][1]["code"] = {"settings": "x", "file": "a.py", "lines": "9-3"}
    with pytest.raises(ValueError, match=r"field 'code.lines'"):
        scorecard.validate(data)
    with pytest.raises(ValueError, match="non-empty list 'rows'"):
        scorecard.validate({"rows": []})


def test_load_validates_its_argument(tmp_path):
    with pytest.raises(TypeError, match="path must be a str or a Path"):
        scorecard.load(3)
    with pytest.raises(FileNotFoundError, match="no such file"):
        scorecard.load(tmp_path / "none.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("rows: [\n", encoding="utf-8")
    with pytest.raises(ValueError, match="not valid YAML"):
        scorecard.load(bad)


def test_code_links_point_at_the_cited_commit():
    code = scorecard.Code("x", "localization/analyses/ipr_kurtosis.py", "27-34")
    assert scorecard.code_url(code) == (
        "https://github.com/leonlufkin/Localization/blob/5ebb565265d429f60e33e220391007144cf0b490/"
        "localization/analyses/ipr_kurtosis.py#L27-L34"
    )
    notebook = scorecard.Code("x", "notebooks/a.ipynb", "394", "0" * 40)
    assert scorecard.code_url(notebook).endswith("/blob/" + "0" * 40 + "/notebooks/a.ipynb?plain=1#L394")
    assert scorecard.code_url(scorecard.Code("—")) is None
    assert "%5B" in scorecard.code_url(scorecard.Code("x", "w/a[1].npz"))


def test_tables_link_every_check_and_keep_cells_short(rows):
    for part in scorecard.PARTS:
        table = scorecard.markdown_table(rows, part)
        lines = table.strip().splitlines()
        chosen = [row for row in rows if row.part == part]
        assert len(lines) == 2 + len(chosen)
        for row, line in zip(chosen, lines[2:], strict=True):
            cells = re.split(r"(?<!\\)\|", line)[1:-1]
            assert len(cells) == 6, line
            if row.check:
                assert f"{{ref}}`check <{row.check}>`" in line
            # no unbreakable word longer than a phone's column (links' addresses aside)
            visible = re.sub(r"\]\([^)]*\)", "]", line)
            assert max(map(len, visible.split())) <= 40, (row.id, max(visible.split(), key=len))
    with pytest.raises(ValueError, match="part must be one of"):
        scorecard.markdown_table(rows, "§9")


def test_counts_agree_with_the_page_and_its_reference(rows):
    counts = scorecard.counts(rows)
    assert sum(counts.values()) == len(rows) and list(counts) == list(scorecard.VERDICTS)
    text = PAGE.read_text(encoding="utf-8")
    for verdict in scorecard.VERDICTS:
        assert f"{{glue:text}}`sc-{verdict.replace(' ', '-')}`" in text, verdict
    for part in scorecard.PARTS:
        assert f'"{part}"' in text, part
    rendered = "".join(scorecard.markdown_table(rows, part) for part in scorecard.PARTS)
    for verdict, count in counts.items():
        assert len(re.findall(rf"\| \*\*{verdict}\*\*:", rendered)) == count, verdict
    # the executed page (the nbval reference) glued the file's counts, in the first cell's order:
    # the number of rows, then one count per verdict (the reference keeps the values, not the names)
    reference = nbformat.read(REFERENCE, as_version=4)
    glued = [
        out["data"][GLUE_TEXT]
        for cell in reference.cells
        for out in cell.get("outputs", [])
        if GLUE_TEXT in out.get("data", {})
    ]
    expected = [str(len(rows))] + [str(count) for count in counts.values()]
    assert glued == expected, "stale tests/references/scorecard.ipynb: `make references CHAPTERS=book/scorecard.md`"


def test_every_verdict_against_the_paper_carries_its_advocate(rows):
    for row in rows:
        if row.verdict != "reproduced":
            assert row.advocate and len(row.advocate) <= 400, row.id
    for part in scorecard.PARTS:
        lines = scorecard.markdown_table(rows, part).strip().splitlines()[2:]
        chosen = [row for row in rows if row.part == part]
        for row, line in zip(chosen, lines, strict=True):
            assert ("*Advocate:*" in line) == bool(row.advocate), row.id


def test_every_errata_row_carries_its_advocate():
    for path in sorted((BOOK / "errata").glob("*.md")):
        rows = [line for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("| ")][2:]
        assert rows, path.name
        for k, line in enumerate(rows, 1):
            assert "*Advocate:*" in line, f"{path.name} row {k} has no advocate's line"
