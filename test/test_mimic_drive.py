"""A mimic joint's own ``<dynamics damping friction>`` reaches its source by virtual work (issue 27, item 7): with
``q_m = k q_s + o``, the source bears ``k^2 d_m`` more viscous damping and ``|k| f_m`` more Coulomb friction, so the
drive torque's power at the source equals the mimic drive's power at the mimic."""
import numpy as np
import pytest

import rne_dynamics as rd

SOURCE_DAMPING, SOURCE_FRICTION = 0.1, 0.2
MIMIC_DAMPING, MIMIC_FRICTION = 0.3, 0.5
SOURCE_DYNAMICS = f'<dynamics damping="{SOURCE_DAMPING}" friction="{SOURCE_FRICTION}"/>'
MIMIC_DYNAMICS = f'<dynamics damping="{MIMIC_DAMPING}" friction="{MIMIC_FRICTION}"/>'


def gripper(multiplier, second_multiplier=None):
    """A hinge moving a finger, a mimic finger following it with ``multiplier`` (and, when given, a third finger
    mimicking the mimic with ``second_multiplier``: chains compose)."""
    link = ('<link name="{0}"><inertial><origin xyz="0.05 0 0"/><mass value="0.2"/><inertia ixx="1e-4" ixy="0" '
            'ixz="0" iyy="1e-4" iyz="0" izz="1e-4"/></inertial></link>')
    third = "" if second_multiplier is None else f"""{link.format("finger3")}
<joint name="mimic2" type="prismatic"><parent link="palm"/><child link="finger3"/><axis xyz="0 1 0"/>
  <limit lower="-1" upper="1" effort="10" velocity="1"/>{MIMIC_DYNAMICS}
  <mimic joint="mimic" multiplier="{second_multiplier}" offset="0.01"/></joint>"""
    return f"""<robot name="gripper"><link name="palm"/>{link.format("finger1")}{link.format("finger2")}
<joint name="source" type="prismatic"><parent link="palm"/><child link="finger1"/><axis xyz="0 1 0"/>
  <limit lower="-1" upper="1" effort="10" velocity="1"/>{SOURCE_DYNAMICS}</joint>
<joint name="mimic" type="prismatic"><parent link="palm"/><child link="finger2"/><axis xyz="0 -1 0"/>
  <limit lower="-1" upper="1" effort="10" velocity="1"/>{MIMIC_DYNAMICS}
  <mimic joint="source" multiplier="{multiplier}" offset="0.02"/></joint>{third}</robot>"""


@pytest.mark.parametrize("multiplier", [1.0, -2.0, 0.5])
def test_mimic_drive_terms_carried_to_the_source(multiplier):
    robot = rd.load_urdf(gripper(multiplier))
    assert robot.joint_names == ("source",)
    assert robot.damping[0] == pytest.approx(SOURCE_DAMPING + multiplier ** 2 * MIMIC_DAMPING, abs=1e-15)
    assert robot.friction[0] == pytest.approx(SOURCE_FRICTION + abs(multiplier) * MIMIC_FRICTION, abs=1e-15)
    rigid = robot.with_drive(damping=[0.0], friction=[0.0])
    q, qdd = np.array([0.1]), np.array([0.7])
    for qd in (0.4, -0.3):
        drive = (rd.inverse_dynamics(robot, q, [qd], qdd).torques - rd.inverse_dynamics(rigid, q, [qd], qdd).torques)
        qd_mimic = multiplier * qd
        mimic_power = MIMIC_DAMPING * qd_mimic ** 2 + MIMIC_FRICTION * abs(qd_mimic)
        source_power = SOURCE_DAMPING * qd ** 2 + SOURCE_FRICTION * abs(qd)
        assert drive[0] * qd == pytest.approx(source_power + mimic_power, rel=1e-12)  # virtual work
        # forward dynamics sees the same drive: it returns the acceleration the torques were computed for
        tau = rd.inverse_dynamics(robot, q, [qd], qdd).torques
        np.testing.assert_allclose(rd.forward_dynamics(robot, q, [qd], tau), qdd, atol=1e-12)


def test_a_mimic_of_a_mimic_composes_its_multipliers():
    robot = rd.load_urdf(gripper(-2.0, 3.0))  # mimic2 = 3 (-2 q + o) + o': k = -6 on the source
    assert robot.damping[0] == pytest.approx(SOURCE_DAMPING + (4 + 36) * MIMIC_DAMPING, abs=1e-14)
    assert robot.friction[0] == pytest.approx(SOURCE_FRICTION + (2 + 6) * MIMIC_FRICTION, abs=1e-14)
