"""The recorded runs of book/data: every file has a manifest entry (localization/records.py), every
entry a file and an existing chapter, and the reproducibility page lists them as they are now."""

import pytest

from localization import records
from localization.__main__ import main

ROOT = records.ROOT


def test_every_file_in_book_data_has_an_entry_and_every_entry_a_file():
    assert not records.unlisted(), (
        f"files in book/data without an entry in localization/records.py MANIFEST: {records.unlisted()} "
        '(add one line: "<file>": Record("what it is", "command", "chapter"))'
    )
    assert not records.missing(), f"MANIFEST entries without a file in book/data: {records.missing()}"


def test_entries_name_a_chapter_and_a_command():
    for pattern, record in records.MANIFEST.items():
        assert (ROOT / "book" / f"{record.chapter}.md").is_file(), (pattern, record.chapter)
        assert len(record.what.split()) >= 5 and record.what[-1] != ".", (pattern, record.what)
        assert record.command.startswith((".venv/bin/python ", "nice -n ", "none: ")), (pattern, record.command)


def test_the_reproducibility_page_lists_the_records_as_they_are():
    stale = records.stale_rows()
    assert not stale, (
        f"book/reproducibility.md lists stale records {stale}: run `.venv/bin/python -m localization records --write`"
    )
    text = records.PAGE.read_text()
    for pattern in records.MANIFEST:
        assert f"`book/data/{pattern}`" in text


def test_listing_and_checks_on_a_made_up_directory(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.json").write_text("{}")
    (tmp_path / "sub" / "b.npz").write_bytes(b"x" * 2500)
    (tmp_path / ".hidden").write_text("")
    manifest = {
        "a.json": records.Record("a record of |w| small", ".venv/bin/python -m x", "intro"),
        "sub/*.npz": records.Record("arrays of something else", ".venv/bin/python -m y", "data"),
    }
    assert records.files(tmp_path) == ["a.json", "sub/b.npz"]
    assert records.unlisted(tmp_path, manifest) == [] and records.missing(tmp_path, manifest) == []
    table = records.listing(tmp_path, manifest).splitlines()
    assert (
        table[2] == "| `book/data/a.json` | a record of \\|w\\| small | `.venv/bin/python -m x` | 2 B | {doc}`intro` |"
    )
    assert "| 2.5 kB (1 files) |" in table[3]
    assert records.unlisted(tmp_path, {"a.json": manifest["a.json"]}) == ["sub/b.npz"]
    assert records.missing(tmp_path, {**manifest, "c.json": manifest["a.json"]}) == ["c.json"]
    with pytest.raises(ValueError, match=r"files without an entry \['sub/b.npz'\]"):
        records.listing(tmp_path, {"a.json": manifest["a.json"]})
    page = tmp_path.parent / f"{tmp_path.name}_page.md"
    page.write_text(f"intro\n\n{records.BEGIN}\nold\n{records.END}\n\nend\n")
    assert not records.update_page(page, tmp_path, manifest, write=True)
    assert page.read_text().startswith(f"intro\n\n{records.BEGIN}\n| file |") and page.read_text().endswith(
        f"{records.END}\n\nend\n"
    )
    assert records.stale_rows(page, tmp_path, manifest=manifest) == []
    (tmp_path / "sub" / "b.npz").write_bytes(b"x" * 2800)  # 12 % larger: still current
    assert records.stale_rows(page, tmp_path, manifest=manifest) == []
    (tmp_path / "sub" / "b.npz").write_bytes(b"x" * 4000)  # 60 % larger: stale
    assert records.stale_rows(page, tmp_path, manifest=manifest) == [
        records.listing(tmp_path, manifest).splitlines()[3]
    ]
    (tmp_path / "sub" / "b.npz").write_bytes(b"x" * 2500)
    renamed = {"a.json": manifest["a.json"]._replace(chapter="data"), "sub/*.npz": manifest["sub/*.npz"]}
    assert len(records.stale_rows(page, tmp_path, manifest=renamed)) == 2  # the changed row, and the old one
    with pytest.raises(ValueError, match="tolerance must be > 0"):
        records.stale_rows(page, tmp_path, 0.0, manifest=manifest)
    page.write_text("no markers")
    with pytest.raises(ValueError, match="must hold the lines"):
        records.update_page(page, tmp_path, manifest)


def test_records_command_prints_the_table(capsys):
    code = main(["records"])
    out, err = capsys.readouterr()
    if records.unlisted() or records.missing():
        assert code == 1 and "disagree" in err
    else:
        assert code == 0 and out.startswith("| file | what it is |") and not err


def test_write_adds_provenance_and_refuses_bad_records(tmp_path):
    """records.write (issue 34: one way to write a record): commit and JAX version added unless the
    record names them, atomic (no partial file left), NaN and a missing directory refused by name."""
    import json

    import jax

    from localization import records

    path = records.write(tmp_path / "r.json", {"settings": {"n": 40}, "ipr": [0.1, 0.2]})
    written = json.loads(path.read_text())
    assert written["jax_version"] == jax.__version__ and written["commit"] == records.commit()
    assert written["ipr"] == [0.1, 0.2] and not list(tmp_path.glob("*.partial"))
    kept = records.write(tmp_path / "k.json", {"commit": "abc"}, compact=True)
    assert json.loads(kept.read_text())["commit"] == "abc" and "\n " not in kept.read_text()
    with pytest.raises(ValueError, match=r"record\['ipr'\]\[1\] is nan"):
        records.write(tmp_path / "n.json", {"ipr": [0.1, float("nan")]})
    with pytest.raises(ValueError, match="existing directory"):
        records.write(tmp_path / "missing" / "r.json", {})
    with pytest.raises(TypeError, match="record must be a mapping"):
        records.write(tmp_path / "l.json", [1, 2])
    assert not (tmp_path / "n.json").exists()
