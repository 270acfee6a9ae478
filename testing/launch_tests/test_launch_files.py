"""Tests of launch/gp_learning_node.launch.py and launch/mujoco_sim.launch.py.

    GPN_INSTALL=<colcon install base> <jazzy venv python> -m pytest testing/launch_tests -q

(with the Jazzy environment sourced: `source .venv-jazzy/gpn/env.sh`).

There is no ROS 2 `launch` on PyPI, so the launch files run against the stand-in of
testing/launch_standin (put first on sys.path here), which resolves their actions into the
command lines ros2 launch would run (launch_ros Jazzy's Node composition). Three layers:
- the launch descriptions: arguments, descriptions, defaults, refusals (no install needed);
- resolution in an install tree: the exact node / driver command lines and the files they
  name. Run on a fake install tree built here (ament index markers + copies of the share
  folders, no executable worth running) and, with GPN_INSTALL, on the real colcon tree;
  the launch-set parameter file is also read by rcl through an rclpy node (Jazzy venv);
- with GPN_INSTALL: the node started for a moment with exactly the resolved command line,
  from another working directory, on its own DDS domain kept on loopback; it must log
  `Ctrl-C stops` within READY_TIMEOUT_S and exit 0 on SIGINT.
GPN_INSTALL unset: those tests are skipped, or fail when CI is set (CI must test the tree).
"""

import ast
import json
import os
import queue
import select
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
STANDIN = REPO / "testing" / "launch_standin"
sys.path.insert(0, str(STANDIN))

import launch  # noqa: E402  (the stand-in)
from launch import LaunchDescription  # noqa: E402
from launch.standin import UndeclaredLaunchArgument, declared_arguments  # noqa: E402
from launch.standin import load_launch_file, resolve  # noqa: E402

if not Path(launch.__file__).resolve().is_relative_to(STANDIN):
    raise ImportError(f"`launch` is {launch.__file__}, not the stand-in of {STANDIN}")

PACKAGE = "gp_learning_node"
PLUGIN_PACKAGES = ("gpn_skygp", "gpn_rcagp", "gpn_vbks", "gpn_loggp")
SHARE_DIRS = ("launch", "config", "urdf", "mujoco_driver")
NODE_LAUNCH = "gp_learning_node.launch.py"
SIM_LAUNCH = "mujoco_sim.launch.py"
READY = "Ctrl-C stops"
WAITING = "waiting for the robot description"
READY_TIMEOUT_S = 20.0
STOP_TIMEOUT_S = 20.0
SIGINT_SETTLE_S = 2.0

# The documented defaults ('' = the parameter file's value).
NODE_ARGS = {
    "params_file": "the installed config/sim_default.yaml",
    "plugin": "",
    "namespace": "",
    "use_sim_time": "",
    "urdf": "",
    "mode": "",
    "autostart": "",
    "rerun": "",
}
SIM_ARGS = {
    "python": "python3",
    "params_file": "the installed config/sim_default.yaml",
    "plugin": "",
    "urdf": "the installed urdf/panda.urdf",
    "autostart": "true",
    "on_command_timeout": "",
}


# ---------------------------------------------------------------------------------------------
# install trees


class Tree:
    """An install tree: its base, the ament prefixes to search (AMENT_PREFIX_PATH order)."""

    def __init__(self, kind, base, prefixes):
        self.kind = kind
        self.base = Path(base)
        self.prefixes = [str(p) for p in prefixes]

    def prefix(self, package):
        for p in self.prefixes:
            if (Path(p) / "share/ament_index/resource_index/packages" / package).is_file():
                return Path(p)
        raise LookupError(f"{package} is not in {self.prefixes}")

    @property
    def share(self):
        return self.prefix(PACKAGE) / "share" / PACKAGE

    @property
    def executable(self):
        return self.prefix(PACKAGE) / "lib" / PACKAGE / PACKAGE

    def launch_file(self, name):
        return self.share / "launch" / name

    def contains(self, path):
        # abspath, not resolve(): a --symlink-install tree links to the sources.
        return Path(os.path.abspath(path)).is_relative_to(os.path.abspath(self.base))


def ament_prefixes(base):
    """The prefixes of a colcon install base: itself (merged layout) and/or each package
    folder (isolated layout) holding an ament index."""
    base = Path(base)
    found = []
    if (base / "share/ament_index/resource_index/packages").is_dir():
        found.append(base)
    if base.is_dir():
        for child in sorted(base.iterdir()):
            if (child / "share/ament_index/resource_index/packages").is_dir():
                found.append(child)
    return found


def env_prefixes():
    return [p for p in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]


def require(what, why):
    """Skip (fail under CI) a test that needs `what`."""
    msg = f"{what} is needed: {why}"
    if os.environ.get("CI"):
        pytest.fail(f"{msg} (CI is set: this test must run)", pytrace=False)
    pytest.skip(msg)


@pytest.fixture(scope="session")
def fake_tree(tmp_path_factory):
    """An isolated-layout install tree: ament markers for the node and plugin packages,
    copies of the share folders, and an executable stub in lib/ (never run)."""
    base = tmp_path_factory.mktemp("fake_install")
    for package in (PACKAGE,) + PLUGIN_PACKAGES:
        index = base / package / "share/ament_index/resource_index/packages"
        index.mkdir(parents=True)
        (index / package).write_text("")
    share = base / PACKAGE / "share" / PACKAGE
    for d in SHARE_DIRS:
        shutil.copytree(
            REPO / d, share / d, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache")
        )
    lib = base / PACKAGE / "lib" / PACKAGE
    lib.mkdir(parents=True)
    stub = lib / PACKAGE
    stub.write_text("#!/bin/sh\necho 'the fake install tree has no node' >&2\nexit 3\n")
    stub.chmod(0o755)
    return Tree("fake", base, ament_prefixes(base))


@pytest.fixture(scope="session")
def install_tree():
    """The colcon install tree of $GPN_INSTALL (skipped without it; fails under CI)."""
    base = os.environ.get("GPN_INSTALL")
    if not base:
        require(
            "GPN_INSTALL",
            "set it to the colcon install base of gp_learning_node (the folder holding "
            "setup.bash; `colcon build --install-base DIR`)",
        )
    prefixes = ament_prefixes(base)
    if not prefixes:
        pytest.fail(f"GPN_INSTALL={base}: no ament index there (not a colcon install base)")
    tree = Tree("install", base, prefixes + [p for p in env_prefixes() if Path(p) not in prefixes])
    try:
        tree.prefix(PACKAGE)
    except LookupError:
        pytest.fail(f"GPN_INSTALL={base}: package {PACKAGE} is not installed there")
    return tree


@pytest.fixture(params=["fake", "install"])
def tree(request):
    return request.getfixturevalue(f"{request.param}_tree")


def resolved(tree, launch_name, arguments, tmp_path, **kwargs):
    ld = load_launch_file(tree.launch_file(launch_name))
    return resolve(ld, arguments, ament_prefix_path=tree.prefixes, tmp_dir=tmp_path, **kwargs)


def params_file_of(process):
    """(launch's --params-file, its content) of a resolved node."""
    assert len(process.parameter_arguments) == 1, process.parameter_arguments
    path, is_file = process.parameter_arguments[0]
    assert is_file
    return path, yaml.safe_load(Path(path).read_text())


def node_cmd(tree, namespace, params_file, launch_params=None):
    cmd = [
        str(tree.executable),
        "run",
        "--params",
        str(params_file),
        "--ros-args",
        "-r",
        "__node:=gp_learning_node",
        "-r",
        f"__ns:={namespace}",
    ]
    return cmd if launch_params is None else cmd + ["--params-file", launch_params]


# ---------------------------------------------------------------------------------------------
# the launch descriptions


@pytest.mark.parametrize(
    ("launch_name", "expected"), [(NODE_LAUNCH, NODE_ARGS), (SIM_LAUNCH, SIM_ARGS)]
)
def test_launch_file_builds_and_declares_documented_arguments(launch_name, expected):
    ld = load_launch_file(REPO / "launch" / launch_name)
    assert isinstance(ld, LaunchDescription)
    declared = declared_arguments(ld)
    assert sorted(declared) == sorted(expected)
    for name, arg in declared.items():
        assert arg.description and arg.description != "no description given", name
        assert arg.default_value is not None, f"{name} has a default"


@pytest.mark.parametrize("launch_name", [NODE_LAUNCH, SIM_LAUNCH])
def test_defaults(fake_tree, launch_name, tmp_path):
    r = resolved(fake_tree, launch_name, {}, tmp_path)
    share = fake_tree.share
    want = dict(NODE_ARGS if launch_name == NODE_LAUNCH else SIM_ARGS)
    want["params_file"] = str(share / "config/sim_default.yaml")
    if launch_name == SIM_LAUNCH:
        want["urdf"] = str(share / "urdf/panda.urdf")
    assert {k: r.configurations[k] for k in want} == want
    assert r.warnings == []


@pytest.mark.parametrize("launch_name", [NODE_LAUNCH, SIM_LAUNCH])
def test_undeclared_argument_is_refused(fake_tree, launch_name, tmp_path):
    with pytest.raises(UndeclaredLaunchArgument, match="plugn"):
        resolved(fake_tree, launch_name, {"plugn": "rcagp"}, tmp_path)


def test_empty_arguments_set_nothing_and_given_ones_override(fake_tree, tmp_path):
    r = resolved(fake_tree, NODE_LAUNCH, {}, tmp_path)
    assert r.process(PACKAGE).parameter_arguments == [], "the parameter file decides"
    r = resolved(fake_tree, NODE_LAUNCH, {"mode": "learn"}, tmp_path)
    _, content = params_file_of(r.process(PACKAGE))
    assert content == {"/gp_learning_node": {"ros__parameters": {"ros.mode": "learn"}}}


def test_mode_outside_its_choices_is_refused(fake_tree, tmp_path):
    with pytest.raises(RuntimeError, match='"mode" provided value "fast" is not valid'):
        resolved(fake_tree, NODE_LAUNCH, {"mode": "fast"}, tmp_path)


def test_use_sim_time_must_be_a_boolean(fake_tree, tmp_path):
    for ok, value in [("True", True), ("1", True), ("false", False)]:
        r = resolved(fake_tree, NODE_LAUNCH, {"use_sim_time": ok}, tmp_path)
        _, content = params_file_of(r.process(PACKAGE))
        assert content["/gp_learning_node"]["ros__parameters"]["use_sim_time"] is value
    with pytest.raises(ValueError, match="maybe"):
        resolved(fake_tree, NODE_LAUNCH, {"use_sim_time": "maybe"}, tmp_path)


def overrides_of(r):
    """The launch-set parameters of the resolved node ({} when launch passes none)."""
    node = r.process(PACKAGE)
    if not node.parameter_arguments:
        return {}
    _, content = params_file_of(node)
    return next(iter(content.values()))["ros__parameters"]


def test_rerun_sets_ros_rerun_as_a_string_and_empty_leaves_the_file(fake_tree, tmp_path):
    for given in ["save run.rrd", "connect 10.0.0.2:9876", "spawn"]:
        overrides = overrides_of(resolved(fake_tree, NODE_LAUNCH, {"rerun": given}, tmp_path))
        assert overrides == {"ros.rerun": given}, given
    r = resolved(fake_tree, NODE_LAUNCH, {"rerun": ""}, tmp_path)
    assert r.process(PACKAGE).parameter_arguments == []


def test_autostart_sets_ros_active_and_empty_leaves_the_file(fake_tree, tmp_path):
    for given, value in [("true", True), ("True", True), ("1", True), ("false", False)]:
        overrides = overrides_of(resolved(fake_tree, NODE_LAUNCH, {"autostart": given}, tmp_path))
        assert overrides == {"ros.active": value}, given
        assert type(overrides["ros.active"]) is bool, "a bool, as the node declares it"
    # Empty (the default): no override, the file's ros.active (shipped: false) decides.
    for args in ({}, {"autostart": ""}):
        r = resolved(fake_tree, NODE_LAUNCH, args, tmp_path)
        assert r.process(PACKAGE).parameter_arguments == [], args
    with pytest.raises(ValueError, match="maybe"):
        resolved(fake_tree, NODE_LAUNCH, {"autostart": "maybe"}, tmp_path)


def test_mujoco_sim_node_is_active_by_default(fake_tree, tmp_path):
    """The simulated robot is commanded from the start (the shipped file's ros.active is
    false); autostart:=false makes it inactive, autostart:='' leaves the file's."""
    shipped = yaml.safe_load((REPO / "config/sim_default.yaml").read_text())
    assert shipped["gp_learning_node"]["ros__parameters"]["ros"]["active"] is False
    overrides = overrides_of(resolved(fake_tree, SIM_LAUNCH, {}, tmp_path))
    assert overrides["ros.active"] is True
    overrides = overrides_of(resolved(fake_tree, SIM_LAUNCH, {"autostart": "false"}, tmp_path))
    assert overrides["ros.active"] is False
    overrides = overrides_of(resolved(fake_tree, SIM_LAUNCH, {"autostart": ""}, tmp_path))
    assert "ros.active" not in overrides
    assert overrides["ros.mode"] == "control", "the rest stays"


def test_on_command_timeout_reaches_the_driver_only_when_given(fake_tree, tmp_path):
    default = resolved(fake_tree, SIM_LAUNCH, {}, tmp_path).process("mujoco_driver").cmd
    assert "--on-command-timeout" not in default, "'' passes nothing: the driver's default"
    empty = resolved(fake_tree, SIM_LAUNCH, {"on_command_timeout": ""}, tmp_path)
    assert empty.process("mujoco_driver").cmd == default
    for value in ("hold", "stop"):
        r = resolved(fake_tree, SIM_LAUNCH, {"on_command_timeout": value}, tmp_path)
        assert r.process("mujoco_driver").cmd == default + ["--on-command-timeout", value]
        assert [type(a).__name__ for a in r.process("mujoco_driver").on_exit] == ["Shutdown"]
    with pytest.raises(RuntimeError, match='"on_command_timeout" provided value "pause"'):
        resolved(fake_tree, SIM_LAUNCH, {"on_command_timeout": "pause"}, tmp_path)


def driver_cli_choices(option):
    """The `choices` of `option` in mujoco_driver's argparse parser, read from the source
    (importing the driver needs mujoco)."""
    tree = ast.parse((REPO / "mujoco_driver/gpn_mujoco/cli.py").read_text())
    for call in ast.walk(tree):
        if (
            isinstance(call, ast.Call)
            and getattr(call.func, "attr", None) == "add_argument"
            and call.args
            and isinstance(call.args[0], ast.Constant)
            and call.args[0].value == option
        ):
            for kw in call.keywords:
                if kw.arg == "choices":
                    return list(ast.literal_eval(kw.value))
    raise LookupError(f"{option} with choices is not in mujoco_driver/gpn_mujoco/cli.py")


def test_on_command_timeout_choices_are_the_drivers():
    declared = declared_arguments(load_launch_file(REPO / "launch" / SIM_LAUNCH))
    choices = declared["on_command_timeout"].choices
    assert choices[0] == "" and sorted(choices[1:]) == sorted(
        driver_cli_choices("--on-command-timeout")
    )


def test_plugin_comes_with_its_default_configuration(fake_tree, tmp_path):
    for launch_name in (NODE_LAUNCH, SIM_LAUNCH):
        r = resolved(fake_tree, launch_name, {"plugin": "1"}, tmp_path)
        _, content = params_file_of(r.process(PACKAGE))
        overrides = content["/gp_learning_node"]["ros__parameters"]
        # A string, not YAML's integer; model.config the JSON text of an empty object.
        assert (overrides["model.plugin"], overrides["model.config"]) == ("1", "{}")


def test_xacro_and_missing_urdf_are_refused(fake_tree, tmp_path):
    xacro = tmp_path / "robot.urdf.xacro"
    xacro.write_text("<robot/>")
    with pytest.raises(RuntimeError, match="xacro"):
        resolved(fake_tree, NODE_LAUNCH, {"urdf": str(xacro)}, tmp_path)
    with pytest.raises(RuntimeError, match="no such file"):
        resolved(fake_tree, NODE_LAUNCH, {"urdf": str(tmp_path / "missing.urdf")}, tmp_path)


# ---------------------------------------------------------------------------------------------
# resolution in an install tree


def test_node_launch_defaults(tree, tmp_path):
    r = resolved(tree, NODE_LAUNCH, {}, tmp_path)
    assert [p.name for p in r.processes] == [PACKAGE], "one process: the node"
    node = r.process(PACKAGE)
    # No overrides: the parameter file decides (robot.urdf '' → the robot_description topic).
    assert node.cmd == node_cmd(tree, "/", tree.share / "config/sim_default.yaml")
    assert node.node_name == "/gp_learning_node"
    assert node.additional_env == {}
    assert_files_in_tree(tree, node)


def test_node_launch_custom(tree, tmp_path):
    urdf = tree.share / "urdf/panda.urdf"
    args = {
        "namespace": "/robot1",
        "plugin": "rcagp",
        "use_sim_time": "true",
        "urdf": str(urdf),
        "mode": "learn",
        "autostart": "true",
    }
    r = resolved(tree, NODE_LAUNCH, args, tmp_path)
    node = r.process(PACKAGE)
    launch_params, content = params_file_of(node)
    assert node.cmd == node_cmd(tree, "/robot1", tree.share / "config/sim_default.yaml", launch_params)
    assert node.node_name == "/robot1/gp_learning_node"
    assert content == {
        "/robot1/gp_learning_node": {
            "ros__parameters": {
                "use_sim_time": True,
                "model.plugin": "rcagp",
                "model.config": "{}",
                "ros.mode": "learn",
                "robot.urdf": str(urdf),
                "ros.active": True,
            }
        }
    }
    assert_files_in_tree(tree, node)


def test_node_launch_relative_namespace_urdf_and_params_file(tree, tmp_path, monkeypatch):
    work = tmp_path / "work"
    (work / "robots").mkdir(parents=True)
    shutil.copy(tree.share / "urdf/panda.urdf", work / "robots/arm.urdf")
    shutil.copy(tree.share / "config/sim_default.yaml", work / "params.yaml")
    monkeypatch.chdir(work)
    args = {"namespace": "robot1", "urdf": "robots/arm.urdf", "params_file": "params.yaml"}
    node = resolved(tree, NODE_LAUNCH, args, tmp_path).process(PACKAGE)
    launch_params, content = params_file_of(node)
    # The params file is passed as given (the node runs in ros2 launch's directory);
    # the URDF is made absolute by the launch file.
    assert node.cmd == node_cmd(tree, "/robot1", "params.yaml", launch_params)
    overrides = content["/robot1/gp_learning_node"]["ros__parameters"]
    assert overrides["robot.urdf"] == str(work / "robots/arm.urdf")


def test_mujoco_sim_defaults(tree, tmp_path):
    r = resolved(tree, SIM_LAUNCH, {}, tmp_path)
    assert [p.name for p in r.processes] == ["mujoco_driver", PACKAGE]
    share = tree.share
    params = share / "config/sim_default.yaml"
    urdf = share / "urdf/panda.urdf"
    driver = r.process("mujoco_driver")
    assert driver.cmd == [
        "python3",
        str(share / "mujoco_driver/mujoco_driver.py"),
        "--params",
        str(params),
        "--urdf",
        str(urdf),
        "--publish-reference",
        "--localhost-only",
    ]
    assert [type(a).__name__ for a in driver.on_exit] == ["Shutdown"]
    node = r.process(PACKAGE)
    launch_params, content = params_file_of(node)
    assert node.cmd == node_cmd(tree, "/", params, launch_params)
    assert content == {
        "/gp_learning_node": {
            "ros__parameters": {
                "use_sim_time": False,
                "ros.mode": "control",
                "robot.urdf": str(urdf),
                "ros.active": True,
            }
        }
    }
    assert node.additional_env == {"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    assert_files_in_tree(tree, node)
    assert_files_in_tree(tree, driver)


def test_mujoco_sim_custom(tree, tmp_path):
    urdf = tree.share / "urdf/two_link_arm.urdf"
    args = {
        "python": "/opt/venv/bin/python",
        "plugin": "vbks",
        "urdf": str(urdf),
        "autostart": "false",
        "on_command_timeout": "hold",
    }
    r = resolved(tree, SIM_LAUNCH, args, tmp_path)
    driver = r.process("mujoco_driver")
    assert driver.cmd[0] == "/opt/venv/bin/python"
    assert driver.cmd[driver.cmd.index("--urdf") + 1] == str(urdf)
    assert driver.cmd[-2:] == ["--on-command-timeout", "hold"]
    _, content = params_file_of(r.process(PACKAGE))
    overrides = content["/gp_learning_node"]["ros__parameters"]
    assert (overrides["model.plugin"], overrides["robot.urdf"]) == ("vbks", str(urdf))
    assert overrides["ros.active"] is False
    assert_files_in_tree(tree, driver)


def assert_files_in_tree(tree, process):
    """Every file the process's command names (executable, script, --params, --urdf,
    robot.urdf) exists inside the install tree."""
    cmd = process.cmd
    named = []
    if process.node_name is not None:
        exe = Path(cmd[0])
        assert exe == tree.executable and os.access(exe, os.X_OK), exe
        named.append(exe)
        for path, _ in process.parameter_arguments:
            overrides = next(iter(yaml.safe_load(Path(path).read_text()).values()))
            urdf = overrides["ros__parameters"].get("robot.urdf")
            if urdf:
                named.append(Path(urdf))
    else:
        named.append(Path(cmd[1]))  # the driver script
    for flag in ("--params", "--urdf"):
        if flag in cmd:
            named.append(Path(cmd[cmd.index(flag) + 1]))
    for path in named:
        assert path.is_file(), f"{path} does not exist"
        assert tree.contains(path), f"{path} is outside the install tree {tree.base}"


def flat_keys(mapping, prefix=""):
    """Every dotted key path of a nested mapping (inner ones too: model.config is one)."""
    out = set()
    for k, v in mapping.items():
        name = f"{prefix}.{k}" if prefix else k
        out.add(name)
        if isinstance(v, dict):
            out |= flat_keys(v, name)
    return out


def test_launch_set_parameters_are_parameters_of_the_node(tree, tmp_path):
    """Each override the launch files set is a key of the installed parameter file, and (real
    tree) a parameter `gp_learning_node run --list-params` lists: a misspelt one would only be
    warned about by the node."""
    shipped = yaml.safe_load((tree.share / "config/sim_default.yaml").read_text())
    known = flat_keys(shipped["gp_learning_node"]["ros__parameters"])
    args = {
        "urdf": str(tree.share / "urdf/panda.urdf"),
        "plugin": "rcagp",
        "use_sim_time": "true",
        "mode": "learn",
        "autostart": "true",
    }
    keys = set()
    for launch_name, a in [(NODE_LAUNCH, args), (SIM_LAUNCH, {"plugin": "vbks"})]:
        for p in resolved(tree, launch_name, a, tmp_path).processes:
            for path, _ in p.parameter_arguments:
                content = yaml.safe_load(Path(path).read_text())
                keys |= set(next(iter(content.values()))["ros__parameters"])
    assert keys == {
        "use_sim_time", "model.plugin", "model.config", "ros.mode", "robot.urdf", "ros.active"
    }
    assert keys <= known, keys - known
    if tree.kind == "install":
        env = install_environment(tree)
        out = subprocess.run(
            [str(tree.executable), "run", "--list-params"],
            env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60,
        )
        assert out.returncode == 0, out.stderr
        for key in keys:
            assert f"`{key}`" in out.stdout, (key, out.stdout[:2000])


RCLPY_PEER = textwrap.dedent(
    """
    import json, sys
    import rclpy
    from rclpy.node import Node
    rclpy.init(args=["launch_params_check"] + sys.argv[1:])
    node = Node("unnamed", automatically_declare_parameters_from_overrides=True)
    params = {n: [p.type_.name, p.value] for n, p in node._parameters.items()}
    print(json.dumps({"node": node.get_fully_qualified_name(), "params": params}))
    node.destroy_node()
    rclpy.shutdown()
    """
)


@pytest.mark.parametrize(
    ("args", "fqn"),
    [
        ({"use_sim_time": "false", "plugin": "skygp", "mode": "control", "autostart": "true"},
         "/gp_learning_node"),
        ({"namespace": "/robot1", "use_sim_time": "true", "plugin": "rcagp", "mode": "learn",
          "autostart": "false"},
         "/robot1/gp_learning_node"),
    ],
)
def test_rcl_reads_the_launch_parameters_for_the_launched_node(fake_tree, tmp_path, args, fqn):
    """rcl (through rclpy) takes the `--ros-args` part of the resolved command: the node gets
    launch's name and namespace, and the launch-set parameters with their types."""
    try:
        import rclpy  # noqa: F401
    except ImportError as e:
        require("rclpy (the Jazzy venv, `source .venv-jazzy/gpn/env.sh`)", str(e))
    node = resolved(fake_tree, NODE_LAUNCH, args, tmp_path).process(PACKAGE)
    ros_args = node.cmd[node.cmd.index("--ros-args"):]
    env = dict(os.environ, **ros_env(tmp_path, domain_id(1)))
    out = subprocess.run(
        [sys.executable, "-c", RCLPY_PEER, *ros_args],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["node"] == fqn
    p = got["params"]
    assert p["use_sim_time"] == ["BOOL", args["use_sim_time"] == "true"]
    assert p["model.plugin"] == ["STRING", args["plugin"]]
    assert p["model.config"] == ["STRING", "{}"]
    assert p["ros.mode"] == ["STRING", args["mode"]]
    assert p["ros.active"] == ["BOOL", args["autostart"] == "true"]


# ---------------------------------------------------------------------------------------------
# the node started with the resolved command line (real install tree)


def domain_id(salt):
    """A DDS domain for one test (concurrent runs and tests must not meet)."""
    return 21 + (os.getpid() * 13 + salt * 37) % 200


def ros_env(tmp_path, domain):
    log = tmp_path / "ros_log"
    log.mkdir(exist_ok=True)
    return {
        "ROS_DOMAIN_ID": str(domain),
        "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST",
        "ROS_LOG_DIR": str(log),
        "ROS_HOME": str(tmp_path / "ros_home"),
    }


_INSTALL_ENV = {}


def install_environment(tree):
    """The environment after `source <install>/setup.bash` (as a user runs the tree);
    without a setup.bash, the install prefixes put first on AMENT_PREFIX_PATH."""
    key = str(tree.base)
    if key in _INSTALL_ENV:
        return dict(_INSTALL_ENV[key])
    setup = tree.base / "setup.bash"
    if setup.is_file():
        out = subprocess.run(
            ["bash", "-c", 'source "$0" >/dev/null && env -0', str(setup)],
            capture_output=True, timeout=60,
        )
        assert out.returncode == 0, f"source {setup} failed: {out.stderr.decode(errors='replace')}"
        env = dict(
            item.split("=", 1) for item in out.stdout.decode().split("\0") if "=" in item
        )
    else:
        env = dict(os.environ)
        prefixes = [str(p) for p in ament_prefixes(tree.base)]
        env["AMENT_PREFIX_PATH"] = os.pathsep.join(prefixes + env_prefixes())
    _INSTALL_ENV[key] = env
    return dict(env)


class Started:
    """A process whose stderr lines are collected by a thread (it never blocks on a pipe)."""

    def __init__(self, cmd, env, cwd, stdout):
        self.proc = subprocess.Popen(
            cmd, env=env, cwd=cwd, stdout=stdout, stderr=subprocess.PIPE, text=True
        )
        self.lines = []
        self.new = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stderr:
            self.lines.append(line)
            self.new.put(line)
        self.new.put(None)

    def wait_for(self, text, timeout):
        """True once a stderr line contains `text`; False on exit or timeout."""
        if any(text in line for line in self.lines):
            return True
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self.new.get(timeout=left)
            except queue.Empty:
                return False
            if line is None:
                return False
            if text in line:
                return True
        return False

    def stop(self, sig=signal.SIGINT, timeout=STOP_TIMEOUT_S):
        """Sends `sig`; returns the exit code (None: it did not stop and was killed)."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            code = None
        self.reader.join(timeout=5)
        return code

    @property
    def log(self):
        return "".join(self.lines)


PUBLISHER = textwrap.dedent(
    """
    import sys
    import rclpy
    from rclpy.executors import ExternalShutdownException
    from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
    from std_msgs.msg import String
    topic, path = sys.argv[1], sys.argv[2]
    rclpy.init()
    node = rclpy.create_node("robot_description_test_publisher")
    qos = QoSProfile(
        depth=1,
        history=HistoryPolicy.KEEP_LAST,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.TRANSIENT_LOCAL,
    )
    pub = node.create_publisher(String, topic, qos)
    pub.publish(String(data=open(path).read()))
    print("published", pub.topic_name, flush=True)
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    """
)


def first_line(proc, timeout):
    """The first stdout line of `proc` ('' if none within `timeout` s or it exited)."""
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    return proc.stdout.readline() if ready else ""


def run_node_briefly(process, tree, tmp_path, salt, description=None):
    """Starts the resolved node `process` exactly as resolved (from a scratch directory, on
    its own domain, loopback only), optionally after a publisher of the robot description
    (`description`: (topic, URDF file)); waits for READY, sends SIGINT; returns the log."""
    env = install_environment(tree)
    env.update(ros_env(tmp_path, domain_id(salt)))
    env = process.env(env)
    work = tmp_path / "cwd"
    work.mkdir()
    publisher = None
    try:
        if description is not None:
            topic, urdf = description
            publisher = subprocess.Popen(
                [sys.executable, "-c", PUBLISHER, topic, str(urdf)],
                env=env, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            )
            line = first_line(publisher, 30.0)
            assert line.startswith("published"), (
                f"the robot_description publisher did not start: {line!r} "
                f"{publisher.stderr.read() if publisher.poll() is not None else ''}"
            )
            assert line.split()[1] == topic
        with open(tmp_path / "node.stdout", "w") as stdout:
            node = Started(process.cmd, env, work, stdout)
            ready = node.wait_for(READY, READY_TIMEOUT_S)
            if ready:
                # gp-node run logs READY before it installs its SIGINT handler
                # (crates/ros_io/src/run.rs: the log line, then the loop parts and endpoints,
                # then stop_on_signal()): a SIGINT in between kills it by the signal.
                time.sleep(SIGINT_SETTLE_S)
            code = node.stop()
        log = node.log
        sys.stderr.write(f"--- node log ({' '.join(process.cmd)}):\n{log}")
        assert ready, f"the node did not log {READY!r} within {READY_TIMEOUT_S} s:\n{log}"
        assert code == 0, f"the node exited with {code} after SIGINT:\n{log}"
        assert "ignored the --ros-args parameter" not in log, log
        return log
    finally:
        if publisher is not None and publisher.poll() is None:
            publisher.send_signal(signal.SIGINT)
            try:
                publisher.wait(timeout=10)
            except subprocess.TimeoutExpired:
                publisher.kill()
                publisher.wait()


def test_node_launch_defaults_start_the_node_with_the_robot_description_topic(install_tree, tmp_path):
    r = resolved(install_tree, NODE_LAUNCH, {}, tmp_path)
    node = r.process(PACKAGE)
    urdf = install_tree.share / "urdf/panda.urdf"
    log = run_node_briefly(node, install_tree, tmp_path, 2, ("/robot_description", urdf))
    # Either it waited for the description and got it, or the description was there at once.
    if WAITING in log:
        assert log.index(WAITING) < log.index(READY)
    assert "/gp_learning_node" in log


def test_node_launch_custom_starts_the_node_with_the_urdf_argument(install_tree, tmp_path):
    args = {
        "namespace": "/robot1",
        "plugin": "rcagp",
        "use_sim_time": "true",
        "urdf": str(install_tree.share / "urdf/panda.urdf"),
    }
    node = resolved(install_tree, NODE_LAUNCH, args, tmp_path).process(PACKAGE)
    log = run_node_briefly(node, install_tree, tmp_path, 3)
    assert WAITING not in log, "robot.urdf given: no waiting for robot_description"
    assert "/robot1/gp_learning_node" in log, "the launch's namespace is in force"
    assert "rcagp" in log, "the launch's plugin is in force"


def test_mujoco_sim_node_part_starts(install_tree, tmp_path):
    """The node of mujoco_sim.launch.py (not the driver: that needs mujoco + cyclonedds)."""
    node = resolved(install_tree, SIM_LAUNCH, {}, tmp_path).process(PACKAGE)
    log = run_node_briefly(node, install_tree, tmp_path, 4)
    assert WAITING not in log


def test_mujoco_sim_closes_the_loop_with_the_driver(install_tree, tmp_path):
    """Both processes of mujoco_sim.launch.py as resolved (a 3 s run of a copy of the shipped
    parameter file): the driver completes its lock-step run, so the node answered every state.
    Needs GPN_PYTHON, a Python with mujoco and cyclonedds (ci/test.sh sets it); optional."""
    python = os.environ.get("GPN_PYTHON")
    if not python:
        pytest.skip("GPN_PYTHON (a Python with mujoco + cyclonedds) is not set")
    params = tmp_path / "params.yaml"
    text = (install_tree.share / "config/sim_default.yaml").read_text()
    assert "duration_s: 30.0" in text
    params.write_text(text.replace("duration_s: 30.0", "duration_s: 3.0", 1))
    r = resolved(install_tree, SIM_LAUNCH, {"python": python, "params_file": str(params)}, tmp_path)
    env = install_environment(install_tree)
    env.update(ros_env(tmp_path, domain_id(5)))
    work = tmp_path / "cwd"
    work.mkdir()
    driver_p, node_p = r.process("mujoco_driver"), r.process(PACKAGE)
    with open(tmp_path / "node.stdout", "w") as node_out:
        node = Started(node_p.cmd, node_p.env(env), work, node_out)
        try:
            driver = subprocess.run(
                driver_p.cmd, env=driver_p.env(env), cwd=work,
                capture_output=True, text=True, timeout=180,
            )
        finally:
            # As the launch's Shutdown on the driver's exit: SIGINT to the node.
            node.wait_for(READY, READY_TIMEOUT_S)
            time.sleep(SIGINT_SETTLE_S)
            code = node.stop()
    sys.stderr.write(f"--- driver:\n{driver.stderr}\n--- node:\n{node.log}")
    assert driver.returncode == 0, f"the driver's run did not complete:\n{driver.stderr}"
    assert code == 0, f"the node exited with {code} after SIGINT:\n{node.log}"



# ---------------------------------------------------------------------------------------------
# Gazebo: launch/gazebo.launch.py and config/gazebo/empty.sdf (Gazebo itself cannot run
# here: everything up to it is checked — the files parse, the world is SDF with the
# controller manager's period, every file named is installed, the controllers, joints and
# topics agree with the node's).

GAZEBO_LAUNCH = "gazebo.launch.py"
GAZEBO_ARGS = {
    "urdf": "the installed urdf/panda.urdf",
    "world": "the installed config/gazebo/empty.sdf",
    "params_file": "the installed config/sim_default.yaml",
    "plugin": "",
    "autostart": "true",
}
# The packages the Gazebo launch starts besides ours, and their executables.
GAZEBO_PACKAGES = {
    "robot_state_publisher": "robot_state_publisher",
    "ros_gz_sim": "create",
    "ros_gz_bridge": "parameter_bridge",
    "controller_manager": "spawner",
}


def test_gazebo_world_is_sdf_stepping_at_the_controller_managers_period():
    world = ET.parse(REPO / "config" / "gazebo" / "empty.sdf").getroot()
    assert world.tag == "sdf" and tuple(map(int, world.get("version").split("."))) >= (1, 6)
    worlds = world.findall("world")
    assert len(worlds) == 1 and worlds[0].get("name")
    controllers = yaml.safe_load((REPO / "config" / "ros2_controllers.yaml").read_text())
    rate = controllers["controller_manager"]["ros__parameters"]["update_rate"]
    step = float(worlds[0].findtext("physics/max_step_size"))
    assert step == pytest.approx(1.0 / rate), (step, rate)
    plugins = {p.get("name") for p in worlds[0].findall("plugin")}
    assert {"gz::sim::systems::Physics", "gz::sim::systems::SceneBroadcaster"} <= plugins


@pytest.fixture(scope="session")
def gazebo_packages(tmp_path_factory):
    """An install prefix with the other packages the Gazebo launch names (markers and
    executable stubs, never run)."""
    base = tmp_path_factory.mktemp("gazebo_packages")
    for package, executable in GAZEBO_PACKAGES.items():
        index = base / "share/ament_index/resource_index/packages"
        index.mkdir(parents=True, exist_ok=True)
        (index / package).write_text("")
        lib = base / "lib" / package
        lib.mkdir(parents=True)
        (lib / executable).write_text("#!/bin/sh\nexit 3\n")
        (lib / executable).chmod(0o755)
    return base


def test_gazebo_launch_declares_documented_arguments(fake_tree):
    ld = load_launch_file(fake_tree.launch_file(GAZEBO_LAUNCH))
    assert set(declared_arguments(ld)) == set(GAZEBO_ARGS)
    for name, arg in declared_arguments(ld).items():
        assert arg.description, name


def test_gazebo_launch_refuses_when_the_node_cannot_describe_the_robot(fake_tree, gazebo_packages, tmp_path):
    ld = load_launch_file(fake_tree.launch_file(GAZEBO_LAUNCH))
    with pytest.raises(RuntimeError, match="ros2-control --urdf .* failed"):
        resolve(ld, {}, ament_prefix_path=fake_tree.prefixes + [str(gazebo_packages)], tmp_dir=tmp_path)


@pytest.mark.parametrize("robot", ["", "ur10"])
def test_gazebo_launch_wires_gz_ros2_control_the_controllers_and_the_node(install_tree, gazebo_packages, tmp_path, robot):
    urdf = str(REPO / "testing" / "robots" / f"{robot}.urdf") if robot else None
    arguments = {"urdf": urdf} if urdf else {}
    ld = load_launch_file(install_tree.launch_file(GAZEBO_LAUNCH))
    r = resolve(ld, arguments, ament_prefix_path=install_tree.prefixes + [str(gazebo_packages)], tmp_dir=tmp_path)
    urdf = urdf or str(install_tree.share / "urdf" / "panda.urdf")
    by_exe = {Path(p.cmd[0]).name: p for p in r.processes}
    assert set(by_exe) >= {"gz", "robot_state_publisher", "create", "parameter_bridge", "spawner", PACKAGE}

    # gz sim runs the installed world, which is SDF.
    gz = by_exe["gz"]
    assert gz.cmd[:3] == ["gz", "sim", "-r"] and install_tree.contains(gz.cmd[3]) and Path(gz.cmd[3]).is_file()
    world_name = ET.parse(gz.cmd[3]).getroot().find("world").get("name")

    # The joints the node commands, from the installed node itself.
    joints = subprocess.run(
        [str(install_tree.executable), "ros2-control", "--urdf", urdf, "--print", "joints"],
        check=True, capture_output=True, text=True,
    ).stdout.split()
    source = ET.parse(urdf).getroot()
    assert sorted(joints) == sorted(
        j.get("name") for j in source.findall("joint") if j.get("type") in ("revolute", "continuous", "prismatic")
    )

    # robot_state_publisher's description: the robot with the gz_ros2_control block.
    _, rsp = params_file_of(by_exe["robot_state_publisher"])
    (params,) = rsp.values()
    params = params["ros__parameters"]
    assert params["use_sim_time"] is True
    robot_xml = ET.fromstring(params["robot_description"])
    assert robot_xml.get("name") == source.get("name")
    assert [l.get("name") for l in robot_xml.findall("link")] == [l.get("name") for l in source.findall("link")]
    (block,) = [b for b in robot_xml.findall("ros2_control") if b.get("name") == "gp_learning_node_system"]
    assert block.findtext("hardware/plugin") == "gz_ros2_control/GazeboSimSystem"
    assert [j.get("name") for j in block.findall("joint")] == joints
    for j in block.findall("joint"):
        assert [c.get("name") for c in j.findall("command_interface")] == ["effort"]
        assert [s.get("name") for s in j.findall("state_interface")] == ["position", "velocity", "effort"]
    (gz_plugin,) = [p for p in robot_xml.findall("gazebo/plugin") if p.get("filename") == "gz_ros2_control-system"]
    controllers_file = Path(gz_plugin.findtext("parameters"))
    controllers = yaml.safe_load(controllers_file.read_text())

    # The controllers: the manager at 1 kHz (the world's step), the broadcaster, and the
    # effort controller over the node's joints, in its order; the spawners load exactly these.
    manager = controllers["controller_manager"]["ros__parameters"]
    assert manager["update_rate"] == 1000
    assert manager["joint_state_broadcaster"]["type"] == "joint_state_broadcaster/JointStateBroadcaster"
    assert manager["effort_controller"]["type"] == "forward_command_controller/ForwardCommandController"
    effort = controllers["effort_controller"]["ros__parameters"]
    assert effort == {"interface_name": "effort", "joints": joints}
    spawned = sorted(p.cmd[1] for p in r.processes if Path(p.cmd[0]).name == "spawner")
    assert spawned == ["effort_controller", "joint_state_broadcaster"]

    # ros_gz_sim spawns the described robot into that world; /clock is bridged.
    create = by_exe["create"].cmd
    assert create[create.index("-world") + 1] == world_name
    assert create[create.index("-topic") + 1] == "robot_description"
    assert "/clock@rosgraph_msgs/msg/Clock[gz.msgs.Clock" in by_exe["parameter_bridge"].cmd

    # The node: simulated time, active, the same URDF; its default topics are the
    # controllers' (/joint_states from the broadcaster, /effort_controller/commands).
    node = by_exe[PACKAGE]
    _, overrides = params_file_of(node)
    (node_params,) = overrides.values()
    node_params = node_params["ros__parameters"]
    assert node_params["use_sim_time"] is True and node_params["ros.active"] is True
    assert node_params["robot.urdf"] == urdf
    params_file = Path(node.cmd[node.cmd.index("--params") + 1])
    assert install_tree.contains(params_file) and params_file.is_file()
    topics = yaml.safe_load(params_file.read_text())["gp_learning_node"]["ros__parameters"]["ros"]["topics"]
    assert topics["joint_states"] == "/joint_states"
    assert topics["command"] == "/effort_controller/commands"
