"""The README's set-up on other machines than this one: the interpreter check, the browser search,
``make lab`` as root and as a normal user, and ``make book``'s offline assets without Node.js.

The browser search runs against fake executables on a temporary ``PATH`` (found, not found as a
normal user, not found as root on Debian, where it installs with a fake ``apt-get``); ``make lab`` is
started for real on a free port and asked, through the Jupyter server's contents API, for a chapter
as a notebook; ``make offline-assets`` and ``make -n book`` run with ``npm`` and ``node`` hidden.
"""

import importlib.util
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from importlib import metadata
from pathlib import Path

import jupytext
import pytest
import yaml
from packaging.specifiers import SpecifierSet

ROOT = Path(__file__).resolve().parents[1]


def _tool(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


check_python = _tool("check_python")
find_browser = _tool("find_browser")
vendor_assets = _tool("vendor_assets")


# --- the interpreter check --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "ok"),
    [((3, 10, 13), False), ((3, 11, 2), False), ((3, 11, 4), False), ((3, 11, 5), True), ((3, 11, 7), True)]
    + [((3, 12, 1), True), ((3, 13, 0), True), ((3, 14, 0), False), ((2, 7, 18), False)],
)
def test_supported_versions(version, ok):
    assert check_python.supported(version) is ok
    lines = check_python.problems(version)
    assert (lines == []) is ok
    if not ok:
        assert "make PYTHON=" in "\n".join(lines) and ".".join(map(str, version)) in lines[0]


def test_lowest_supported_version_is_the_locks():
    """The lowest version the check accepts is the highest lower bound in the installed lock's
    Requires-Python: every locked package allows it, and some package refuses the release before it."""
    specs = {}
    for dist in metadata.distributions():
        requires = dist.metadata.get("Requires-Python")
        if requires:
            specs[dist.metadata["Name"]] = SpecifierSet(requires)
    assert len(specs) > 50, "expected the whole locked environment"
    lowest = ".".join(map(str, check_python.LOWEST))
    major, minor, micro = check_python.LOWEST
    before = f"{major}.{minor}.{micro - 1}" if micro else f"{major}.{minor - 1}.99"
    assert all(spec.contains(lowest) for spec in specs.values()), [n for n, s in specs.items() if lowest not in s]
    refusing = sorted(n for n, s in specs.items() if before not in s)
    assert refusing, f"every locked package accepts Python {before}: lower check_python.LOWEST"


def _interpreters():
    """Every Python on this machine a user could pick: python3.X on PATH and in /usr/bin, and pyenv's
    versions when pyenv is there (a pyenv shim for a version it does not have does not run: left out)."""
    candidates = [sys.executable]
    for name in [f"python3.{minor}" for minor in range(6, 16)] + ["python3"]:
        candidates += [shutil.which(name), f"/usr/bin/{name}"]
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates += sorted(str(p) for p in pyenv.glob("*/bin/python[23]"))
    found = {}
    for exe in candidates:
        if exe and Path(exe).is_file() and os.access(exe, os.X_OK):
            runs = subprocess.run([exe, "-c", "import sys; print(sys.executable)"], capture_output=True, text=True)
            if runs.returncode == 0:
                found.setdefault(str(Path(runs.stdout.strip()).resolve()), exe)
    return sorted(found.values())


@pytest.mark.parametrize("python", _interpreters())
def test_check_script_runs_on_every_interpreter_here(python):
    """The check's exit status agrees with :func:`supported` for the interpreter that runs it."""
    version = subprocess.run(
        [python, "-c", "import sys; print('.'.join(map(str, sys.version_info[:3])))"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if version.returncode != 0:
        pytest.fail(f"{python} does not run: {version.stderr[-300:]}")
    parsed = tuple(int(part) for part in version.stdout.split("."))
    done = subprocess.run([python, str(ROOT / "tools" / "check_python.py")], capture_output=True, text=True)
    assert (done.returncode == 0) is check_python.supported(parsed), done.stderr
    if done.returncode:
        assert "cannot install the pinned environment" in done.stderr


def test_make_stops_before_making_a_venv_with_an_unsupported_python(tmp_path):
    """`make env` with Python 3.10 (this interpreter, reporting itself as 3.10.13) prints the check's
    message and creates nothing; with a supported version the same wiring goes on to make .venv."""
    for name in ("Makefile", "requirements.txt", "constraints.txt", "pyproject.toml", "tools/check_python.py"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)

    def fake_python(version):
        # Runs the real check with sys.version_info replaced; anything else (e.g. -m venv) fails loudly.
        code = (
            "import runpy, sys; "
            f"sys.version_info = ({version[0]}, {version[1]}, {version[2]}, 'final', 0); "
            "sys.exit(2) if sys.argv[1:2] != ['tools/check_python.py'] else None; "
            "sys.argv = sys.argv[1:]; runpy.run_path('tools/check_python.py', run_name='__main__')"
        )
        path = tmp_path / f"python{'.'.join(map(str, version))}"
        path.write_text(f'#!/bin/sh\nexec "{sys.executable}" -c "{code}" "$@"\n')
        path.chmod(0o755)
        return path

    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
    old = subprocess.run(
        ["make", "env", f"PYTHON={fake_python((3, 10, 13))}"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert old.returncode != 0 and "Python 3.10.13" in old.stderr and "make PYTHON=" in old.stderr
    assert not (tmp_path / ".venv").exists()
    new = subprocess.run(
        ["make", "env", f"PYTHON={fake_python((3, 12, 1))}"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    # The check passes, so make goes on to `-m venv`, which the fake refuses with exit status 2.
    assert new.returncode != 0 and "cannot install" not in new.stderr and "Error 2" in new.stderr, new.stderr
    assert "Error 1" in old.stderr, old.stderr


# --- the browser search -----------------------------------------------------------------------


def _fake_executable(path: Path, body: str = 'echo "Chromium 1.0"') -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


@pytest.mark.parametrize("name", find_browser.NAMES)
def test_browser_found_under_each_usual_name(tmp_path, name):
    exe = _fake_executable(tmp_path / "bin" / name)
    _fake_executable(tmp_path / "bin" / "firefox")
    assert find_browser.find({"PATH": str(tmp_path / "bin")}, "linux") == str(exe)


def test_browser_names_are_tried_in_order(tmp_path):
    _fake_executable(tmp_path / "bin" / "google-chrome")
    first = _fake_executable(tmp_path / "bin" / "chromium")
    assert find_browser.find({"PATH": str(tmp_path / "bin")}, "linux") == str(first)


def test_chrome_variable_overrides_and_must_exist(tmp_path):
    _fake_executable(tmp_path / "bin" / "chromium")
    chosen = _fake_executable(tmp_path / "elsewhere" / "my-chrome")
    env = {"PATH": str(tmp_path / "bin"), "CHROME": str(chosen)}
    assert find_browser.find(env, "linux") == str(chosen)
    with pytest.raises(FileNotFoundError, match="CHROME="):
        find_browser.find({**env, "CHROME": str(tmp_path / "missing")}, "linux")


def test_macos_application_bundles(tmp_path):
    app = _fake_executable(tmp_path / "Applications" / "Google Chrome.app/Contents/MacOS/Google Chrome")
    env = {"PATH": str(tmp_path / "empty"), "HOME": str(tmp_path / "home")}
    assert find_browser.find(env, "darwin", [str(tmp_path / "Applications")]) == str(app)
    assert find_browser.find(env, "darwin", [str(tmp_path / "nowhere")]) is None
    assert find_browser.find(env, "linux", [str(tmp_path / "Applications")]) is None  # bundles: macOS only


def _os_release(tmp_path, ident):
    path = tmp_path / "os-release"
    path.write_text(f'NAME="Test"\nID={ident}\n')
    return path


def _fake_apt(tmp_path, installs=True):
    """A fake apt-get that logs its arguments and, on `install chromium`, puts a fake chromium on PATH."""
    log, chromium, chmod = tmp_path / "apt.log", tmp_path / "bin" / "chromium", shutil.which("chmod")
    put = f'printf "#!/bin/sh\\necho Chromium 9\\n" > "{chromium}"; "{chmod}" +x "{chromium}"'
    body = f'echo "$@" >> "{log}"\nif [ "$1" = install ]; then {put if installs else "exit 100"}; fi'
    _fake_executable(tmp_path / "bin" / "apt-get", body)
    return log


def test_not_found_as_normal_user_fails_at_once_with_instructions(tmp_path, capsys):
    log = _fake_apt(tmp_path)
    env = {"PATH": str(tmp_path / "bin")}
    code = find_browser.main([], env, euid=1000, os_release=_os_release(tmp_path, "debian"), platform="linux")
    err = capsys.readouterr().err
    assert code == 1 and not log.exists(), "apt-get must not run without root"
    for platform in ("Debian:", "Ubuntu:", "Fedora:", "macOS:", "CHROME=/path/to/the/browser"):
        assert platform in err


def test_not_found_as_root_on_debian_installs_with_apt(tmp_path, capsys):
    log = _fake_apt(tmp_path)
    env = {"PATH": str(tmp_path / "bin")}
    code = find_browser.main([], env, euid=0, os_release=_os_release(tmp_path, "debian"), platform="linux")
    out = capsys.readouterr().out
    assert code == 0 and out.strip() == str(tmp_path / "bin" / "chromium")
    assert log.read_text().splitlines() == ["update -qq", "install -y -qq chromium"]


def test_not_found_as_root_elsewhere_or_failed_install_gives_instructions(tmp_path, capsys):
    log = _fake_apt(tmp_path)
    env = {"PATH": str(tmp_path / "bin")}
    assert find_browser.main([], env, euid=0, os_release=_os_release(tmp_path, "fedora"), platform="linux") == 1
    assert not log.exists() and "Fedora:" in capsys.readouterr().err
    _fake_apt(tmp_path, installs=False)
    assert find_browser.main([], env, euid=0, os_release=_os_release(tmp_path, "ubuntu\nID_LIKE=debian")) == 1
    err = capsys.readouterr().err
    assert "apt-get install -y -qq chromium` failed (exit 100)" in err and "Ubuntu:" in err


def test_script_on_a_bare_path(tmp_path):
    """The script itself: found (path printed, exit 0); not found with no apt-get (exit 1, instructions)."""
    script = str(ROOT / "tools" / "find_browser.py")
    env = {"PATH": str(tmp_path / "bin"), "HOME": str(tmp_path)}
    (tmp_path / "bin").mkdir()
    missing = subprocess.run([sys.executable, script], env=env, capture_output=True, text=True, timeout=60)
    assert missing.returncode == 1 and "Debian:" in missing.stderr and missing.stdout == ""
    exe = _fake_executable(tmp_path / "bin" / "chromium-browser")
    found = subprocess.run([sys.executable, script], env=env, capture_output=True, text=True, timeout=60)
    assert found.returncode == 0 and found.stdout.strip() == str(exe)


# --- make lab ---------------------------------------------------------------------------------


def _make(*args, env=None, timeout=120):
    cmd = ["make", "--no-print-directory", *args]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)


def test_lab_passes_allow_root_only_as_root():
    as_me = _make("-n", "lab")
    assert as_me.returncode == 0, as_me.stderr
    assert "jupyter lab book/" in as_me.stdout
    assert ("--allow-root" in as_me.stdout) is (os.geteuid() == 0)
    if os.geteuid() == 0 and shutil.which("runuser"):
        # The same Makefile evaluated by an unprivileged user, in a folder that user can read (the
        # checkout itself may sit under a private directory).
        with tempfile.TemporaryDirectory() as folder:
            os.chmod(folder, 0o755)
            shutil.copy(ROOT / "Makefile", folder)
            show = ["make", "-s", "--eval", "show-flag: ; @echo [$(ALLOW_ROOT)]", "show-flag"]
            runs = {
                user: subprocess.run(cmd, cwd=folder, capture_output=True, text=True, timeout=60)
                for user, cmd in (("root", show), ("nobody", ["runuser", "-u", "nobody", "--", *show]))
            }
        assert runs["root"].stdout.strip() == "[--allow-root]", runs["root"].stderr
        assert runs["nobody"].stdout.strip() == "[]", runs["nobody"].stderr


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_make_lab_serves_a_chapter_as_a_notebook(tmp_path):
    """`make lab` (as whoever runs the tests; root in CI) starts JupyterLab, whose contents API serves
    book/intro.md as a notebook with the chapter's cells (jupytext); then the server is stopped."""
    port, token = _free_port(), secrets.token_hex(16)
    args = f"--no-browser --port={port} --ServerApp.port_retries=0 --IdentityProvider.token={token}"
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"), "LAB_ARGS": args}
    env["JUPYTERLAB_WORKSPACES_DIR"] = str(tmp_path / "workspaces")
    log = open(tmp_path / "lab.log", "w")  # closed below, after the server stopped
    proc = subprocess.Popen(
        ["make", "--no-print-directory", "lab", f"LAB_ARGS={args}"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}/api/contents/intro.md?type=notebook&content=1"
    request = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    model = None
    try:
        deadline = time.monotonic() + 50
        while model is None:
            assert proc.poll() is None, "make lab exited: " + (tmp_path / "lab.log").read_text()[-2000:]
            assert time.monotonic() < deadline, "no answer within 50 s: " + (tmp_path / "lab.log").read_text()[-2000:]
            try:
                with opener.open(request, timeout=5) as reply:
                    model = json.load(reply)
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.3)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        log.close()
    chapter = jupytext.read(ROOT / "book" / "intro.md")
    assert model["type"] == "notebook" and model["format"] == "json"
    cells = model["content"]["cells"]
    assert len(cells) == len(chapter.cells) > 3
    assert [c["cell_type"] for c in cells] == [c.cell_type for c in chapter.cells]


# --- offline assets without Node.js -----------------------------------------------------------

NODE = {"npm", "npx", "node", "nodejs", "corepack"}


def _path_without_node(tmp_path) -> str:
    """A PATH of one directory linking every command on the current PATH except Node.js's."""
    hidden = tmp_path / "bin"
    hidden.mkdir()
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if not os.path.isdir(folder):
            continue
        for entry in os.scandir(folder):
            target = hidden / entry.name
            if entry.name not in NODE and not target.exists() and os.access(entry.path, os.X_OK):
                target.symlink_to(entry.path)
    return str(hidden)


def test_book_needs_no_npm(tmp_path):
    env = {**os.environ, "PATH": _path_without_node(tmp_path)}
    assert shutil.which("npm", path=env["PATH"]) is None and shutil.which("make", path=env["PATH"])
    assets = _make("offline-assets", env=env)
    assert assets.returncode == 0, assets.stdout + assets.stderr
    plan = _make("-n", "book", env=env)
    assert plan.returncode == 0, plan.stderr
    assert "jupyter-book build" in plan.stdout and "vendor_assets.py --check" in plan.stdout
    assert "npm" not in plan.stdout
    refresh = _make("update-offline-assets", env=env)
    assert refresh.returncode != 0 and "npm (Node.js) is needed" in refresh.stdout + refresh.stderr


def test_committed_mathjax_is_complete_and_unchanged():
    assert vendor_assets.check() == []
    config = yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]["config"]
    manifest = json.loads(vendor_assets.MANIFEST.read_text())
    static = [ROOT / folder for folder in config["html_static_path"]]
    mathjax = next(folder / config["mathjax_path"] for folder in static if (folder / config["mathjax_path"]).is_file())
    assert mathjax.relative_to(vendor_assets.TARGET).as_posix() in manifest["files"]
    assert config["nb_ipywidgets_js"] == {}, "no page embeds widget state: no widget manager or require.js"
    tracked = subprocess.run(["git", "ls-files", "_assets/mathjax"], cwd=ROOT, capture_output=True, text=True)
    if tracked.returncode == 0:  # a git checkout: the copies are committed, not generated
        committed = {Path(p).relative_to("_assets/mathjax").as_posix() for p in tracked.stdout.split()}
        assert set(manifest["files"]) <= committed, "the MathJax copies must be committed (git add _assets/mathjax)"


def test_check_detects_a_changed_or_missing_copy(tmp_path):
    copy = tmp_path / "mathjax"
    shutil.copytree(vendor_assets.TARGET, copy)
    assert vendor_assets.check(copy) == []
    (copy / "input/tex/extensions/boldsymbol.js").write_text("// changed\n")
    (copy / "tex-svg.js").unlink()
    problems = vendor_assets.check(copy)
    assert len(problems) == 2 and any("boldsymbol.js differs" in p for p in problems)
    package = tmp_path / "package.json"
    package.write_text(json.dumps({"dependencies": {"mathjax": "9.9.9"}}))
    assert any("pins '9.9.9'" in p for p in vendor_assets.check(vendor_assets.TARGET, package))
