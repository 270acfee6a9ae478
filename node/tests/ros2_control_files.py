"""The ros2_control files of gp_learning_node checked on every robot, for
node/tests/ros2_control_files.rs:

    ros2_control_files.py GP_NODE REPO_ROOT

For the built-in Panda, every robot of testing/robots and one arm of Baxter (reduced), with
the joints and the controllers YAML printed by `gp-node ros2-control`:
- urdf/ros2_control.urdf.xacro expanded with PyPI xacro (mock hardware, and Gazebo's with a
  controllers file) must keep the robot's links and joints, and its <ros2_control> block
  must name exactly the robot's movable joints (revolute, continuous, prismatic: read here
  from the URDF with ElementTree, not from gp-node), or the listed ones for the reduced arm,
  each with an effort command interface and position, velocity and effort state interfaces;
- the controllers YAML: joint_state_broadcaster, and effort_controller a
  ForwardCommandController on `effort` over the same joints in the order gp-node commands
  them, at the stated update rate.
Prints one JSON object: per robot the findings (empty when all is well) and the counts.
"""

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import xacro
import yaml

MOVABLE = ("revolute", "continuous", "prismatic")
STATES = ["position", "velocity", "effort"]


def gp_node(exe, *args):
    return subprocess.run([exe, "ros2-control", *args], check=True, capture_output=True, text=True).stdout


def check(exe, repo, urdf, joints_arg=None):
    problems = []
    selection = ["--joints", ",".join(joints_arg)] if joints_arg else []
    joints = gp_node(exe, "--urdf", str(urdf), *selection, "--print", "joints").split()
    controllers = yaml.safe_load(gp_node(exe, "--urdf", str(urdf), *selection))
    source = ET.parse(urdf).getroot()
    movable = [j.get("name") for j in source.findall("joint") if j.get("type") in MOVABLE]
    expected = joints_arg if joints_arg else movable
    if sorted(joints) != sorted(expected):
        problems.append(f"gp-node lists {joints}, expected {expected}")
    cm = controllers["controller_manager"]["ros__parameters"]
    ec = controllers["effort_controller"]["ros__parameters"]
    if cm.get("update_rate") != 1000 or controllers["joint_state_broadcaster"]["ros__parameters"].get("update_rate") != 1000:
        problems.append("update rates are not 1000 Hz")
    if cm["joint_state_broadcaster"]["type"] != "joint_state_broadcaster/JointStateBroadcaster":
        problems.append("no joint_state_broadcaster")
    if cm["effort_controller"]["type"] != "forward_command_controller/ForwardCommandController":
        problems.append("effort_controller is not a ForwardCommandController")
    if ec.get("interface_name") != "effort" or ec.get("joints") != joints:
        problems.append(f"effort_controller: {ec}")
    for plugin, extra in [
        ("mock_components/GenericSystem", {}),
        ("gz_ros2_control/GazeboSimSystem", {"controllers": "/tmp/controllers.yaml"}),
    ]:
        mappings = {"urdf": str(urdf), "joints": " ".join(joints), "plugin": plugin, "name": source.get("name"), **extra}
        doc = xacro.process_file(str(repo / "urdf" / "ros2_control.urdf.xacro"), mappings=mappings)
        robot = ET.fromstring(doc.toxml())
        if robot.get("name") != source.get("name"):
            problems.append(f"{plugin}: robot name {robot.get('name')}")
        for tag in ("link", "joint"):
            if [e.get("name") for e in robot.findall(tag)] != [e.get("name") for e in source.findall(tag)]:
                problems.append(f"{plugin}: the {tag}s changed")
        # A robot's own blocks and Gazebo plugins (some URDFs ship them) stay as they were.
        own_blocks = len(source.findall("ros2_control"))
        blocks = [b for b in robot.findall("ros2_control") if b.get("name") == "gp_learning_node_system"]
        if len(blocks) != 1 or len(robot.findall("ros2_control")) != own_blocks + 1:
            problems.append(f"{plugin}: {len(blocks)} ros2_control blocks of ours")
            continue
        block = blocks[0]
        if block.get("type") != "system" or block.findtext("hardware/plugin") != plugin:
            problems.append(f"{plugin}: hardware {block.findtext('hardware/plugin')}")
        named = [j.get("name") for j in block.findall("joint")]
        if named != joints:
            problems.append(f"{plugin}: the block names {named}")
        for j in block.findall("joint"):
            commands = [c.get("name") for c in j.findall("command_interface")]
            states = [s.get("name") for s in j.findall("state_interface")]
            if commands != ["effort"] or states != STATES:
                problems.append(f"{plugin}: joint {j.get('name')}: commands {commands}, states {states}")
        gz = [p for p in robot.findall("gazebo/plugin") if p.findtext("parameters") == extra.get("controllers")]
        added = len(robot.findall("gazebo/plugin")) - len(source.findall("gazebo/plugin"))
        if extra and (added != 1 or len(gz) != 1 or gz[0].get("filename") != "gz_ros2_control-system"):
            problems.append("no gz_ros2_control system plugin with the controllers file")
        if not extra and added != 0:
            problems.append("a Gazebo plugin without Gazebo")
    return {"joints": len(joints), "own_ros2_control_blocks": len(source.findall("ros2_control")), "problems": problems}


def main():
    exe, repo = sys.argv[1], Path(sys.argv[2]).resolve()
    robots = {"panda (built-in)": (repo / "urdf" / "panda.urdf", None)}
    for urdf in sorted((repo / "testing" / "robots").glob("*.urdf")):
        robots[urdf.stem] = (urdf, None)
    left = ["left_s0", "left_s1", "left_e0", "left_e1", "left_w0", "left_w1", "left_w2"]
    robots["baxter left arm (reduced)"] = (repo / "testing" / "robots" / "baxter.urdf", left)
    report = {}
    try:
        for name, (urdf, joints) in robots.items():
            report[name] = check(exe, repo, urdf, joints)
    except Exception as e:  # reported, never a silent pass
        report["error"] = f"{type(e).__name__}: {e}"
    print(json.dumps(report))


if __name__ == "__main__":
    main()
