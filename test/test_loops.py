"""Closed kinematic loops: the loop description and its errors, loop kinematics (gamma against finite differences,
G), closed-loop inverse dynamics against a four-bar's closed form (Lagrange in the crank angle) and a parallelogram
against the equivalent serial arm, virtual work, direct dynamics (Khalil eq. 58 against the KKT system) and the
simulation's drift and energy."""
import warnings

import numpy as np
import pytest

import rne_dynamics as rd

G = np.array([0.0, -9.81, 0.0])  # the four-bar moves in the xy-plane


def load(mechanism):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # massless ground links
        return mechanism.load()


FOUR_BAR = rd.four_bar()


@pytest.fixture(scope="module")
def four_bar():
    return load(FOUR_BAR)


# ------------------------------------------------------------------ the four-bar's closed form

def four_bar_closed_form(theta, theta_d, theta_dd, ground=0.4, a=0.1, b=0.35, c=0.3, masses=(1.0, 2.0, 1.5), g=9.81):
    """Crank torque and the force ON the rocker BY the coupler at their pin (world axes), from the vector loop
    ``a e^{i theta} + b e^{i phi} = d + c e^{i psi}`` (elbow as the builder assembles it) and Lagrange's equation
    in the crank angle written with the exact accelerations: ``tau = sum_k m_k Jv_k . (a_k + g y) + I_k w_k
    alpha_k`` with ``Jv_k = d p_k / d theta``."""
    O4 = np.array([ground, 0.0])
    A = a * np.array([np.cos(theta), np.sin(theta)])
    e = O4 - A
    dist = np.linalg.norm(e)
    along = (b ** 2 - c ** 2 + dist ** 2) / (2 * dist)
    h = np.sqrt(b ** 2 - along ** 2)
    e = e / dist
    B = A + along * e - h * np.array([-e[1], e[0]])
    phi = np.arctan2(*(B - A)[::-1])
    psi = np.arctan2(*(B - O4)[::-1])

    def i(angle):  # d/d angle of e^{i angle}, as a 2-vector
        return np.array([-np.sin(angle), np.cos(angle)])

    def r(angle):
        return np.array([np.cos(angle), np.sin(angle)])

    # velocities: a i(theta) + b i(phi) phi' = c i(psi) psi'
    M = np.column_stack([b * i(phi), -c * i(psi)])
    phi_1, psi_1 = np.linalg.solve(M, -a * i(theta))
    # accelerations per unit: -a r(theta) - b r(phi) phi'^2 + b i(phi) phi'' = -c r(psi) psi'^2 + c i(psi) psi''
    phi_2, psi_2 = np.linalg.solve(M, a * r(theta) + b * r(phi) * phi_1 ** 2 - c * r(psi) * psi_1 ** 2)
    alpha = np.array([1.0, phi_1, psi_1]) * theta_dd + np.array([0.0, phi_2, psi_2]) * theta_d ** 2
    lengths = np.array([a, b, c])
    inertia = np.array(masses) * lengths ** 2 / 12
    # centres of mass: position Jacobians d p / d theta and second derivatives
    J = [a / 2 * i(theta), a * i(theta) + b / 2 * i(phi) * phi_1, c / 2 * i(psi) * psi_1]
    J2 = [-a / 2 * r(theta), -a * r(theta) - b / 2 * r(phi) * phi_1 ** 2 + b / 2 * i(phi) * phi_2,
          -c / 2 * r(psi) * psi_1 ** 2 + c / 2 * i(psi) * psi_2]
    acc = [Jk * theta_dd + J2k * theta_d ** 2 for Jk, J2k in zip(J, J2)]
    up = np.array([0.0, g])
    tau = sum(m * Jk @ (ak + up) for m, Jk, ak in zip(masses, J, acc)) + sum(
        I * w_unit * al for I, w_unit, al in zip(inertia, [1.0, phi_1, psi_1], alpha))

    def cross(x, y):
        return x[0] * y[1] - x[1] * y[0]

    # the pin force F on the rocker: rocker about its fixed pivot, coupler about its pin with the crank
    m2, m3 = masses[1], masses[2]
    G2, G3 = (A + B) / 2, (O4 + B) / 2
    I_O4 = m3 * c ** 2 / 3
    gravity = np.array([0.0, -g])
    # rocker: (B - O4) x F + (G3 - O4) x m3 g = I_O4 psi''
    # coupler: (B - A) x (-F) + (G2 - A) x m2 g = I_2 phi'' + (G2 - A) x m2 a_G2
    rows = np.array([[-(B - O4)[1], (B - O4)[0]], [(B - A)[1], -(B - A)[0]]])
    rhs = np.array([I_O4 * alpha[2] - cross(G3 - O4, m3 * gravity),
                    inertia[1] * alpha[1] + cross(G2 - A, m2 * acc[1]) - cross(G2 - A, m2 * gravity)])
    F = np.linalg.solve(rows, rhs)
    return tau, F, phi, psi


def test_four_bar_matches_its_closed_form(four_bar):
    _, _, phi_0, psi_0 = four_bar_closed_form(np.pi / 3, 0.0, 0.0)  # coupler, rocker angles at q = 0
    rng = np.random.default_rng(0)
    worst_tau = worst_force = 0.0
    for _ in range(20):
        theta, theta_d, theta_dd = rng.uniform(-np.pi, np.pi), rng.uniform(-5, 5), rng.uniform(-20, 20)
        _, _, phi, psi = four_bar_closed_form(theta, 0.0, 0.0)
        q_guess = np.array([0.0, phi - phi_0 - theta + np.pi / 3, psi - psi_0]) + 0.1  # picks the elbow
        result = rd.closed_loop_inverse_dynamics(four_bar, [theta - np.pi / 3], [theta_d], [theta_dd],
                                                 q_guess=q_guess, gravity=G)
        tau, F, phi, psi = four_bar_closed_form(theta, theta_d, theta_dd)
        q = result.q
        assert np.abs(rd.loop_constraints(four_bar, q).residual).max() < 1e-10
        # the rocker's absolute angle in the tree: its q plus its reference angle
        R_rocker = rd.frame_placement(four_bar, q, "rocker")[:3, :3]
        w = result.loop_wrenches["coupler_rocker"]
        force_world = (R_rocker @ w[:3])[:2]  # cut frame on the rocker is aligned with the rocker's frame
        worst_tau = max(worst_tau, abs(result.torques[0] - tau) / max(1.0, abs(tau)))
        worst_force = max(worst_force, np.abs(force_world - F).max() / max(1.0, np.abs(F).max()))
        assert np.isclose(np.cos(psi - np.arctan2(R_rocker[1, 0], R_rocker[0, 0]) - psi_0), 1.0, atol=1e-12)
    print(f"four-bar against its closed form: crank torque {worst_tau:.1e}, pin force {worst_force:.1e} (relative)")
    assert worst_tau < 1e-10, worst_tau
    assert worst_force < 1e-10, worst_force


# ------------------------------------------------------------------ kinematics

@pytest.mark.parametrize("mechanism", [rd.four_bar(), rd.four_bar(cut="point"), rd.five_bar(), rd.delta_robot(),
                                       rd.gough_stewart()], ids=["four_bar", "four_bar_point", "five_bar", "delta",
                                                                 "gough_stewart"])
def test_loop_kinematics(mechanism):
    """``J`` is the derivative of ``phi`` along the loops, ``gamma = -Jdot qd`` against central differences, ``G``
    keeps the loops closed, and virtual work ``Gamma_a . qd_a == Gamma_tree . qd_tree``."""
    robot = load(mechanism)
    rng = np.random.default_rng(1)
    n = len(robot.actuated_joint_names)
    qa = rng.uniform(-0.05, 0.05, n)
    qda, qdda = rng.uniform(-1, 1, n), rng.uniform(-3, 3, n)
    result = rd.closed_loop_inverse_dynamics(robot, qa, qda, qdda)
    q, qd, qdd = result.q, result.qd, result.qdd
    c = rd.loop_constraints(robot, q, qd)
    assert np.abs(c.residual).max() < 1e-10
    assert np.abs(c.jacobian @ qd).max() < 1e-10
    assert np.abs(c.jacobian @ qdd - c.gamma).max() < 1e-9
    h = 1e-6
    Jp = rd.loop_constraints(robot, rd.integrate(robot, q, qd, h)).jacobian
    Jm = rd.loop_constraints(robot, rd.integrate(robot, q, qd, -h)).jacobian
    assert np.abs(-(Jp - Jm) @ qd / (2 * h) - c.gamma).max() < 1e-6
    # the loops stay closed to second order along the motion
    q_next = rd.integrate(robot, q, qd * h + 0.5 * qdd * h * h, 1.0)
    assert np.abs(rd.loop_constraints(robot, q_next).residual).max() < 1e-12
    # G = d q_tree / d q_a against central differences of the closing solve
    G = rd.actuation_jacobian(robot, q)
    for k in range(n):
        step = np.eye(n)[k] * 1e-6
        plus = rd.close_loops(robot, qa + step, q_guess=q)
        minus = rd.close_loops(robot, qa - step, q_guess=q)
        assert np.abs(rd.difference(robot, minus, plus) / 2e-6 - G[:, k]).max() < 1e-6
    # virtual work
    assert np.isclose(result.torques @ qda, result.tree_torques @ qd, rtol=1e-10, atol=1e-10)
    # the mechanism's joint torques: actuated ones are the result, passive ones vanish
    mech = np.zeros(robot.nv)
    for k, name in enumerate(robot.joint_names):
        b = robot.idx_v[name]
        info = robot.joints[name]
        axis = np.array(info.axis)
        w = result.joint_wrenches[k]
        if info.type == "spherical":
            mech[b:b + 3] = w[3:]
        else:
            mech[b] = axis @ (w[3:] if info.type == "revolute" else w[:3])
    expected = np.zeros(robot.nv)
    expected[[robot.idx_v[j] for j in robot.actuated_joint_names]] = result.torques
    assert np.abs(mech - expected).max() < 1e-8 * max(1.0, np.abs(result.torques).max()), (mech, expected)


MECHANISMS = [rd.four_bar(), rd.four_bar(cut="point"), rd.five_bar(), rd.delta_robot(), rd.gough_stewart()]
MECHANISM_IDS = ["four_bar", "four_bar_point", "five_bar", "delta", "gough_stewart"]


@pytest.mark.parametrize("mechanism", MECHANISMS, ids=MECHANISM_IDS)
def test_loads_equal_a_second_inverse_dynamics_with_the_cut_wrenches(mechanism):
    """The cut wrenches equal the minimum-norm solution of ``J^T lambda = E_a tau_a - Gamma_tree`` (a
    pseudo-inverse of the whole ``J^T``; the call uses ``J_p^+`` alone), and the mechanism's joint wrenches (the tree's
    plus the cut wrenches accumulated towards the root) equal inverse dynamics with the cut wrenches applied as
    external wrenches on both links, to 1e-12 of the largest."""
    robot = load(mechanism)
    rng = np.random.default_rng(4)
    n = len(robot.actuated_joint_names)
    result = rd.closed_loop_inverse_dynamics(robot, rng.uniform(-0.05, 0.05, n), rng.uniform(-1, 1, n),
                                             rng.uniform(-3, 3, n))
    c = rd.loop_constraints(robot, result.q, result.qd)
    driven = np.zeros(robot.nv)
    driven[[robot.idx_v[j] for j in robot.actuated_joint_names]] = result.torques
    lam = np.linalg.pinv(c.jacobian.T, rcond=1e-9) @ (driven - result.tree_torques)
    wrenches, scale = {}, max(1.0, np.abs(lam).max())
    for closure in robot.loops.closures:
        T_a, T_b = (rd.frame_placement(robot, result.q, link) for link in (closure.link_a, closure.link_b))
        R_b = T_b[:3, :3] @ closure.R_b
        p_a, p_b = T_a[:3, :3] @ closure.p_a + T_a[:3, 3], T_b[:3, :3] @ closure.p_b + T_b[:3, 3]
        w = closure.selection @ lam[c.rows[closure.name]]
        w[3:] += np.cross(R_b.T @ (p_a - p_b), w[:3])  # about frame b's origin
        assert np.abs(result.loop_wrenches[closure.name] - w).max() < 1e-12 * scale, closure.name
        f, moment = R_b @ w[:3], R_b @ w[3:]  # world axes, about p_b
        for link, T, sign in ((closure.link_b, T_b, 1.0), (closure.link_a, T_a, -1.0)):
            R, o = T[:3, :3], T[:3, 3]
            on_link = sign * np.concatenate([R.T @ f, R.T @ moment + np.cross(R.T @ (p_b - o), R.T @ f)])
            wrenches[link] = wrenches.get(link, np.zeros(6)) + on_link
    expected = rd.inverse_dynamics(robot, result.q, result.qd, result.qdd, external_wrenches=wrenches).joint_wrenches
    assert np.abs(result.joint_wrenches - expected).max() < 1e-12 * max(1.0, np.abs(expected).max())


@pytest.mark.parametrize("mechanism", MECHANISMS, ids=MECHANISM_IDS)
def test_warm_start_equals_the_cold_solve(mechanism):
    """A controller's call, ``q_guess`` the previous state's closed ``q``, gives the cold solve's state and loads."""
    robot = load(mechanism)
    rng = np.random.default_rng(5)
    n = len(robot.actuated_joint_names)
    qa, qda, qdda = rng.uniform(-0.05, 0.05, n), rng.uniform(-1, 1, n), rng.uniform(-3, 3, n)
    previous = rd.closed_loop_inverse_dynamics(robot, qa, qda, qdda)
    qa = qa + rng.uniform(-1e-3, 1e-3, n)
    cold = rd.closed_loop_inverse_dynamics(robot, qa, qda, qdda)
    warm = rd.closed_loop_inverse_dynamics(robot, qa, qda, qdda, q_guess=previous.q)
    for name in ("torques", "q", "qd", "qdd", "joint_wrenches", "tree_torques"):
        a, b = getattr(cold, name), getattr(warm, name)
        assert np.abs(a - b).max() < 1e-9 * max(1.0, np.abs(a).max()), name
    assert np.abs(rd.loop_constraints(robot, warm.q).residual).max() < 1e-12


def test_parallelogram_equals_the_serial_arm():
    """A parallelogram (crank = rocker, coupler = ground) with the coupler carrying the load equals a serial arm
    whose link translates: Khalil's G^T projection gives the serial torque."""
    mech = rd.four_bar(ground=0.4, crank=0.3, coupler=0.4, rocker=0.3, masses=(1.0, 2.0, 1.5), crank_angle=1.0,
                       elbow=1)
    robot = load(mech)
    rng = np.random.default_rng(2)
    for _ in range(5):
        th, thd, thdd = rng.uniform(-0.5, 0.5), rng.uniform(-2, 2), rng.uniform(-5, 5)
        r = rd.closed_loop_inverse_dynamics(robot, [th], [thd], [thdd], gravity=G)
        # parallelogram: rocker turns with the crank, the coupler translates (its angle stays)
        assert np.isclose(r.q[2], th, atol=1e-10) and np.isclose(r.q[1], -th, atol=1e-10)
        angle = 1.0 + th
        # serial model: crank and rocker rods about their pivots, coupler a point mass 2.0 at the crank tip
        # (translation only: its inertia does not enter), all in closed form
        m1, m2, m3, l = 1.0, 2.0, 1.5, 0.3
        I_pivot = (m1 + m3) * l ** 2 / 3 + m2 * l ** 2
        gravity_moment = ((m1 + m3) * l / 2 + m2 * l) * 9.81 * np.cos(angle)
        assert np.isclose(r.torques[0], I_pivot * thdd + gravity_moment, rtol=1e-10)


# ------------------------------------------------------------------ direct dynamics and simulation

def test_forward_dynamics_inverts_inverse_dynamics_and_matches_kkt():
    for mechanism in (rd.four_bar(cut="point"), rd.five_bar(), rd.gough_stewart()):
        robot = load(mechanism)
        rng = np.random.default_rng(3)
        n = len(robot.actuated_joint_names)
        qa, qda, qdda = rng.uniform(-0.05, 0.05, n), rng.uniform(-1, 1, n), rng.uniform(-3, 3, n)
        inverse = rd.closed_loop_inverse_dynamics(robot, qa, qda, qdda)
        forward = rd.closed_loop_forward_dynamics(robot, qa, qda, inverse.torques)
        assert np.abs(forward.qdda - qdda).max() < 1e-9
        tau_tree = np.zeros(robot.nv)
        tau_tree[[robot.idx_v[j] for j in robot.actuated_joint_names]] = inverse.torques
        kkt = rd.constrained_forward_dynamics(robot, inverse.q, inverse.qd, tau_tree)
        assert np.abs(kkt.qdd - inverse.qdd).max() < 1e-8
        for name, w in inverse.loop_wrenches.items():
            assert np.abs(kkt.loop_wrenches[name] - w).max() < 1e-8 * max(1.0, np.abs(w).max())
            assert np.abs(forward.loop_wrenches[name] - w).max() < 1e-8 * max(1.0, np.abs(w).max())


@pytest.mark.parametrize("duration", [3.0, pytest.param(10.0, marks=pytest.mark.long)])
@pytest.mark.parametrize("drift_control, drift_bound", [({}, 1e-11), ({"baumgarte": (20.0, 20.0), "project": False},
                                                                     1e-8)], ids=["projection", "baumgarte"])
def test_simulation_drift_and_energy(four_bar, drift_control, drift_bound, duration):
    """A frictionless, unactuated four-bar swinging under gravity for 3 s (10 s with ``--long``; RK4, 1 ms): with
    projection the loop closes to 1e-11 at every stored step (measured 1e-12 over 10 s; 2.7e-10 before each
    projection), with Baumgarte terms (alpha = beta = 20/s) alone to 1e-8 (measured 3.7e-9); the energy stays within
    2e-6 of its largest value (relative; measured over 10 s 1.8e-6 J and 3.1e-6 J of 2.19 J)."""
    q0 = rd.close_loops(four_bar, [0.3])
    trajectory = rd.simulate_closed_loop(four_bar, q0, np.zeros(3), duration, 1e-3, gravity=G, **drift_control)
    drift = max(np.abs(rd.loop_constraints(four_bar, q).residual).max() for q in trajectory.q)
    assert drift < drift_bound, drift
    energy = trajectory.energy
    assert np.ptp(energy) / np.abs(energy).max() < 2e-6, np.ptp(energy)
    assert np.ptp(trajectory.q[:, 0]) > 0.5  # it does swing


# ------------------------------------------------------------------ the description and its errors

LOOP = {"name": "coupler_rocker", "kind": "revolute", "link_a": "coupler", "xyz_a": [0.3, 0, 0], "link_b": "rocker",
        "xyz_b": [0.3, 0, 0], "axis": [0, 0, 1]}


@pytest.mark.parametrize("change, message", [
    ({"link_a": "nowhere"}, "loop 'coupler_rocker': link_a 'nowhere' is not a link"),
    ({"kind": "hinge"}, "loop 'coupler_rocker': kind must be one of"),
    ({"axis": [0, 0, 0]}, "loop 'coupler_rocker': 'axis' is zero"),
    ({"xyz_b": [1, 2]}, "loop 'coupler_rocker': 'xyz_b' must be 3 finite numbers"),
    ({"link_b": "coupler"}, "are one rigid body"),
])
def test_bad_closures_name_the_closure(change, message):
    with pytest.raises(rd.ModelError, match=message):
        rd.load_urdf(FOUR_BAR.urdf, loops={"actuated": ["crank"], "loops": [dict(LOOP, **change)]})


def test_bad_actuated_sets():
    with pytest.raises(rd.ModelError, match="actuated joint 'motor' is not a movable joint"):
        rd.load_urdf(FOUR_BAR.urdf, loops={"actuated": ["motor"], "loops": [LOOP]})
    stewart = rd.gough_stewart()
    with pytest.raises(rd.ModelError, match="cannot determine the 21 coordinates .* actuate 1 more joint"):
        rd.load_urdf(stewart.urdf, loops=dict(stewart.loops, actuated=stewart.loops["actuated"][:5]))
    # enough equations by count, but a planar loop's spatial cut is redundant: the passive joints are free
    robot = rd.load_urdf(rd.five_bar().urdf, loops={"actuated": ["motor_left"], "loops": rd.five_bar().loops["loops"]})
    with pytest.raises(rd.ModelError, match=r"do not determine the passive ones .* in loop\(s\) tip"):
        rd.closed_loop_inverse_dynamics(robot, [0.0], [0.0], [0.0])


def test_impossible_loop_says_how_far_it_is_from_closing(four_bar):
    short = dict(LOOP, xyz_a=[0.05, 0, 0], xyz_b=[0.05, 0, 0])  # coupler and rocker far too short to reach
    robot = rd.load_urdf(FOUR_BAR.urdf, loops={"actuated": ["crank"], "loops": [short]})
    with pytest.raises(rd.ModelError, match=r"loop 'coupler_rocker' of 'four_bar' cannot close .* still 0\.\d+ m"):
        rd.close_loops(robot, [0.0])


def test_singular_pose_is_reported():
    """A five-bar whose distal links are collinear (tip at (0, 0.15), elbows at (-/+0.3, 0.15)) is at a parallel
    singularity: the passive elbows can move with the motors locked."""
    robot = load(rd.five_bar(tip=(0.0, 0.15)))
    with pytest.raises(rd.ModelError, match=r"do not determine the passive ones at this configuration .* "
                                            r"elbow_left, elbow_right can move with them locked, in loop\(s\) tip"):
        rd.closed_loop_inverse_dynamics(robot, [0.0, 0.0], [0.0, 0.0], [0.0, 0.0])
    # away from it the same robot computes
    assert np.all(np.isfinite(rd.closed_loop_inverse_dynamics(robot, [-0.2, 0.2], [0.0, 0.0], [0.0, 0.0]).torques))


def test_loop_file_and_urdf_extension(tmp_path, four_bar):
    path = tmp_path / "loops.yaml"
    path.write_text(FOUR_BAR.loops_yaml())
    from_file = rd.load_urdf(FOUR_BAR.urdf, loops=str(path))
    assert from_file.actuated_joint_names == ("crank",)
    # Isaac Sim's <loop_joint> in the URDF, the actuated set from the loop file's dict
    loop = FOUR_BAR.loops["loops"][0]
    element = (f'<loop_joint name="coupler_rocker" type="revolute"><link1 link="coupler" '
               f'xyz="{" ".join(map(str, loop["xyz_a"]))}"/><link2 link="rocker" '
               f'xyz="{" ".join(map(str, loop["xyz_b"]))}"/><axis xyz="0 0 1"/></loop_joint></robot>')
    from_urdf = rd.load_urdf(FOUR_BAR.urdf.replace("</robot>", element), loops={"actuated": ["crank"]})
    for robot in (from_file, from_urdf):
        a = rd.closed_loop_inverse_dynamics(robot, [0.2], [1.0], [2.0], gravity=G)
        b = rd.closed_loop_inverse_dynamics(four_bar, [0.2], [1.0], [2.0], gravity=G)
        assert np.allclose(a.torques, b.torques, atol=1e-12)
    assert four_bar.joint_names == ("crank", "crank_coupler", "rocker")
    assert rd.load_urdf(FOUR_BAR.urdf).actuated_joint_names == ("crank", "crank_coupler", "rocker")


def test_batch_equals_single_states(four_bar):
    qa = np.array([[0.1], [0.2], [0.3]])
    batch = rd.closed_loop_inverse_dynamics(four_bar, qa, qa * 2, qa * 3, gravity=G)
    for k in range(3):
        one = rd.closed_loop_inverse_dynamics(four_bar, qa[k], qa[k] * 2, qa[k] * 3, gravity=G)
        assert np.allclose(batch.torques[k], one.torques, atol=1e-13)
        assert np.allclose(batch.loop_wrenches["coupler_rocker"][k], one.loop_wrenches["coupler_rocker"], atol=1e-12)
    assert batch.joint_wrenches.shape == (3, 3, 6) and batch.q.shape == (3, 3)


def test_cli_inspect_reports_loops_and_mobility(tmp_path, capsys):
    from rne_dynamics.tools import cli
    for name, mechanism, expected in (("five_bar", rd.five_bar(), "Grübler-Kutzbach count -1: they disagree, 3 "
                                       "constraint(s) redundant"), ("stewart", rd.gough_stewart(),
                                                                    "mobility: 6 (nv 21 - rank 15")):
        urdf, loops = tmp_path / f"{name}.urdf", tmp_path / f"{name}.yaml"
        urdf.write_text(mechanism.urdf)
        loops.write_text(mechanism.loops_yaml())
        assert cli.main(["inspect", str(urdf), "--loops", str(loops)]) == 0
        out = capsys.readouterr().out
        assert expected in out
        assert "singular configurations met: none" in out
        assert f"actuated coordinates ({len(mechanism.loops['actuated'])})" in out
    assert cli.main(["inspect", str(urdf), "--loops", str(tmp_path / "missing.yaml")]) != 0
    assert "cannot read the loop file" in capsys.readouterr().err


def test_bundled_gough_stewart_is_the_builders():
    from rne_dynamics.robots import GOUGH_STEWART, GOUGH_STEWART_LOOPS
    bundled = rd.load_urdf(GOUGH_STEWART, loops=GOUGH_STEWART_LOOPS)
    built = load(rd.gough_stewart(ball="gimbal"))
    assert bundled.joint_names == built.joint_names and bundled.actuated_joint_names == built.actuated_joint_names
    assert all(bundled.bodies[body].nv == 1 for body in bundled.joint_bodies)  # the nodes take it
    qa = np.array([0.02, -0.01, 0.03, 0.0, -0.02, 0.01])
    a = rd.closed_loop_inverse_dynamics(bundled, qa, qa, qa)
    b = rd.closed_loop_inverse_dynamics(built, qa, qa, qa)
    assert np.allclose(a.torques, b.torques, rtol=1e-12, atol=1e-12)
    # the gimbal and the spherical joint give the same mechanism (the gimbal's cross pieces add their mass)
    assert np.allclose(a.q[:3], rd.closed_loop_inverse_dynamics(load(rd.gough_stewart()), qa, qa, qa).q[:3],
                       atol=1e-12)


def test_bad_loop_joint_elements_name_the_element():
    bad = FOUR_BAR.urdf.replace("</robot>", '<loop_joint name="cut" type="hinge"><link1 link="coupler"/>'
                                '<link2 link="rocker"/></loop_joint></robot>')
    with pytest.raises(rd.URDFError, match='<loop_joint name="cut"> needs a name and a type'):
        rd.load_urdf(bad, loops={"actuated": ["crank"]})
    missing = FOUR_BAR.urdf.replace("</robot>", '<loop_joint name="cut" type="spherical"><link1 link="coupler"/>'
                                    '<link2 link="nowhere"/></loop_joint></robot>')
    with pytest.raises(rd.ModelError, match="<urdf text>: loop 'cut': link_b 'nowhere' is not a link"):
        rd.load_urdf(missing, loops={"actuated": ["crank"]})
