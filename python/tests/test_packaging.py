"""The pip package: a wheel and an sdist of this checkout build, the wheel
installs into a fresh virtual environment without an index, and what it
installs (`import memplan`, the `memplan` command) plans a graph and reports
the version of CMakeLists.txt.

Runs in the project's .venv (scripts/install_deps.sh python), which has the
build backend: the wheel is built with --no-build-isolation in build-pip/, the
build directory `pip install .` keeps, so that it rebuilds only what changed.
"""

import json
import pathlib
import re
import subprocess
import sys
import tarfile
import tomllib
import venv
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def cmake_version():
    text = (ROOT / "CMakeLists.txt").read_text()
    match = re.search(
        r"project\(memplan VERSION ([0-9]+\.[0-9]+\.[0-9]+)", text
    )
    assert match, "CMakeLists.txt names no project(memplan VERSION x.y.z)"
    return match.group(1)


def run(*args, cwd=ROOT):
    result = subprocess.run(
        [str(a) for a in args], cwd=cwd, capture_output=True, text=True
    )
    assert (
        result.returncode == 0
    ), f"{' '.join(map(str, args))} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    """A wheel and an sdist of the checkout."""
    out = tmp_path_factory.mktemp("dist")
    run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--disable-pip-version-check",
        "--no-deps",
        "--no-build-isolation",
        "--no-index",
        "-w",
        out,
        ".",
    )
    run(
        sys.executable,
        "-c",
        "import sys; from scikit_build_core.build import build_sdist; "
        "build_sdist(sys.argv[1])",
        out,
    )
    wheels = list(out.glob("memplan-*.whl"))
    sdists = list(out.glob("memplan-*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, list(out.iterdir())
    return wheels[0], sdists[0]


@pytest.fixture(scope="module")
def installed(dist, tmp_path_factory):
    """A fresh virtual environment with only the wheel installed."""
    env = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=True).create(env)
    run(
        env / "bin" / "python",
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "--no-deps",
        "--no-index",
        dist[0],
    )
    return env


def test_the_wheel_holds_the_package_and_the_command(dist):
    version = cmake_version()
    wheel = dist[0]
    assert wheel.name.startswith(f"memplan-{version}-")
    names = zipfile.ZipFile(wheel).namelist()
    assert "memplan/__init__.py" in names
    for module in [
        "torch/__init__.py",
        "torch/arena.py",
        "torch/export.py",
        "_fx_rules.py",
        "executorch.py",
    ]:
        assert f"memplan/{module}" in names, module
    assert any(
        re.fullmatch(r"memplan/_memplan\..*\.so", n) for n in names
    ), names
    assert f"memplan-{version}.data/scripts/memplan" in names, names
    # The C++ package beside the Python one, under memplan/.
    for path in [
        "memplan/lib/libmemplan.a",
        "memplan/include/memplan/memplan.h",
        "memplan/lib/cmake/memplan/memplanConfig.cmake",
        "memplan/lib/cmake/memplan/memplanTargets.cmake",
    ]:
        assert path in names, path
    # Nothing of the tests, benchmarks or examples.
    assert not [
        n for n in names if re.search(r"_test\b|bench|example|fuzz", n)
    ], names


def test_the_sdist_holds_the_sources_and_nothing_built(dist):
    version = cmake_version()
    sdist = dist[1]
    assert sdist.name == f"memplan-{version}.tar.gz"
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
        info = tar.extractfile(f"memplan-{version}/PKG-INFO").read().decode()
    for needed in [
        "pyproject.toml",
        "CMakeLists.txt",
        "src/planning/memplan.cc",
        "include/memplan/memplan.h",
        "python/memplan/__init__.py",
        "python/memplan_module.cc",
        "tools/memplan/main.cc",
        "LICENSE",
    ]:
        assert needed in names, needed
    assert not [
        n for n in names if n.startswith(("build", ".venv", "bench/data"))
    ]
    assert f"\nVersion: {version}\n" in info


def test_the_command_and_the_module_report_the_cmake_version(installed):
    version = cmake_version()
    assert (
        run(installed / "bin" / "memplan", "--version")
        == f"memplan {version}\n"
    )
    out = run(
        installed / "bin" / "python",
        "-c",
        "import importlib.metadata, memplan; "
        "print(memplan.__version__, importlib.metadata.version('memplan'), "
        "memplan.__file__)",
        cwd=installed,
    )
    module_version, dist_version, path = out.split()
    assert module_version == dist_version == version
    # The module of the fresh environment, not the checkout's or .venv's.
    assert pathlib.Path(path).is_relative_to(installed)


def test_the_installed_torch_package_has_every_job(installed):
    # The fresh environment has no PyTorch: memplan.torch imports it on use.
    out = run(
        installed / "bin" / "python",
        "-c",
        "import memplan.torch as mt; "
        "from memplan.torch import arena, dims, export, record; "
        "print(mt.__file__, callable(mt.trace), callable(mt.run_in_arena))",
        cwd=installed,
    )
    path, traces, runs = out.split()
    assert pathlib.Path(path).is_relative_to(installed)
    assert traces == runs == "True"


def test_the_installed_command_and_module_plan_the_same_graph(
    installed, tmp_path
):
    graph = {
        "format": "memplan-graph-v1",
        "tensors": [
            {"name": "x", "size": 4096, "kind": "input"},
            {"name": "a", "size": 8192},
            {"name": "b", "size": 2048},
            {"name": "y", "size": 4096, "kind": "output"},
        ],
        "ops": [
            {"name": "f", "inputs": ["x"], "outputs": ["a"]},
            {"name": "g", "inputs": ["a"], "outputs": ["b"]},
            {"name": "h", "inputs": ["b", "x"], "outputs": ["y"]},
        ],
    }
    graph_path = tmp_path / "graph.json"
    graph_path.write_text(json.dumps(graph))
    plan_path = tmp_path / "plan.json"
    run(
        installed / "bin" / "memplan",
        "plan",
        graph_path,
        "--planner=greedy_by_size",
        "--alignment=64",
        f"--out={plan_path}",
    )
    script = (
        "import sys, memplan\n"
        "graph = memplan.read_graph(sys.argv[1])\n"
        "plan = memplan.plan(graph, 'greedy_by_size', alignment=64)\n"
        "theirs = memplan.read_plan(sys.argv[2], sys.argv[1], alignment=64)\n"
        "memplan.verify(graph, theirs)\n"
        "print(plan.peak, theirs.peak, plan.lower_bound)\n"
    )
    peak, tool_peak, lower_bound = map(
        int,
        run(
            installed / "bin" / "python",
            "-c",
            script,
            graph_path,
            plan_path,
            cwd=tmp_path,
        ).split(),
    )
    assert peak == tool_peak
    # x, a and b are alive together while g runs: the bound, which
    # greedy_by_size reaches on this graph.
    assert lower_bound == 4096 + 8192 + 2048
    assert peak == lower_bound


def test_the_extras_pin_the_versions_of_requirements_txt():
    pins = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            name, version = line.split("==")
            pins[name] = version
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    extras = project["project"]["optional-dependencies"]
    named = [req for reqs in extras.values() for req in reqs]
    assert set(extras) == {"torch", "executorch", "test", "cpsat"}
    for req in named:
        name, version = req.split("==")
        assert (
            pins.get(name) == version
        ), f"{req} in pyproject.toml, {name}=={pins.get(name)} in requirements.txt"
    # The backend pyproject.toml builds with is the one .venv has.
    for req in project["build-system"]["requires"]:
        name, version = req.split("==")
        assert pins.get(name) == version, req


def test_a_cmake_project_finds_the_installed_cpp_package(installed, tmp_path):
    cmake_dir = run(
        installed / "bin" / "python",
        "-c",
        "import memplan; print(memplan.cmake_dir())",
        cwd=installed,
    ).strip()
    assert pathlib.Path(cmake_dir).is_relative_to(installed), cmake_dir
    project = tmp_path / "project"
    project.mkdir()
    (project / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.25)\n"
        "project(user LANGUAGES CXX)\n"
        "find_package(memplan CONFIG REQUIRED)\n"
        "get_target_property(inc memplan::memplan "
        "INTERFACE_INCLUDE_DIRECTORIES)\n"
        'message(STATUS "memplan ${memplan_VERSION} at ${inc}")\n'
    )
    out = run(
        "cmake",
        "-S",
        project,
        "-B",
        tmp_path / "build",
        f"-Dmemplan_DIR={cmake_dir}",
    )
    include = pathlib.Path(cmake_dir).parents[2] / "include"
    assert f"memplan {cmake_version()} at {include}" in out, out


def test_cpsat_is_found_through_the_ortools_package_beside_it(
    installed, tmp_path
):
    """Without ortools the wheel has no cpsat; with the package's library in
    the environment's site-packages (here .venv's, linked), both the command
    and the module find and use it."""
    assert "cpsat" not in run(installed / "bin" / "memplan", "planners")
    ortools = pytest.importorskip("ortools")
    libs = pathlib.Path(ortools.__file__).parent / ".libs"
    if not list(libs.glob("libortools.so.*")):
        pytest.skip(f"no libortools.so.* in {libs}")
    site = run(
        installed / "bin" / "python",
        "-c",
        "import sysconfig; print(sysconfig.get_paths()['platlib'])",
    ).strip()
    fake = pathlib.Path(site) / "ortools"
    fake.mkdir()
    try:
        (fake / ".libs").symlink_to(libs)
        assert "cpsat" in run(installed / "bin" / "memplan", "planners")
        out = run(
            installed / "bin" / "python",
            "-c",
            "import memplan; print('cpsat' in memplan.planners())",
            cwd=tmp_path,
        )
        assert out.strip() == "True"
    finally:
        (fake / ".libs").unlink(missing_ok=True)
        fake.rmdir()
