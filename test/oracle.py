"""Pinocchio as the reference oracle, on the example-robot-data URDFs: load both models, map states between them.

Pinocchio orders its coordinates by its own joint order and stores a continuous joint as (cos, sin); our ``q``
follows ``robot.joint_names`` with one angle per continuous joint. Everything here maps by joint name.
"""
import functools
import glob
import os
import warnings

import numpy as np
import pinocchio as pin

import rne_dynamics as rd

ROBOTS_DIR = os.path.join(os.path.dirname(pin.__file__).split("lib")[0], "share", "example-robot-data", "robots")
if not os.path.isdir(ROBOTS_DIR):  # cmeel layout: site-packages/cmeel.prefix/share/example-robot-data/robots
    import sysconfig
    ROBOTS_DIR = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share", "example-robot-data",
                              "robots")


def urdf_paths():
    """Every URDF shipped by example-robot-data (69 at version 6)."""
    return sorted(glob.glob(os.path.join(ROBOTS_DIR, "**", "*.urdf"), recursive=True))


def robot_path(fragment):
    """The one URDF whose path ends with ``fragment`` (``'panda_description/urdf/panda.urdf'``)."""
    matches = [p for p in urdf_paths() if p.endswith(fragment)]
    assert len(matches) == 1, (fragment, matches)
    return matches[0]


@functools.lru_cache(maxsize=None)
def pair(path):
    """``(robot, pin_model)`` for a URDF, or ``None`` when Pinocchio cannot load it; fixed base, mimic joints on."""
    try:
        model = pin.buildModelFromUrdf(path, mimic=True)
    except Exception:  # Pinocchio refuses some files (mimic of an unknown joint, missing robot name)
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = rd.load_urdf(path)
    return robot, model


def comparable_paths():
    """URDFs both libraries load with at least one movable joint (ids for pytest)."""
    out = []
    for path in urdf_paths():
        try:
            loaded = pair(path)
        except rd.URDFError:
            continue  # refused on purpose (physically impossible inertia); tested on its own
        if loaded is not None and loaded[0].dof > 0:
            out.append(path)
    return out


def short_name(path):
    return os.path.relpath(path, ROBOTS_DIR)


class Mapping:
    """Index maps between our coordinates and Pinocchio's (``q`` with cos/sin, and ``v``)."""

    def __init__(self, robot, model):
        self.robot, self.model = robot, model
        joints = [model.joints[model.getJointId(n)] for n in robot.joint_names]
        self.idx_q = np.array([j.idx_q for j in joints], dtype=int)
        self.idx_v = np.array([j.idx_v for j in joints], dtype=int)
        self.unbounded = np.array([j.nq == 2 for j in joints])
        self.joint_ids = np.array([model.getJointId(n) for n in robot.joint_names], dtype=int)

    def q(self, q):
        """Pinocchio configuration for our ``q`` (one state)."""
        out = pin.neutral(self.model)
        for k in range(len(q)):
            if self.unbounded[k]:
                out[self.idx_q[k]:self.idx_q[k] + 2] = np.cos(q[k]), np.sin(q[k])
            else:
                out[self.idx_q[k]] = q[k]
        return out

    def v(self, x):
        """Pinocchio tangent vector (velocity, acceleration, torque) for ours."""
        out = np.zeros(self.model.nv)
        out[self.idx_v] = x
        return out

    def ours(self, x):
        """Our ordering of a Pinocchio tangent vector, or of a matrix's rows and columns."""
        x = np.asarray(x)
        return x[np.ix_(self.idx_v, self.idx_v)] if x.ndim == 2 else x[self.idx_v]

    def joint_wrenches(self, data):
        """``data.f`` of the movable joints as ``(dof, 6)`` ``[f; tau]`` (Pinocchio's ``[linear; angular]``)."""
        return np.array([data.f[int(j)].vector for j in self.joint_ids]).reshape(-1, 6)  # pin wants a Python int

    def drive_torques(self, qd):
        """The URDF ``<dynamics>`` friction Pinocchio stores but its algorithms leave out."""
        v = self.v(qd)
        return self.ours(self.model.damping * v + self.model.friction * np.sign(v))


def random_states(robot, n, seed=0, scale=1.0):
    """``n`` random ``(q, qd, qdd)`` triples within the joint limits, or within ±pi where a joint is unbounded or
    its limits are placeholders (some URDFs write ±1e16)."""
    rng = np.random.default_rng(seed)
    lo, hi = robot.position_limits.T
    lo = np.where(lo > -2 * np.pi, lo, -np.pi)
    hi = np.where(hi < 2 * np.pi, hi, np.pi)
    q = rng.uniform(lo, hi, size=(n, robot.dof))
    qd = rng.uniform(-scale, scale, size=(n, robot.dof))
    qdd = rng.uniform(-scale, scale, size=(n, robot.dof))
    return q, qd, qdd


def relative_error(ours, reference):
    """Max absolute difference over the larger of 1 and the reference's largest magnitude."""
    ours, reference = np.asarray(ours), np.asarray(reference)
    return float(np.abs(ours - reference).max() / max(1.0, np.abs(reference).max())) if reference.size else 0.0
