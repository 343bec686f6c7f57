"""The API reference (``book/api/*.md``, one page per part of the library) documents every public
module on exactly one page, every page is in the table of contents, and every docstring it renders is
valid reStructuredText with no machine path in it: a Sphinx build of those pages alone, with the
book's autodoc and napoleon settings, must finish without a warning (seconds here, rather than
minutes into `make book`) and its text must not name the build machine's directories."""

import pathlib
import pkgutil
import re

import pytest
import yaml

import localization

ROOT = pathlib.Path(__file__).resolve().parents[1]
API = ROOT / "book" / "api"
AUTOMODULE = re.compile(r"^\.\. automodule:: (\S+)", flags=re.M)


def _api_pages() -> list[pathlib.Path]:
    return sorted(p for p in API.glob("*.md") if p.name != "index.md")


def _documented() -> dict[str, list[str]]:
    """Module name -> the API pages that document it."""
    pages: dict[str, list[str]] = {}
    for page in _api_pages():
        for module in AUTOMODULE.findall(page.read_text()):
            pages.setdefault(module, []).append(page.name)
    return pages


def _public_modules() -> set[str]:
    names = {"localization"}
    for info in pkgutil.walk_packages(localization.__path__, "localization."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.add(info.name)
    return names


def _toc_files(entries) -> list[str]:
    files = []
    for entry in entries or []:
        if "file" in entry:
            files.append(entry["file"])
        files += _toc_files(entry.get("sections"))
        files += _toc_files(entry.get("chapters"))
    return files


def test_every_public_module_is_on_exactly_one_api_page():
    documented = _documented()
    missing = _public_modules() - set(documented)
    assert not missing, f"add to a page of the API reference (book/api/): {sorted(missing)}"
    twice = {m: p for m, p in documented.items() if len(p) > 1}
    assert not twice, f"documented on more than one API page: {twice}"
    unknown = set(documented) - _public_modules()
    assert not unknown, f"the API pages document modules that do not exist: {sorted(unknown)}"


def test_api_pages_are_in_the_toc_and_the_api_is_nowhere_else():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = _toc_files(toc.get("parts"))
    expected = ["book/api/index"] + [f"book/api/{p.stem}" for p in _api_pages()]
    assert not set(expected) - set(files), f"API pages missing from _toc.yml: {set(expected) - set(files)}"
    elsewhere = [p.name for p in (ROOT / "book").glob("*.md") if AUTOMODULE.search(p.read_text())]
    assert not elsewhere, f"autodoc outside book/api/ (one page per package): {elsewhere}"


def test_defaults_are_shown_as_written():
    """A default such as ``path=FIG1_DATA`` must not render as the build machine's path."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]["config"]
    assert config.get("autodoc_preserve_defaults") is True


@pytest.mark.slow
def test_api_pages_build_without_warnings_or_machine_paths(tmp_path):
    import subprocess
    import sys

    names = []
    for page in _api_pages():
        blocks = re.findall(r"```\{eval-rst\}\n(.*?)```", page.read_text(), flags=re.S)
        title = page.stem
        (tmp_path / f"{title}.rst").write_text(f"{title}\n{'=' * len(title)}\n\n" + "\n".join(blocks))
        names.append(title)
    (tmp_path / "index.rst").write_text("API\n===\n\n.. toctree::\n\n" + "".join(f"   {n}\n" for n in names))
    (tmp_path / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(ROOT / '_ext')!r})\n"
        "extensions = ['sphinx.ext.autodoc', 'sphinx.ext.napoleon', 'api_values']\n"
        "napoleon_use_ivar = True\nautodoc_typehints = 'none'\nautodoc_member_order = 'bysource'\n"
        "autodoc_preserve_defaults = True\nadd_module_names = False\npython_maximum_signature_line_length = 60\n"
    )
    warnings = tmp_path / "warnings.txt"
    # In a process of its own: autodoc_preserve_defaults rewrites the defaults of the functions it
    # documents (a "chapter" default became a DefaultValue), which broke later tests in this process.
    status = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "text", "-q", "-W", "--keep-going", "-w", str(warnings),
         str(tmp_path), str(tmp_path / "_build")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert status.returncode == 0, warnings.read_text() if warnings.exists() else status.stderr
    leaks = []
    for out in (tmp_path / "_build").glob("*.txt"):
        text = out.read_text()
        for marker in ("PosixPath(", str(ROOT), "/tmp/", "/home/", "/work/"):
            if marker in text:
                leaks.append(f"{out.name}: {marker}")
    assert not leaks, f"machine paths in the API reference: {leaks}"
    # a constant's description is prose: napoleon must not cut it at its first colon into a "type"
    experiments = " ".join((tmp_path / "_build" / "experiments.txt").read_text().split())
    assert "(excess kurtosis below 1e-3: the Gaussian task)" in experiments
    assert "Type: The NLGP gain" not in experiments
