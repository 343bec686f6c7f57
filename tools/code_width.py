"""Chapter code cells fit the text column: no line longer than CODE_WIDTH characters.

The site's code blocks are 634 px wide inside their padding at a 1280 px window (sphinx-book-theme,
14 px monospace, 8.43 px a character: measured in headless Chromium), so 75 characters fit without
a sideways scroll bar; narrower windows wrap code lines (``_assets/book.css``).

Usage: ``python tools/code_width.py book/*.md`` (``make lint`` runs it); exit status 1 and one line
per offending code line (``chapter:line: N characters``) when any line is too long.
"""

from __future__ import annotations

import sys
from pathlib import Path

import jupytext

CODE_WIDTH = 75


def long_lines(path: Path, width: int = CODE_WIDTH) -> list[tuple[int, int, str]]:
    """(line number in the file, length, text) of every code-cell line longer than ``width``."""
    text = path.read_text(encoding="utf-8")
    notebook = jupytext.reads(text, fmt="md:myst")
    file_lines = text.splitlines()
    found, start = [], 0
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        for line in cell.source.splitlines():
            if len(line) <= width:
                continue
            # the line number in the .md file: the next occurrence after the last one reported
            number = next((i for i in range(start, len(file_lines)) if file_lines[i] == line), None)
            if number is not None:
                start = number + 1
            found.append(((number or -1) + 1, len(line), line))
    return found


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    bad = 0
    for name in argv:
        for number, length, _ in long_lines(Path(name)):
            print(f"{name}:{number}: {length} characters in a code cell (at most {CODE_WIDTH})")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
