"""Does a chapter still print what its reference holds? For refactoring: execute the chapter's
current source (seed 0, as the references are written) into a scratch notebook and compare every
compared text output, in order, with ``tests/references/<chapter>.ipynb`` (numbers with the nbval
tolerance), whatever cells were merged, split or moved.

    python tools/same_outputs.py book/gaussian.md [book/gdln.md ...] [--keep DIR] [--write] [--jobs 2]

Exit status 0 when every chapter's outputs agree; otherwise the first differences are printed. With
``--write``, a chapter whose outputs agree gets the executed notebook as its new reference (what
``make references`` writes: the same execution and stripping), so the reference holds its new source.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from strip_reference import strip  # noqa: E402
from tolerant_compare import compared_fields, field_value, numbers_agree, output_accuracy  # noqa: E402


def compared_texts(path: Path) -> list[tuple[str, str, float]]:
    """(field, text, accuracy) of every compared output of the notebook, in order."""
    nb = nbformat.read(path, as_version=4)
    return [
        (key, field_value(out, where), output_accuracy(out))
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        for key, where in compared_fields(out)
        if isinstance(field_value(out, where), str)
    ]


def differences(reference: Path, executed: Path) -> list[str]:
    ref, new = compared_texts(reference), compared_texts(executed)
    found = []
    for i, ((rk, rt, acc), (nk, nt, _)) in enumerate(zip(ref, new, strict=False)):
        if rk != nk or not numbers_agree(rt, nt, atol=acc):
            found.append(f"output {i} ({rk} / {nk}):\n  reference: {rt[:300]!r}\n  now:       {nt[:300]!r}")
    if len(ref) != len(new):
        found.append(f"{len(ref)} compared outputs in the reference, {len(new)} now")
    return found


def check(chapter: Path, out_dir: Path, write: bool) -> tuple[bool, str]:
    """Execute one chapter and compare; (agrees, the lines to print)."""
    env = {**os.environ, "LOCALIZATION_SEED": "0", "JAX_PLATFORMS": "cpu", "LOCALIZATION_STATIC_WIDGETS": "1"}
    executed = out_dir / f"{chapter.stem}.ipynb"
    jupytext = Path(sys.executable).with_name("jupytext")
    run = [str(jupytext), "--quiet", "--to", "ipynb", "--execute", "--set-kernel", "python3", str(chapter)]
    done = subprocess.run([*run, "-o", str(executed)], env=env, cwd=ROOT, capture_output=True, text=True)
    if done.returncode:
        return False, f"{chapter}: execution failed\n{done.stderr[-3000:]}"
    strip(str(executed))
    reference = ROOT / "tests" / "references" / f"{chapter.stem}.ipynb"
    found = differences(reference, executed)
    if not found and write:
        shutil.copyfile(executed, reference)
    verdict = (
        "same outputs" + (" (reference rewritten)" if write else "") if not found else f"{len(found)} difference(s)"
    )
    return not found, "\n".join([f"{chapter}: {verdict} ({executed})", *found[:8]])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chapters", nargs="+", type=Path)
    parser.add_argument("--keep", type=Path, help="write the executed notebooks here (default: a temporary dir)")
    parser.add_argument("--write", action="store_true", help="rewrite the reference of each chapter that agrees")
    parser.add_argument("--jobs", type=int, default=1, help="chapters executed side by side")
    args = parser.parse_args()
    out_dir = args.keep or Path(tempfile.mkdtemp(prefix="same-outputs-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        results = pool.map(lambda chapter: check(chapter, out_dir, args.write), args.chapters)
        status = 0
        for agrees, text in results:
            print(text, flush=True)
            status |= not agrees
    return status


if __name__ == "__main__":
    sys.exit(main())
