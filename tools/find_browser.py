"""Find the Chrome or Chromium the browser check (``tests/test_site.py``) drives headless.

``make test`` runs this file first (``make browser``). It looks, in order, at

1. ``$CHROME``, when set: the path (or command name) of the browser to use, taken as it is;
2. the usual command names on ``PATH``: ``chromium``, ``chromium-browser``, ``google-chrome``,
   ``google-chrome-stable``, ``chrome``;
3. on macOS, the applications ``Google Chrome``, ``Chromium`` and ``Google Chrome for Testing``
   under ``/Applications`` and ``~/Applications``.

When none is found it installs Debian's ``chromium`` package with ``apt-get``, but only when
running as root on a Debian-like system (where that is what a container's owner expects); anywhere
else it stops at once with one line per platform saying what to install. Exit status 0 means found
(the path is printed), 1 means not found (the instructions are printed on stderr).

``tests/test_site.py`` imports :func:`find` so that the test uses the browser this check found.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
MAC_APPS = (
    "Google Chrome.app/Contents/MacOS/Google Chrome",
    "Chromium.app/Contents/MacOS/Chromium",
    "Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing",
)
INSTRUCTIONS = """no Chrome or Chromium found (looked for $CHROME, {names} on PATH{mac}). Install one:
  Debian:           sudo apt-get install chromium
  Ubuntu:           install Google Chrome's .deb (google.com/chrome); the chromium snap is untried here
  Fedora:           sudo dnf install chromium
  macOS:            brew install --cask chromium   (or install Google Chrome)
  anywhere else:    install Chrome or Chromium, then CHROME=/path/to/the/browser make test"""


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def find(environ=None, platform=None, app_dirs=None):
    """The browser's executable as a path string, or ``None`` when there is none.

    ``environ`` (default ``os.environ``) supplies ``CHROME``, ``PATH`` and ``HOME``; ``platform``
    (default ``sys.platform``) decides whether macOS application bundles are searched, in
    ``app_dirs`` (default ``/Applications`` and ``$HOME/Applications``). A ``$CHROME`` that names no
    executable raises ``FileNotFoundError``: an explicit choice is never silently replaced.
    """
    environ = os.environ if environ is None else environ
    platform = sys.platform if platform is None else platform
    search_path = environ.get("PATH", os.defpath)
    chosen = environ.get("CHROME", "").strip()
    if chosen:
        exe = shutil.which(chosen, path=search_path)
        if exe is None:
            raise FileNotFoundError(f"CHROME={chosen!r} is not an executable file or a command on PATH")
        return exe
    for name in NAMES:
        exe = shutil.which(name, path=search_path)
        if exe:
            return exe
    if platform == "darwin":
        if app_dirs is None:
            app_dirs = ["/Applications", str(Path(environ.get("HOME", "~")).expanduser() / "Applications")]
        for folder in app_dirs:
            for app in MAC_APPS:
                if _executable(Path(folder) / app):
                    return str(Path(folder) / app)
    return None


def _debian_like(os_release: Path) -> bool:
    try:
        text = os_release.read_text()
    except OSError:
        return False
    fields = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
    ids = (fields.get("ID", "") + " " + fields.get("ID_LIKE", "")).replace('"', "").split()
    return "debian" in ids


def can_install(environ=None, euid=None, os_release=Path("/etc/os-release")) -> bool:
    """Whether this check may install the browser itself: as root, on a Debian-like system, with apt-get."""
    environ = os.environ if environ is None else environ
    euid = os.geteuid() if euid is None else euid
    has_apt = shutil.which("apt-get", path=environ.get("PATH", os.defpath)) is not None
    return euid == 0 and has_apt and _debian_like(os_release)


def instructions(platform=None) -> str:
    """What to install, one line per platform (the text printed when no browser is found)."""
    platform = sys.platform if platform is None else platform
    mac = ", and the Chrome/Chromium apps in /Applications" if platform == "darwin" else ""
    return INSTRUCTIONS.format(names=", ".join(NAMES), mac=mac)


def main(argv=None, environ=None, euid=None, os_release=Path("/etc/os-release"), platform=None) -> int:
    """Find the browser (installing it where that is allowed); print its path; 0 if found, else 1."""
    environ = dict(os.environ if environ is None else environ)
    try:
        exe = find(environ, platform)
    except FileNotFoundError as err:
        print(f"find_browser: {err}", file=sys.stderr)
        return 1
    if exe is None and can_install(environ, euid, os_release):
        print("find_browser: no Chrome/Chromium found; installing Debian's chromium (root, apt-get)", file=sys.stderr)
        env = {**environ, "DEBIAN_FRONTEND": "noninteractive"}
        path = environ.get("PATH", os.defpath)
        apt = shutil.which("apt-get", path=path)
        for cmd in ([apt, "update", "-qq"], [apt, "install", "-y", "-qq", "chromium"]):
            done = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL)
            if done.returncode != 0:
                print(f"find_browser: `apt-get {' '.join(cmd[1:])}` failed (exit {done.returncode})", file=sys.stderr)
                break
        exe = find(environ, platform)
    if exe is None:
        print(instructions(platform), file=sys.stderr)
        return 1
    print(exe)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
