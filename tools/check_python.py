"""Set-up's first step: can the pinned environment be installed with this Python?

``make`` runs this file with the interpreter it is about to create ``.venv`` from, before anything
is installed, and again with ``.venv``'s own interpreter (a ``.venv`` left by another Python). The
supported versions are those the lock (``constraints.txt``) installs on, measured by resolving it
with each interpreter (``pip install --dry-run -r requirements.txt -c constraints.txt``):

- 3.11.5 and later 3.11 releases, 3.12, 3.13: the lock installs (3.11.7, 3.12.1, 3.13.0 tried; on
  3.12 and 3.13 the package itself is built in pip's isolated build environment, since the locked
  setuptools 65.5.0 fails to import there: ``pkgutil.ImpImporter`` is gone).
- 3.11.0-3.11.4: soupsieve 4.1.3 requires Python >= 3.11.5 (Debian 12's python3.11 is 3.11.2).
- 3.10 and older: numpy 2.4, scipy 1.17, jax 0.10 and matplotlib 3.11 require Python >= 3.11.
- 3.14 and newer: not tried; pyzmq 26.2.1 (held back on purpose, see requirements.txt) publishes no
  wheel for them.

The file is written so that any Python (2.7 included) can run it far enough to print its message.
Exit status 0: supported; 1: not supported, or ``venv``/``ensurepip`` missing (the message says
what to install). ``--quiet`` prints nothing when the interpreter is supported; ``--list`` prints the
supported range.
"""

import sys

LOWEST = (3, 11, 5)  # first release the lock installs on
BEYOND = (3, 14)  # first minor version not supported (not tried, and without pyzmq wheels)


def supported(version):
    """Whether a ``(major, minor, micro)`` version is one the lock installs on."""
    return tuple(version[:3]) >= LOWEST and tuple(version[:2]) < BEYOND


def describe():
    """The supported range in words."""
    return "Python 3.11 (3.11.5 or later), 3.12 or 3.13"


def _dotted(version):
    return ".".join(str(part) for part in version)


def problems(version, modules_missing=()):
    """Lines that explain why set-up cannot go on with this interpreter (empty when it can)."""
    lines = []
    if not supported(version):
        lines.append(
            "Python " + _dotted(version[:3]) + " (" + sys.executable + ") cannot install the pinned "
            "environment: it needs " + describe() + "."
        )
        lines.append("  Pick another interpreter:   make PYTHON=/path/to/python3.12 <target>")
        lines.append("  Debian 13 / Ubuntu 24.04:   apt-get install python3 python3-venv   (3.13 / 3.12)")
        lines.append("  macOS (Homebrew):           brew install python@3.12")
        lines.append("  anywhere (pyenv, uv):       pyenv install 3.12   or   uv python install 3.12")
    for module in modules_missing:
        minor = _dotted(version[:2])
        lines.append("Python " + _dotted(version[:3]) + " has no '" + module + "' module, which creating .venv needs.")
        lines.append("  Debian/Ubuntu:   apt-get install python" + minor + "-venv")
    return lines


def _missing_modules():
    missing = []
    for module in ("venv", "ensurepip"):
        try:
            __import__(module)
        except ImportError:
            missing.append(module)
    return missing


def main(argv):
    if "--list" in argv:
        print(describe())
        return 0
    version = tuple(sys.version_info[:3])
    lines = problems(version, _missing_modules() if supported(version) else ())
    if lines:
        sys.stderr.write("\n".join(lines) + "\n")
        return 1
    if "--quiet" not in argv:
        print("Python " + _dotted(sys.version_info[:3]) + " (" + sys.executable + "): supported")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
