"""Lint the chapters' code cells in one pass: pyflakes and syntax (ruff), and the column width.

Each chapter's code cells are written as a Python script (jupytext's percent format) under
``_build/lint/``, and ruff checks them all in one call (``F``: undefined or unused names, ``E9``:
syntax), so a mistake fails in seconds rather than after a chapter has run for minutes; a failure
names the chapter and the line of the script. Then every code line must fit the site's text column
(``tools/code_width.py``).

Usage: ``python tools/lint_chapters.py book/*.md`` (``make lint`` runs it); exit status 1 on any
finding.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import jupytext

sys.path.insert(0, str(Path(__file__).resolve().parent))
from code_width import CODE_WIDTH, long_lines

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "_build" / "lint"


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    chapters = [Path(name) for name in argv]
    shutil.rmtree(SCRIPTS, ignore_errors=True)
    SCRIPTS.mkdir(parents=True)
    scripts = []
    for chapter in chapters:
        notebook = jupytext.reads(chapter.read_text(encoding="utf-8"), fmt="md:myst")
        script = SCRIPTS / f"{chapter.stem}.md.py"
        script.write_text(jupytext.writes(notebook, fmt="py:percent"), encoding="utf-8")
        scripts.append(str(script))
    ruff = Path(sys.executable).with_name("ruff")
    found = subprocess.run([str(ruff), "check", "--quiet", "--no-cache", "--select", "F,E9", *scripts]).returncode
    if found:
        print(f"ruff: the chapters' code cells (as scripts under {SCRIPTS.relative_to(ROOT)}/)")
    wide = 0
    for chapter in chapters:
        for number, length, _ in long_lines(chapter):
            print(f"{chapter}:{number}: {length} characters in a code cell (at most {CODE_WIDTH})")
            wide += 1
    return 1 if found or wide else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
