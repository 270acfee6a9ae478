"""URDF loading: stripping, joint order and limits, refusals, and the nominal model's settings."""

import math
import xml.etree.ElementTree as ET
from pathlib import Path

import mujoco
import numpy as np
import pytest
from conftest import REPO_ROOT
from gpn_mujoco import urdf

PANDA = REPO_ROOT / "urdf" / "panda.urdf"


def count_tags(text: str, tag: str) -> int:
    return sum(1 for el in ET.fromstring(text).iter() if el.tag == tag)


def test_strip_removes_every_visual_and_collision_and_nothing_else(shared_dynamics):
    for name in ("panda", "ur5", "double_pendulum"):
        text = (shared_dynamics / f"{name}.urdf").read_text()
        robot = urdf.load(shared_dynamics / f"{name}.urdf")
        assert count_tags(text, "visual") + count_tags(text, "collision") > 0, name
        assert count_tags(robot.xml_stripped, "visual") == 0
        assert count_tags(robot.xml_stripped, "collision") == 0
        for tag in ("link", "joint", "inertial", "mass", "inertia", "origin", "axis", "limit"):
            kept = count_tags(robot.xml_stripped, tag)
            inside_removed = sum(
                1
                for parent in ET.fromstring(text).iter()
                if parent.tag in ("visual", "collision")
                for el in parent.iter()
                if el.tag == tag
            )
            assert kept == count_tags(text, tag) - inside_removed, (name, tag)


def test_meshes_are_never_opened(shared_dynamics):
    # The fixture Panda references package:// meshes that do not exist here; it still compiles.
    text = (shared_dynamics / "panda.urdf").read_text()
    assert "mesh" in text
    model = urdf.load(shared_dynamics / "panda.urdf").nominal_model()
    assert model.nmesh == 0 and model.ngeom == 0


def test_joint_order_names_and_limits_of_the_panda():
    robot = urdf.load(PANDA)
    assert robot.joint_names == [f"panda_joint{i}" for i in range(1, 8)]
    assert robot.effort_limits.tolist() == [87.0] * 4 + [12.0] * 3
    j4 = robot.joints[3]
    assert (j4.position_lower, j4.position_upper) == (-3.0718, -0.0698)
    assert robot.joints[-1].child_link == "panda_link7"


TREE = """<robot name="tree">
  <link name="base"/>
  <link name="a"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="b"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="c"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="d"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j_c" type="continuous"><parent link="a"/><child link="c"/><origin xyz="0 0 0.5"/><axis xyz="0 1 0"/></joint>
  <joint name="j_a" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/>
    <limit effort="0" lower="-1" upper="1" velocity="1"/></joint>
  <joint name="j_b" type="prismatic"><parent link="base"/><child link="b"/><axis xyz="1 0 0"/>
    <limit effort="30" lower="-0.1" upper="0.1" velocity="1"/></joint>
  <joint name="j_d" type="revolute"><parent link="a"/><child link="d"/><axis xyz="1 0 0"/>
    <limit effort="5" lower="-1" upper="1" velocity="1"/></joint>
</robot>"""


def test_tree_joints_come_depth_first_in_file_order_like_the_node():
    robot = urdf.parse(TREE, Path("tree.urdf"))
    # base → j_a (a → j_c, j_d), then j_b: depth-first, children in file order.
    assert robot.joint_names == ["j_a", "j_c", "j_d", "j_b"]
    limits = robot.effort_limits
    assert math.isinf(limits[0]) and math.isinf(limits[1])  # effort 0 and none: no limit
    assert limits[2:].tolist() == [5.0, 30.0]
    c = robot.joints[1]
    assert c.kind == "continuous" and math.isinf(c.position_lower)
    model = robot.nominal_model()
    jm = urdf.joint_map(model, robot)
    for k, name in enumerate(robot.joint_names):
        assert model.joint(name).dofadr[0] == jm.dof[k]


@pytest.mark.parametrize(
    "text, message",
    [
        ("<robot><link name='a'/><link name='b'/><joint name='f' type='floating'><parent link='a'/>"
         "<child link='b'/></joint></robot>", "joint 'f': type 'floating' is not supported"),
        ("<robot><link name='a'/><link name='b'/><joint name='x' type='hinge'><parent link='a'/>"
         "<child link='b'/></joint></robot>", "joint 'x': unknown type 'hinge'"),
        ("<robot><link name='a'/><joint name='r' type='revolute'><parent link='a'/>"
         "<child link='nope'/></joint></robot>", "joint 'r': link 'nope' is not defined"),
        ("<robot><link name='a'/><link name='b'/></robot>", "expected one root link"),
        ("<robot><link name='a'/></robot>", "no movable joint"),
        ("<robot><link name='a'/><link name='b'/><joint name='r' type='revolute'><parent link='a'/>"
         "<child link='b'/><limit effort='lots'/></joint></robot>", "joint 'r' <limit>: attribute `effort`"),
        ("<robot><link", "malformed XML"),
    ],
)
def test_bad_urdfs_are_refused_naming_the_element_and_file(text, message):
    with pytest.raises(urdf.UrdfError) as err:
        urdf.parse(text, Path("bad.urdf"))
    assert message in str(err.value)
    assert str(err.value).endswith("bad.urdf")


def test_a_missing_file_names_it(tmp_path):
    with pytest.raises(urdf.UrdfError, match="cannot read the URDF.*nothing.urdf"):
        urdf.load(tmp_path / "nothing.urdf")


def test_nominal_model_is_rigid_bodies_only(shared_dynamics):
    """Limits, URDF damping, mimic couplings, contacts and actuator limits do not act."""
    robot = urdf.load(shared_dynamics / "panda.urdf")  # damping 0.003/0.3 and a <mimic> in the file
    model = robot.nominal_model()
    assert model.neq == 0
    assert np.all(model.jnt_limited == 0)
    assert np.all(model.dof_damping == 0) and np.all(model.dof_frictionloss == 0)
    assert np.all(model.dof_armature == 0) and np.all(model.jnt_stiffness == 0)
    assert np.all(model.jnt_actfrclimited == 0)
    assert model.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
    assert model.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_CONTACT
    assert model.opt.gravity.tolist() == [0.0, 0.0, -9.81]
    data = mujoco.MjData(model)
    jm = urdf.joint_map(model, robot)
    # Far outside every position limit, moving: no constraint force, no passive force.
    data.qpos[jm.qpos] = [5.0, -4.0, 5.0, 3.0, 5.0, -3.0, 5.0, 0.5, -0.5]
    data.qvel[jm.dof] = 1.0
    mujoco.mj_forward(model, data)
    assert data.nefc == 0 and data.ncon == 0
    assert np.all(data.qfrc_constraint == 0) and np.all(data.qfrc_passive == 0)
