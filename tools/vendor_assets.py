"""The JavaScript the site serves itself: MathJax, committed under ``_assets/mathjax``.

The book's pages need one script from outside Sphinx, MathJax 3 (``tex-svg.js``, SVG output, no font
files), and the TeX extensions it loads on demand (``\\boldsymbol`` loads ``boldsymbol.js``). They
are committed to the repository (2.4 MB) so that ``make book`` needs neither Node.js nor an internet
connection, and the built site renders offline. Nothing else is vendored: the explorers embed their
frames and a few lines of their own JavaScript, so no page loads require.js or the ipywidgets manager.

- ``python tools/vendor_assets.py --check`` (``make offline-assets``, run by ``make book``): every file
  in ``_assets/mathjax/MANIFEST.json`` is present with its recorded SHA-256, and the manifest names
  the MathJax version pinned in ``offline/package.json``. Needs no npm.
- ``python tools/vendor_assets.py --update`` (``make update-offline-assets``, a maintainer's step):
  copies the files from ``offline/node_modules/mathjax`` (``npm ci`` in ``offline/`` first) and
  rewrites the manifest.
"""

import hashlib
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "_assets" / "mathjax"
MANIFEST = TARGET / "MANIFEST.json"
PACKAGE_JSON = ROOT / "offline" / "package.json"
SOURCE = ROOT / "offline" / "node_modules" / "mathjax"
STALE = ROOT / "_assets" / "vendor"
# es5/tex-svg.js is the combined component (TeX input, SVG output, menu); the extensions are the
# ones its autoload and \require can fetch (all-packages.js, the 215 kB bundle of them all, is not).
EXCLUDED_EXTENSIONS = ("all-packages.js",)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def pinned_version(package_json: Path = PACKAGE_JSON) -> str:
    """The MathJax version ``offline/package.json`` pins."""
    return json.loads(package_json.read_text())["dependencies"]["mathjax"]


def check(target: Path = TARGET, package_json: Path = PACKAGE_JSON) -> list[str]:
    """Problems with the committed copies (an empty list when they are complete and unchanged)."""
    manifest_path = target / "MANIFEST.json"
    if not manifest_path.is_file():
        return [f"{manifest_path} is missing"]
    manifest = json.loads(manifest_path.read_text())
    problems = []
    if manifest.get("version") != pinned_version(package_json):
        problems.append(
            f"{manifest_path} records MathJax {manifest.get('version')!r}, "
            f"{package_json} pins {pinned_version(package_json)!r}"
        )
    if not manifest.get("files"):
        problems.append(f"{manifest_path} lists no files")
    for name, digest in sorted(manifest.get("files", {}).items()):
        path = target / name
        if not path.is_file():
            problems.append(f"{path} is missing")
        elif _sha256(path) != digest:
            problems.append(f"{path} differs from the copy recorded in {manifest_path.name}")
    return problems


def update(source: Path = SOURCE, target: Path = TARGET, package_json: Path = PACKAGE_JSON) -> dict:
    """Copy the used MathJax files from the npm package into ``target`` and write the manifest."""
    installed = json.loads((source / "package.json").read_text())["version"]
    if installed != pinned_version(package_json):
        pinned = pinned_version(package_json)
        raise ValueError(f"{source} holds MathJax {installed}, {package_json} pins {pinned}")
    files = [source / "LICENSE", source / "es5" / "tex-svg.js"]
    files += sorted(
        p for p in (source / "es5" / "input" / "tex" / "extensions").glob("*.js") if p.name not in EXCLUDED_EXTENSIONS
    )
    if target.exists():
        shutil.rmtree(target)
    digests = {}
    for path in files:
        rel = path.relative_to(source / "es5") if path.is_relative_to(source / "es5") else path.relative_to(source)
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target / rel)
        digests[rel.as_posix()] = _sha256(path)
    manifest = {"package": "mathjax", "version": installed, "files": digests}
    (target / "MANIFEST.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return manifest


def main(argv: list[str]) -> int:
    if argv == ["--check"]:
        problems = check()
        for line in problems:
            print(f"offline assets: {line}", file=sys.stderr)
        if problems:
            print("offline assets: restore them with `git checkout -- _assets/mathjax`", file=sys.stderr)
            return 1
        if STALE.exists():  # left by the former npm route; Sphinx would copy it into every build
            print(f"offline assets: {STALE} is no longer used (remove it: rm -rf _assets/vendor)", file=sys.stderr)
        return 0
    if argv == ["--update"]:
        if not SOURCE.is_dir():
            print(f"{SOURCE} is missing: run `npm ci` in offline/ first (make update-offline-assets)", file=sys.stderr)
            return 1
        manifest = update()
        size = sum((TARGET / name).stat().st_size for name in manifest["files"])
        print(f"MathJax {manifest['version']}: {len(manifest['files'])} files, {size / 1e6:.2f} MB in {TARGET}")
        return 0
    print("usage: vendor_assets.py --check | --update", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
