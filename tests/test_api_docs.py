"""The API reference (book/reproducibility.md) covers every public module, and every docstring it
renders is valid reStructuredText: a Sphinx build of that page alone, with the book's autodoc and
napoleon settings, must finish without a warning (seconds here, rather than minutes into `make book`)."""

import pathlib
import pkgutil
import re

import pytest

import localization

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGE = ROOT / "book" / "reproducibility.md"


def _documented_modules() -> list[str]:
    return re.findall(r"^\.\. automodule:: (\S+)", PAGE.read_text(), flags=re.M)


def _public_modules() -> set[str]:
    names = {"localization"}
    for info in pkgutil.walk_packages(localization.__path__, "localization."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.add(info.name)
    return names


def test_every_public_module_is_on_the_api_page():
    missing = _public_modules() - set(_documented_modules()) - {"localization"}
    assert not missing, f"add to the API reference in {PAGE.name}: {sorted(missing)}"


@pytest.mark.slow
def test_api_page_builds_without_warnings(tmp_path):
    from sphinx.cmd.build import build_main

    block = re.search(r"```\{eval-rst\}\n(.*?)```", PAGE.read_text(), flags=re.S).group(1)
    (tmp_path / "index.rst").write_text("API\n===\n\n" + block)
    (tmp_path / "conf.py").write_text(
        "extensions = ['sphinx.ext.autodoc', 'sphinx.ext.napoleon']\n"
        "napoleon_use_ivar = True\nautodoc_typehints = 'none'\nautodoc_member_order = 'bysource'\n"
    )
    warnings = tmp_path / "warnings.txt"
    status = build_main(
        ["-b", "dummy", "-q", "-W", "--keep-going", "-w", str(warnings), str(tmp_path), str(tmp_path / "_build")]
    )
    assert status == 0, warnings.read_text()
