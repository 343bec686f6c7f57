"""The claim helper, the records of the sweep and the page built from them; and the book's claims
against their record: every claim a chapter states was recorded under the ten development seeds
100-109 and the fresh held-out seeds, and held under every one; the revisions after held-out runs."""

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from localization import book
from localization.book import claims, claims_sweep

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"


@pytest.fixture
def shown(monkeypatch):
    out = []
    monkeypatch.setattr("IPython.display.display", lambda obj, raw, metadata: out.append((obj, metadata)))
    return out


def test_claim_asserts_shows_and_returns(shown, monkeypatch):
    monkeypatch.delenv(claims.LOG_ENV, raising=False)
    assert book.claim("t-a", np.float32(0.25), "<", 0.5, says="a is small") is None  # nothing to print
    book.claim("t-b", np.int64(3), "==", 3, says="three")
    book.claim("t-c", 0.5, "in", (0.5, 1.0), says="closed interval")
    (text, meta), *_ = shown
    assert text["text/plain"].startswith("\u2714 t-a: 0.25 < 0.5") and book.is_measured_output({"metadata": meta})
    with pytest.raises(AssertionError, match=r"claim 't-d' does not hold for seed \d+: 0.75 < 0.5"):
        book.claim("t-d", 0.75, "<", 0.5, says="d is small")


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        (("t-x", float("nan"), "<", 1.0), ValueError, "value must be finite"),
        (("t-x", float("inf"), "<", 1.0), ValueError, "value must be finite"),
        (("t-x", np.ones(3), "<", 1.0), TypeError, "scalar"),
        (("t-x", "0.5", "<", 1.0), TypeError, "real number"),
        (("t-x", 0.5, "=<", 1.0), ValueError, "op must be one of"),
        (("t-x", 0.5, "in", 1.0), TypeError, "pair"),
        (("t-x", 0.5, "in", (2.0, 1.0)), ValueError, "low <= high"),
        (("t-x", 0.5, "<", float("nan")), ValueError, "bound must be finite"),
        (("T X", 0.5, "<", 1.0), ValueError, "claim_id"),
    ],
)
def test_claim_rejects_bad_input(shown, args, error, match):
    with pytest.raises(error, match=match):
        book.claim(*args, says="x")


def test_claim_needs_a_statement(shown):
    with pytest.raises(TypeError, match="says"):
        book.claim("t-x", 0.5, "<", 1.0, says=" ")


def test_claim_records_and_keeps_going_in_a_sweep(shown, monkeypatch, tmp_path):
    log = tmp_path / "log.jsonl"
    monkeypatch.setenv(claims.LOG_ENV, str(log))
    monkeypatch.setenv(claims.KEEP_GOING_ENV, "1")
    monkeypatch.setenv(claims.CHAPTER_ENV, "demo")
    monkeypatch.setenv(book.SEED_ENV, "104")
    book.claim("t-a", 0.3, ">", 0.5, says="a is large", loose=None)  # fails, recorded, no raise
    book.claim("t-b", 2, "in", [1, 3], says="b in range")
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert [(x["id"], x["holds"], x["seed"], x["chapter"]) for x in lines] == [
        ("t-a", False, 104, "demo"),
        ("t-b", True, 104, "demo"),
    ]
    assert lines[1]["bound"] == [1, 3] and shown[0][0]["text/plain"].startswith("\u2718")


def _record(values, op, bound, loose=None, seeds=None, source_sha256="x"):
    seeds = list(range(100, 100 + len(values))) if seeds is None else seeds
    holds = {">": lambda v: v > bound, "==": lambda v: v == bound, "in": lambda v: bound[0] <= v <= bound[1]}[op]
    observations = [
        {"seed": s, "value": v, "bound": bound, "holds": holds(v)} for s, v in zip(seeds, values, strict=True)
    ]
    entry = {"says": "s", "op": op, "loose": loose, "observations": observations}
    return {"chapter": "demo", "source_sha256": source_sha256, "seeds": seeds, "runs": {}, "claims": {"d-a": entry}}


def test_summary_margin_loose_and_failures():
    values = [0.55, 0.56, 0.57, 0.58]
    (row,) = claims.summarise({"demo": _record(values, ">", 0.5)})
    assert row.low == 0.55 and row.high == 0.58 and row.failures == ()
    assert math.isclose(row.gap, 0.05) and math.isclose(row.margin, 0.05 / np.std(values, ddof=1))
    assert not row.loose  # 0.05 is 10 % of the scale: close enough to the data
    (row,) = claims.summarise({"demo": _record(values, ">", -0.1)})
    assert row.loose and row.loose_reason is None  # 0.65 away: > 5 sd and > 20 % of the scale
    (row,) = claims.summarise({"demo": _record(values, ">", -0.1, loose="only the sign is claimed")})
    assert row.loose and row.loose_reason == "only the sign is claimed"
    (row,) = claims.summarise({"demo": _record([0.4, 0.6], ">", 0.5)})
    assert row.failures == (100,) and row.gap < 0
    (row,) = claims.summarise({"demo": _record([3, 3, 3], "==", 3)})
    assert row.margin == math.inf and not row.loose
    held = claims.HELD_OUT_SEEDS[0]
    (row,) = claims.summarise({"demo": _record([0.2, 0.3, 0.4], "in", [0.0, 1.0], seeds=[3, 104, held])})
    assert math.isclose(row.gap, 0.2) and row.development == 2 and row.held_out == 1


def test_staleness_and_page_tables(tmp_path):
    chapter = tmp_path / "demo.md"
    chapter.write_text('(check-demo)=\n\n```{code-cell}\nbook.claim("d-a", x, ">", 0.5, says="s")\n```\n')
    fresh = _record([0.6, 0.7], ">", 0.5, source_sha256=claims.source_hash(chapter))
    (row,) = claims.summarise({"demo": fresh}, tmp_path)
    assert not row.stale
    (row_stale,) = claims.summarise({"demo": _record([0.6, 0.7], ">", 0.5)}, tmp_path)
    assert row_stale.stale
    chapter.write_text("Prose, edited.\n\n" + chapter.read_text())  # prose: the record stays current
    assert not claims.summarise({"demo": fresh}, tmp_path)[0].stale
    chapter.write_text(chapter.read_text().replace("x, ", "2 * x, "))  # a code cell: stale
    assert claims.summarise({"demo": fresh}, tmp_path)[0].stale
    chapter.write_text(chapter.read_text().replace("2 * x, ", "x, "))
    table = claims.markdown_tables([row], tmp_path)["demo"]
    assert "{ref}`d-a <check-demo>`" in table and "0.6 to 0.7" in table and "| holds |" in table
    assert claims.claim_ids(chapter) == {"d-a": "check-demo"}
    bar = claims.ClaimSummary(**{**row.__dict__, "says": "within 2 |s.e.|"})
    assert "within 2 \\|s.e.\\|" in claims.markdown_tables([bar], tmp_path)["demo"]  # a bar would split the cell
    chapter.write_text(chapter.read_text() * 2)
    with pytest.raises(ValueError, match="stated twice"):
        claims.claim_ids(chapter)


def test_f_string_ids_are_templates(tmp_path):
    chapter = tmp_path / "demo.md"
    chapter.write_text('(check-x)=\nfor slug in s:\n    book.claim(f"ica-{slug}-sub", x, "==", 0, says="s")\n')
    stated = claims.claim_ids(chapter)
    assert stated == {"ica-{slug}-sub": "check-x"}
    assert claims.stated_id("ica-kur10-sub", stated) == "ica-{slug}-sub"
    assert claims.stated_id("ica-kur10-sub-extra", stated) is None
    assert claims.stated_id("ica--sub", stated) is None


def test_glue_range_reads_the_record(shown):
    records = {"demo": _record([0.61, 0.55, 0.58], ">", 0.5)}
    assert claims.glue_range("g", "d-a", ".2f", records) == "0.55\u20130.61 over 3 seeds"
    with pytest.raises(KeyError, match="not in the record"):
        claims.observed_range("missing", records)


def test_glue_range_of_a_claim_not_yet_recorded(shown, monkeypatch, tmp_path):
    records = {"demo": _record([0.61], ">", 0.5)}
    monkeypatch.delenv(claims.LOG_ENV, raising=False)
    with pytest.raises(KeyError, match="not in the record"):
        claims.glue_range("g", "missing", ".2f", records)
    monkeypatch.setenv(claims.LOG_ENV, str(tmp_path / "log.jsonl"))  # inside the sweep that records it
    assert claims.glue_range("g", "missing", ".2f", records) == "(not yet recorded)"


@pytest.mark.parametrize(
    ("text", "seeds"), [("100-103", (100, 101, 102, 103)), ("3,5,8", (3, 5, 8)), ("1-2,7", (1, 2, 7))]
)
def test_parse_seeds(text, seeds):
    assert claims_sweep.parse_seeds(text) == seeds


@pytest.mark.parametrize("text", ["", "a", "5-3", "1,1", "-1"])
def test_parse_seeds_rejects(text):
    with pytest.raises(ValueError, match="seeds"):
        claims_sweep.parse_seeds(text)


# --- the book against its record ------------------------------------------------------------------------

CHAPTERS = claims_sweep.executable_chapters(BOOK)
STATED = {name: claims.claim_ids(BOOK / f"{name}.md") for name in CHAPTERS}


def test_claim_ids_are_unique_in_the_book():
    seen = {}
    for chapter, ids in STATED.items():
        for claim_id in ids:
            assert claim_id not in seen, f"{claim_id} stated in {seen.get(claim_id)} and {chapter}"
            seen[claim_id] = chapter


@pytest.mark.parametrize("chapter", [c for c in CHAPTERS if STATED[c]])
def test_every_claim_is_recorded_under_development_and_held_out_seeds_and_holds(chapter):
    records = claims.read_records()
    assert chapter in records, f"no record of {chapter}: run 'python -m localization claims --chapters {chapter}'"
    rows = {row.claim_id: row for row in claims.summarise({chapter: records[chapter]})}
    digest = claims.source_hash(BOOK / f"{chapter}.md")
    # the held-out seeds ran on this source, or on one it was carried over from (the same claims)
    held_out_ran = records[chapter]["source_sha256"] == digest and claims.held_out_current(records[chapter])
    by_stated = {
        stated: [r for i, r in rows.items() if claims.stated_id(i, {stated: None})] for stated in STATED[chapter]
    }
    missing = sorted(stated for stated, found in by_stated.items() if not found)
    assert not missing, f"{chapter}: claims not in the record: {missing}"
    for row in (r for found in by_stated.values() for r in found):
        claim_id = row.claim_id
        assert row.development >= claims.MIN_DEVELOPMENT, f"{claim_id}: {row.development} development seeds"
        if held_out_ran:  # once the held-out seeds ran on this source, every claim has all of them
            assert row.held_out == len(claims.HELD_OUT_SEEDS), f"{claim_id}: {row.held_out} held-out seeds recorded"
        assert not row.failures, f"{claim_id} fails for seeds {row.failures}"
        assert not (row.loose and not row.loose_reason), f"{claim_id}: loose bound without a reason"
    errors = {seed: run["error"] for seed, run in records[chapter]["runs"].items() if run["error"]}
    assert not errors, f"{chapter} raised under seeds {errors}"


def test_the_claims_page_builds_from_the_record():
    rows = claims.summarise(claims.read_records(), BOOK)
    tables = claims.markdown_tables(rows, BOOK)
    assert rows and set(tables) <= set(CHAPTERS)
    for row in rows:
        assert f"{{ref}}`{row.claim_id} <" in tables[row.chapter] or f"{{doc}}`{row.claim_id} <" in tables[row.chapter]


def test_carry_over_needs_every_claim_unchanged():
    record = _record([0.6, 0.7], ">", 0.5, seeds=[100, 101])
    same = [{"id": "d-a", "op": ">", "value": 0.7 * (1 + 1e-12), "bound": 0.5, "holds": True, "seed": 101}]
    assert claims_sweep.carry_differences(record, 101, same) == []
    moved = [{**same[0], "value": 0.7 * (1 + 1e-6)}]
    (line,) = claims_sweep.carry_differences(record, 101, moved)
    assert line.startswith("d-a: was 0.7")
    assert claims_sweep.carry_differences(record, 101, []) == ["d-a: recorded, not stated now"]
    extra = [*same, {**same[0], "id": "d-b"}]
    assert claims_sweep.carry_differences(record, 101, extra) == ["d-b: stated now, not recorded"]
    flipped = [{**same[0], "op": "<", "holds": False}]
    assert "now <" in claims_sweep.carry_differences(record, 101, flipped)[0]
    wider = [{**same[0], "bound": 0.4}]
    assert claims_sweep.carry_differences(record, 101, wider)[0].startswith("d-a: was")


def test_restate_takes_the_chapters_current_statement_and_loose_reason():
    record = _record([0.6, 0.7], ">", 0.5, seeds=[100, 101])
    assert record["claims"]["d-a"].get("loose") is None
    line = {"id": "d-a", "says": "now said so", "loose": "only the sign is claimed", "seed": 101}
    claims_sweep.restate(record, [line, {**line, "id": "d-unknown"}])
    assert record["claims"]["d-a"]["says"] == "now said so"
    assert record["claims"]["d-a"]["loose"] == "only the sign is claimed"
    assert set(record["claims"]) == {"d-a"} and len(record["claims"]["d-a"]["observations"]) == 2


def test_carry_over_refuses_bad_input_before_running(tmp_path):
    record = {**_record([0.6], ">", 0.5, seeds=[100]), "chapter": "intro", "commit": "c"}
    (tmp_path / "intro.json").write_text(json.dumps(record))
    with pytest.raises(ValueError, match=r"seed must be one of the seeds recorded for intro \[100\], got 5"):
        claims_sweep.carry_over(["intro"], 5, out_dir=tmp_path, progress=False)
    with pytest.raises(ValueError, match="'nope' is not an executable chapter"):
        claims_sweep.carry_over(["nope"], 100, out_dir=tmp_path, progress=False)
    with pytest.raises(ValueError, match="jobs must be a positive integer"):
        claims_sweep.carry_over(["intro"], 100, jobs=0, out_dir=tmp_path, progress=False)
    with pytest.raises(ValueError, match="'gabor' has no record to carry over"):
        claims_sweep.carry_over(["gabor"], 100, out_dir=tmp_path, progress=False)


@pytest.mark.parametrize(
    ("value", "op", "bound", "holds"),
    [
        (0.5, "<", 0.5, False),  # strict: the boundary fails
        (0.4999, "<", 0.5, True),
        (0.5, "<=", 0.5, True),
        (0.5001, "<=", 0.5, False),
        (0.5, ">", 0.5, False),
        (0.5001, ">", 0.5, True),
        (0.5, ">=", 0.5, True),
        (0.4999, ">=", 0.5, False),
        (3, "==", 3, True),
        (3, "==", 4, False),
        (0.2, "in", (0.2, 0.4), True),  # closed at both ends
        (0.4, "in", (0.2, 0.4), True),
        (0.1999, "in", (0.2, 0.4), False),  # below the interval
        (0.4001, "in", (0.2, 0.4), False),  # above the interval: the upper bound is tested
        (7.0, "in", (0.2, 0.4), False),
    ],
)
def test_claim_verdict_at_and_beyond_every_boundary(shown, monkeypatch, value, op, bound, holds):
    monkeypatch.delenv(claims.LOG_ENV, raising=False)
    monkeypatch.delenv(claims.KEEP_GOING_ENV, raising=False)
    if holds:
        book.claim("t-edge", value, op, bound, says="edge")
        assert shown[-1][0]["text/plain"].startswith("\u2714")
    else:
        with pytest.raises(AssertionError, match="does not hold"):
            book.claim("t-edge", value, op, bound, says="edge")
        assert shown[-1][0]["text/plain"].startswith("\u2718")


def test_development_and_held_out_seeds_are_disjoint():
    assert not set(claims.DEVELOPMENT_SEEDS) & set(claims.HELD_OUT_SEEDS)
    assert set(claims_sweep.DEFAULT_SEEDS) <= set(claims.DEVELOPMENT_SEEDS)


def test_held_out_seeds_run_only_on_frozen_records_and_once(tmp_path, monkeypatch):
    held = claims.HELD_OUT_SEEDS[0]
    with pytest.raises(ValueError, match="seeds must not include the held-out seeds"):
        claims_sweep.sweep(["intro"], (100, held), out_dir=tmp_path, progress=False)
    assert "has no record" in claims_sweep.held_out_ready("intro", tmp_path)
    digest = claims.source_hash(BOOK / "intro.md")
    record = {**_record([0.6] * 10, ">", 0.5, source_sha256="old"), "chapter": "intro"}
    (tmp_path / "intro.json").write_text(json.dumps(record))
    assert "code changed since its record" in claims_sweep.held_out_ready("intro", tmp_path)
    record["source_sha256"] = digest
    record["seeds"] = list(range(100, 104))
    (tmp_path / "intro.json").write_text(json.dumps(record))
    assert "holds 4 development seeds of 100-109, fewer than 5" in claims_sweep.held_out_ready("intro", tmp_path)
    record["seeds"] = list(range(100, 105))
    (tmp_path / "intro.json").write_text(json.dumps(record))
    assert claims_sweep.held_out_ready("intro", tmp_path) is None
    record["held_out_runs"] = [{"source_sha256": digest, "seeds": [held], "failing": [], "errors": []}]
    (tmp_path / "intro.json").write_text(json.dumps(record))
    assert "already ran on this source" in claims_sweep.held_out_ready("intro", tmp_path)
    with pytest.raises(ValueError, match="held-out seeds refused: intro's held-out seeds already ran"):
        claims_sweep.sweep(["intro"], out_dir=tmp_path, progress=False, held_out=True)


def test_a_held_out_run_is_kept_in_the_record_across_a_re_sweep(tmp_path):
    held = claims.HELD_OUT_SEEDS[0]
    digest = claims.source_hash(claims_sweep.BOOK / "intro.md")
    line = {"id": "d-a", "says": "s", "op": ">", "loose": None, "value": 0.4, "bound": 0.5, "holds": False}
    record = claims_sweep._merge(
        "intro", (held,), {held: (1.0, None)}, [{**line, "seed": held}], tmp_path, "c1", digest
    )
    assert record["held_out_runs"][0]["failing"] == ["d-a"] and record["held_out_runs"][0]["seeds"] == [held]
    stored = json.loads((tmp_path / "intro.json").read_text())
    stored["source_sha256"] = "an older source"
    (tmp_path / "intro.json").write_text(json.dumps(stored))
    again = claims_sweep._merge("intro", (100,), {100: (1.0, None)}, [{**line, "seed": 100}], tmp_path, "c2", digest)
    assert list(again["runs"]) == ["100"] and again["held_out_runs"][0]["commit"] == "c1"


def test_a_record_names_the_source_as_executed_not_as_edited_during_the_sweep(tmp_path):
    line = {"id": "d-a", "says": "s", "op": ">", "loose": None, "value": 0.6, "bound": 0.5, "holds": True}
    record = claims_sweep._merge(
        "intro", (100,), {100: (1.0, None)}, [{**line, "seed": 100}], tmp_path, "c1", "the source as executed"
    )
    assert record["source_sha256"] == "the source as executed"
    assert claims_sweep.held_out_ready("intro", tmp_path) is not None  # stale: not the current source


def test_revisions_name_stated_or_withdrawn_claims():
    entries = claims.read_revisions()
    assert entries
    for entry in entries:
        stated = STATED[entry["chapter"]]
        known = claims.stated_id(entry["claim"], stated) or entry["claim"] in stated
        assert known or "withdrawn" in entry["changed"], entry["claim"]


def test_read_revisions_refuses_an_entry_without_its_fields(tmp_path):
    path = tmp_path / "r.yaml"
    path.write_text("revisions:\n  - claim: x\n    chapter: intro\n")
    with pytest.raises(ValueError, match="revision 0 lacks seen, failed, changed"):
        claims.read_revisions(path)
    path.write_text("- a\n")
    with pytest.raises(ValueError, match="list 'revisions'"):
        claims.read_revisions(path)


def test_the_claims_page_has_one_section_per_chapter_in_book_order():
    """The claims page (issue 34): a heading per chapter with claims, titled as the chapter, in the
    order of the table of contents, each showing that chapter's table, so that the contents sidebar
    lists them."""
    import yaml

    toc = yaml.safe_load((BOOK.parent / "_toc.yml").read_text(encoding="utf-8"))
    order = [Path(toc["root"]).name] + [Path(c["file"]).name for p in toc["parts"] for c in p["chapters"]]
    with_claims = [c for c in order if c in claims.read_records()]
    page = (BOOK / "claims.md").read_text(encoding="utf-8")
    sections = re.findall(
        r"^## (.+)\n\n```\{code-cell\} ipython3\n:tags: \[remove-input\]\n\nshow_table\(\"(\w+)\"\)", page, re.M
    )
    assert [chapter for _, chapter in sections] == with_claims
    for title, chapter in sections:
        assert re.search(rf"^# {re.escape(title)}$", (BOOK / f"{chapter}.md").read_text(encoding="utf-8"), re.M)


def test_carry_over_against_a_baseline_compares_two_executions_of_one_seed():
    """--baseline (a refactor's check on a machine other than the record's): the baseline execution's
    claims are compared in the record's shape; a baseline that is not a commit hash is refused."""
    lines = [{"id": "d-a", "op": ">", "value": 0.7, "bound": 0.5, "holds": True, "seed": 101}]
    reference = claims_sweep._as_record(lines, 101)
    assert claims_sweep.carry_differences(reference, 101, lines) == []
    moved = [{**lines[0], "value": 0.7 * (1 + 1e-6)}]
    assert claims_sweep.carry_differences(reference, 101, moved)[0].startswith("d-a: was 0.7")
    with pytest.raises(ValueError, match="baseline must be a commit hash"):
        claims_sweep._baseline_tree("main; rm -rf /", Path("/nonexistent"))
