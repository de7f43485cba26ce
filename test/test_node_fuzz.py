"""Random JointState messages into one running inverse_dynamics node (hypothesis).

Names drawn from the robot's joints and strangers (empty, unicode, a slash), with duplicates, gaps and permutations;
position/velocity/effort arrays of random lengths; NaN, inf and huge values; random stamps (any int32 second).
For every message the node must do what an independent reading of the rules says: either publish exactly one
~/torques with the message's stamp and the library's torques, or publish nothing and count a rejection. After the
fuzz the node is alive and a good message gets the library's torques to 1e-12.

Budget: 4 x the max_examples of the hypothesis profile of conftest.py: "ci" (default) sends 2,000 messages,
derandomized (about 20 s here); ``--hypothesis-profile=long`` sends 20,000.
The node runs with acceleration_source 'zero' (its default) and a gravity, friction setting of its own. Velocities
are drawn with |qd| <= 1e100 (plus NaN/inf): larger finite velocities overflow the torques, which the node refuses
(test_node_bad_input.py tests those).
"""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# first: it skips the module where rclpy is missing
from ros_harness import Harness

from sensor_msgs.msg import JointState

import rne_dynamics as rd
from rne_dynamics.nodes.inverse_dynamics_node import InverseDynamicsNode
from rne_dynamics.robots import DEFAULT_ROBOT

ARM = rd.load_urdf(DEFAULT_ROBOT)
NAMES = list(ARM.joint_names)
STRANGERS = ["gripper_finger_joint", "", "conveyor", "wrist_9_joint", "élan_joint", "arm/joint", "ELBOW_JOINT"]
GRAVITY = [0.3, -0.2, -9.7]
EXAMPLES_PER_PROFILE_EXAMPLE = 4  # messages are cheap: 4 x the profile's max_examples
ROBOT = ARM.with_drive(damping=np.full(6, 0.5))  # the node below with viscous_friction [0.5]

NON_FINITE = st.sampled_from([math.nan, math.inf, -math.inf])
FINITE = st.floats(allow_nan=False, allow_infinity=False)
ANY_FLOAT = st.floats(allow_nan=True, allow_infinity=True)
VELOCITY = st.floats(-1e100, 1e100)


@st.composite
def joint_states(draw):
    if draw(st.booleans()):  # every joint, any order, maybe strangers or a repeat among them
        names = draw(st.permutations(NAMES)) + draw(st.lists(st.sampled_from(STRANGERS + NAMES), max_size=3))
    else:
        names = draw(st.lists(st.sampled_from(NAMES + STRANGERS), max_size=10))
    n = len(names)
    msg = JointState(name=names)
    position = FINITE if draw(st.booleans()) else ANY_FLOAT  # half the messages without NaN or inf
    velocity = VELOCITY if draw(st.booleans()) else VELOCITY | NON_FINITE
    msg.position = draw(st.lists(position, min_size=n, max_size=n) | st.lists(position, max_size=12))
    msg.velocity = draw(st.lists(velocity, min_size=n, max_size=n) | st.just([]) | st.lists(velocity, max_size=12))
    msg.effort = draw(st.lists(ANY_FLOAT, max_size=12))
    msg.header.stamp.sec = draw(st.integers(-2 ** 31, 2 ** 31 - 1))
    msg.header.stamp.nanosec = draw(st.integers(0, 999_999_999))
    return msg


class Merge:
    """The rules of merged joint states, read afresh: the last value of every joint of the robot is kept; a message
    naming a joint twice, with arrays of other lengths than its names, or with a non-finite value of a robot joint is
    refused whole; one sharing no joint with the robot is counted; else it is answered once every joint was heard."""

    def __init__(self):
        self.q, self.qd, self.heard = np.zeros(6), np.zeros(6), set()

    def expected(self, msg):
        """``"foreign"``, None (refused) or the library's torques at the merged state."""
        names, position, velocity = list(msg.name), list(msg.position), list(msg.velocity)
        if len(set(names)) != len(names):
            return None
        if len(position) != len(names) or len(velocity) not in (0, len(names)):
            return None
        shared = [(k, NAMES.index(name)) for k, name in enumerate(names) if name in NAMES]
        q = np.array([position[k] for k, _ in shared])
        qd = np.array([velocity[k] for k, _ in shared]) if velocity else np.zeros(len(shared))
        if not (np.isfinite(q).all() and np.isfinite(qd).all()):
            return None
        if not shared:
            return "foreign"
        joints = [j for _, j in shared]
        self.q[joints], self.qd[joints] = q, qd
        self.heard |= set(joints)
        if len(self.heard) < 6:
            return None
        return rd.inverse_dynamics(ROBOT, self.q, self.qd, np.zeros(6), gravity=GRAVITY).torques


@pytest.fixture(scope="module")
def node():
    h = Harness(InverseDynamicsNode, robot_description=DEFAULT_ROBOT, gravity=GRAVITY, viscous_friction=[0.5])
    yield h, h.collect(JointState, "/inverse_dynamics/torques")
    h.close()


def test_fuzzed_joint_states_get_the_library_torques_or_nothing_and_the_node_lives_on(node):
    h, torques = node
    stats = h.node.stats
    publisher = h.probe.create_publisher(JointState, "/joint_states", 10)
    assert h.spin_until(lambda: publisher.get_subscription_count() > 0)
    outcomes = {"computed": 0, "refused": 0, "foreign": 0}
    merge = Merge()

    @settings(max_examples=EXAMPLES_PER_PROFILE_EXAMPLE * settings.default.max_examples,
              suppress_health_check=[HealthCheck.too_slow])
    @given(msg=joint_states())
    def one_message(msg):
        expected = merge.expected(msg)
        computed, refused, published = stats.total_inputs, stats.total_rejected, len(torques)
        foreign = h.node.joint_states.foreign
        publisher.publish(msg)
        if isinstance(expected, str):  # counted, neither computed nor refused
            assert h.spin_until(lambda: h.node.joint_states.foreign > foreign)
            assert (stats.total_inputs, stats.total_rejected) == (computed, refused)
            outcomes["foreign"] += 1
            return
        assert h.spin_until(lambda: stats.total_inputs + stats.total_rejected > computed + refused)
        if expected is None:
            assert stats.total_rejected == refused + 1 and stats.last_rejection.startswith("/joint_states: ")
            assert stats.total_inputs == computed
            outcomes["refused"] += 1
        else:
            assert stats.total_inputs == computed + 1, stats.last_rejection
            assert h.spin_until(lambda: len(torques) > published)
            out = torques[-1]
            assert (out.header.stamp.sec, out.header.stamp.nanosec) == (msg.header.stamp.sec, msg.header.stamp.nanosec)
            assert np.isfinite(out.effort).all()  # never garbage on ~/torques
            np.testing.assert_allclose(out.effort, expected, rtol=1e-12, atol=1e-12)
            outcomes["computed"] += 1
        assert len(torques) == stats.total_inputs  # one output per computed message, none for a refused one

    one_message()
    print(f"fuzzed messages: {outcomes}")
    assert min(outcomes.values()) >= 20  # every branch was exercised

    rng = np.random.default_rng(7)
    q, qd = rng.uniform(-1.0, 1.0, 6), rng.uniform(-1.0, 1.0, 6)
    good = JointState(name=NAMES, position=list(q), velocity=list(qd))
    good.header.stamp.sec = 123
    published = len(torques)
    publisher.publish(good)
    assert h.spin_until(lambda: len(torques) > published)
    assert torques[-1].header.stamp.sec == 123
    np.testing.assert_allclose(torques[-1].effort, rd.inverse_dynamics(ROBOT, q, qd, np.zeros(6),
                                                                       gravity=GRAVITY).torques, rtol=0, atol=1e-12)
