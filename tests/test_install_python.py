"""disksleuth installs and reads capture bundles with the Python that Debian 12 and Ubuntu 22.04 ship.

Debian 12's python3.11 is 3.11.2 and Ubuntu 22.04's is 3.11.0: neither has tarfile's extraction filters
(PEP 706, 3.11.4). Requiring 3.11.4 made `./quickstart check` stop at pip on a stock Debian 12. Here the
system's own interpreter (not the venv's, not pyenv's) imports the package and unpacks good and hostile
capture bundles. `.ci/run` installs the whole suite with that interpreter on a plain PATH.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib

import pytest
from conftest import HERE
from packaging.specifiers import SpecifierSet
from test_capture_extraction import REFUSED, write_archive
from test_hostile_capture import HOSTILE, _link_chain_escape, make_archive

REPO = os.path.dirname(HERE)
SRC = os.path.join(REPO, "src")
TREE = os.path.join(HERE, "data", "sysfs", "sata_3g_on_6g")
# The interpreters of stock Debian 12 and Ubuntu 22.04, before 3.11.4 brought the extraction filters.
SYSTEM_PYTHONS = ("/usr/bin/python3.11", "/usr/bin/python3", "/usr/local/bin/python3.11")
# The dependencies pyproject.toml declares: the system interpreter has none of them, and every module that
# needs one at import time says so with a ModuleNotFoundError naming it.
DECLARED = {"rich", "sqlalchemy", "matplotlib", "prometheus_client", "ruptures"}


def _version(python: str) -> tuple[int, int, int] | None:
    if not os.access(python, os.X_OK):
        return None
    out = subprocess.run([python, "-c", "import sys; print(*sys.version_info[:3])"], capture_output=True, text=True)
    return tuple(int(x) for x in out.stdout.split()) if out.returncode == 0 else None  # type: ignore[return-value]


def _filterless_python() -> str | None:
    for python in SYSTEM_PYTHONS:
        version = _version(python)
        if version and (3, 11, 0) <= version < (3, 11, 4):
            return python
    return None


SYSTEM_PYTHON = _filterless_python()
needs_system_python = pytest.mark.skipif(
    SYSTEM_PYTHON is None, reason=f"no Python 3.11.0-3.11.3 (without tarfile filters) among {SYSTEM_PYTHONS}"
)


def run_system_python(args: list[str], tmpdir: str, **kwargs) -> subprocess.CompletedProcess[str]:
    assert SYSTEM_PYTHON is not None
    # -s: not even the user's site-packages; only the sources and the standard library.
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "PYTHONPATH": SRC, "TMPDIR": tmpdir, "LC_ALL": "C.UTF-8"}
    env["DISKSLEUTH_DB"] = os.environ["DISKSLEUTH_DB"]  # conftest's throwaway store
    return subprocess.run([SYSTEM_PYTHON, "-s", *args], env=env, capture_output=True, text=True, timeout=120, **kwargs)


def test_requires_python_admits_the_pythons_debian_and_ubuntu_ship():
    with open(os.path.join(REPO, "pyproject.toml"), "rb") as fh:
        requires = SpecifierSet(tomllib.load(fh)["project"]["requires-python"])
    for version in ("3.11.0", "3.11.2", "3.12.3", "3.13.5"):  # Ubuntu 22.04, Debian 12, Ubuntu 24.04, Debian 13
        assert requires.contains(version), f"{version} not in {requires}"
    assert not requires.contains("3.10.12")  # Ubuntu 22.04's python3: quickstart installs python3.11 there
    if SYSTEM_PYTHON:
        assert requires.contains(".".join(map(str, _version(SYSTEM_PYTHON) or ())))


@needs_system_python
def test_every_module_imports_under_the_system_python(tmp_path):
    code = (
        "import importlib, json, pkgutil, disksleuth\n"
        "missing = {}\n"
        "for m in pkgutil.walk_packages(disksleuth.__path__, 'disksleuth.'):\n"
        "    if m.name.endswith('__main__'):\n"
        "        continue\n"
        "    try:\n"
        "        importlib.import_module(m.name)\n"
        "    except ModuleNotFoundError as exc:\n"
        "        missing[m.name] = exc.name.split('.')[0]\n"
        "print(json.dumps(missing))\n"
    )
    res = run_system_python(["-c", code], str(tmp_path))
    assert res.returncode == 0, res.stderr
    assert set(json.loads(res.stdout).values()) <= DECLARED
    res = run_system_python(["-m", "disksleuth", "--version"], str(tmp_path))
    assert res.returncode == 0 and res.stdout.startswith("disksleuth "), res.stderr


@needs_system_python
def test_a_capture_round_trip_under_the_system_python(tmp_path):
    tmpdir = tmp_path / "TMPDIR"
    tmpdir.mkdir()
    bundle = str(tmp_path / "c.tar.gz")
    res = run_system_python(["-m", "disksleuth", "capture", "--json", "-o", bundle, "--sysfs-root", TREE], str(tmpdir))
    assert res.returncode == 0, res.stdout + res.stderr
    back = run_system_python(["-m", "disksleuth", "list", "--json", "--sysfs-root", bundle], str(tmpdir))
    # The old code: exit 2, "internal error: TypeError: TarFile.extract() got an unexpected keyword argument 'filter'".
    assert back.returncode == 0, back.stdout + back.stderr
    tree = run_system_python(["-m", "disksleuth", "list", "--json", "--sysfs-root", TREE], str(tmpdir))
    strip = [{k: v for k, v in d.items() if k != "serial"} for d in json.loads(tree.stdout)["devices"]]
    assert [{k: v for k, v in d.items() if k != "serial"} for d in json.loads(back.stdout)["devices"]] == strip
    assert os.listdir(tmpdir) == []  # the unpacked bundle is removed at exit


@needs_system_python
def test_hostile_bundles_are_refused_under_the_system_python(tmp_path):
    """Every hostile case of test_hostile_capture.py and test_capture_extraction.py, unpacked by the
    system interpreter through open_root: each is refused, nothing is left in $TMPDIR, and the file the
    link-chain escape aims at is untouched."""
    tmpdir = tmp_path / "TMPDIR"
    tmpdir.mkdir()
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "pwned").write_text("original content\n")
    archives = {}
    for case, members in HOSTILE.items():
        archives[case] = make_archive(str(tmp_path / f"hostile-{case}.tar.gz"), members)
    for case, (members, _) in REFUSED.items():
        archives[case] = write_archive(str(tmp_path / f"refused-{case}.tar.gz"), members)
    archives["link_chain"] = make_archive(str(tmp_path / "chain.tar.gz"), _link_chain_escape(str(victim)))
    code = (
        "import json, sys\n"
        "from disksleuth.errors import ParseError\n"
        "from disksleuth.probe.capture import open_root\n"
        "out = {}\n"
        "for case, path in json.loads(sys.argv[1]).items():\n"
        "    try:\n"
        "        out[case] = 'unpacked to ' + open_root(path)\n"
        "    except ParseError as exc:\n"
        "        out[case] = str(exc)\n"
        "print(json.dumps(out))\n"
    )
    res = run_system_python(["-c", code, json.dumps(archives)], str(tmpdir))
    assert res.returncode == 0, res.stderr
    said = json.loads(res.stdout)
    assert said.keys() == archives.keys()
    for case, message in said.items():
        assert "capture bundle" in message, f"{case}: {message}"
        if case in REFUSED:
            assert REFUSED[case][1] in message, f"{case}: {message}"
    assert (victim / "pwned").read_text() == "original content\n"
    assert os.listdir(tmpdir) == []


def test_license_is_an_spdx_expression_the_build_backend_takes():
    """setuptools >= 77 warned twice per build that `license = { text = "MIT" }` is deprecated, padding the
    set-up log quickstart shows on a failure; the SPDX string needs setuptools 77, so the build requires it."""
    with open(os.path.join(REPO, "pyproject.toml"), "rb") as fh:
        pyproject = tomllib.load(fh)
    assert pyproject["project"]["license"] == "MIT"
    setuptools = next(r for r in pyproject["build-system"]["requires"] if r.startswith("setuptools"))
    assert not SpecifierSet(setuptools.removeprefix("setuptools")).contains("76.1.0")


@pytest.mark.slow
def test_building_the_package_gives_no_metadata_warning(tmp_path):
    """A real build, as pip does it in quickstart (isolated, with the newest setuptools from the index)."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):  # pyproject's license-files names LICENSE
        shutil.copy(os.path.join(REPO, name), pkg)
    shutil.copytree(SRC, pkg / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-v", "-w", str(tmp_path / "out"), str(pkg)]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    log = res.stdout + res.stderr
    if res.returncode and "No matching distribution found for setuptools" in log:
        pytest.skip("no package index reachable to fetch the build backend")
    assert res.returncode == 0, log[-3000:]
    assert "BuildBackendWarning" not in log and "project.license" not in log, log[-3000:]
    assert [w.endswith(".whl") for w in os.listdir(tmp_path / "out")] == [True]


def test_quickstart_makes_the_venv_with_the_system_python(tmp_path):
    """A python3 earlier on PATH (pyenv's shims, conda, /usr/local) is not the one quickstart builds on:
    the old loop took the first python3.13/3.12/3.11/python3 on PATH, here pyenv's 3.11.7 over Debian's."""
    if not any(_version(p) and _version(p) >= (3, 11, 0) for p in ("/usr/bin/python3", "/usr/bin/python3.11")):
        pytest.skip("no Python 3.11 or newer in /usr/bin")
    shims = tmp_path / "shims"
    shims.mkdir()
    for name in ("python3", "python3.11", "python3.12", "python3.13"):
        (shims / name).write_text("#!/bin/sh\nexit 0\n")  # passes any version check it is given
        (shims / name).chmod(0o755)
    env = {"PATH": f"{shims}:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": str(tmp_path)}
    res = subprocess.run(["bash", os.path.join(REPO, "quickstart"), "python"], env=env, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    python = res.stdout.strip()
    assert python.startswith("/usr/bin/python3"), python
    assert (_version(python) or (0, 0, 0)) >= (3, 11, 0)


def test_ci_installs_with_a_plain_path():
    """CI proves the README's install on a plain PATH, so a python3 found only through the caller's PATH
    (pyenv on this machine) cannot hide a failure with the system's Python."""
    with open(os.path.join(REPO, ".ci", "run")) as fh:
        script = fh.read()
    assert "env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin" in script and "./quickstart test" in script
