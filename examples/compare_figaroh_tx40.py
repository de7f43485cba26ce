#!/usr/bin/env python3
"""Held-out comparison with FIGAROH's published Staubli TX40 model: on the last 30% of the motion of FIGAROH's TX40
recording, the torque RMSE per joint of their identified base parameters, of the URDF and of ``rd.identify_robot``'s
fits on the first 70% (per-joint drive terms; the wrist's gear matrix as a coupled transmission).

    python examples/compare_figaroh_tx40.py [--data DIR] [--figaroh-filter]

The recording and URDF are FIGAROH's TX40 example (github.com/thanhndv212/figaroh-examples, ``examples/staubli_TX40``),
the model the base parameters its identification published (github.com/thanhndv212/figaroh-plus,
``examples/staubli_TX40/results/TX40_bp_5.csv``: 60 base parameters, least-squares and weighted least-squares values
with their relative standard deviations, fitted on the whole recording); all downloaded into DIR (default
``~/.cache/rne_dynamics/figaroh_tx40``), not shipped.

The recording: motor positions and currents at 5 kHz, taken to the joint side with FIGAROH's gear matrices (joint 6's
motor also turns joint 5), every 10th sample kept (500 Hz), the motion only (0.1 s to 7.5 s, the head and tail
FIGAROH's example names: the robot stands still from 7.6 s on, where any Coulomb model's ``sign(qd)`` of an encoder's
noise is a random torque the stiction holding the robot does not make); velocities and accelerations by local cubic
fits over 21 samples (42 ms). ``--figaroh-filter`` preprocesses as FIGAROH's example instead: positions through its
4th-order zero-phase Butterworth filter (its ``cut_off_frequency_butterworth: 100`` gives a normalised cut-off of
``ts f_c / 2 = 0.01``, 25 Hz), differences at 5 kHz, then positions, velocities, accelerations and torques decimated
by 100 (two zero-phase decimations by 10, anti-aliased at 20 Hz: FIGAROH decimates the torques and the regressor's
columns) to 50 Hz, where the torques are compared.
"""
import argparse
import csv
import os
import urllib.request

import numpy as np

import rne_dynamics as rd
from rne_dynamics.algorithms.robot_identification import with_inertial_parameters
from rne_dynamics.tools.loads import smooth_derivatives

EXAMPLE = ("https://raw.githubusercontent.com/thanhndv212/figaroh-examples/c0b5c7f0fda10078be55104f9ee76ac106b7a5ee/"
           "examples/staubli_TX40/")
PUBLISHED = ("https://raw.githubusercontent.com/thanhndv212/figaroh-plus/48aa1dbb0d929f2d4c82101e20dd2813792b9eb6/"
             "examples/staubli_TX40/results/TX40_bp_5.csv")
FILES = {"tx40_mdh_modified.urdf": EXAMPLE + "urdf/tx40_mdh_modified.urdf",
         "pos_read_data.csv": EXAMPLE + "data/pos_read_data.csv", "curr_data.csv": EXAMPLE + "data/curr_data.csv",
         "TX40_bp_5.csv": PUBLISHED}
RATE = 5000.0                                              # Hz, the recording's
MOTION = (0.1, 7.5)                                        # s: FIGAROH's head and tail
#: Motor turns per joint turn; joint 6's motor turns joints 5 and 6 (motor velocity = GEARS @ qd).
REDUCTIONS = np.array([32.0, 32.0, 45.0, -48.0, 45.0, 32.0])
GEARS = np.diag(REDUCTIONS)
GEARS[5, 4] = REDUCTIONS[5]
#: The MDH zero of the URDF against the encoders' (FIGAROH's calibration).
ZERO = np.array([0.0, -np.pi / 2, np.pi / 2, 0.0, 0.0, 0.0])
#: FIGAROH's names of a body's 10 inertial parameters, at their places in ours (regressor.PARAMETER_NAMES).
FIGAROH_NAMES = dict(zip(("m", "mx", "my", "mz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz"), range(10)))
#: FIGAROH's per-joint drive terms as ours.
DRIVE_TERMS = {"Ia": "armature", "fv": "damping", "fs": "friction", "off": "friction_offset"}


def download(directory):
    """The files of :data:`FILES` in ``directory``, downloaded where absent; ``directory``."""
    os.makedirs(directory, exist_ok=True)
    for name, url in FILES.items():
        if not os.path.isfile(os.path.join(directory, name)):
            print(f"downloading {url}")
            urllib.request.urlretrieve(url, os.path.join(directory, name))
    return directory


def raw_recording(directory):
    """``(q, tau)`` at 5 kHz, joint side: ``q = GEARS^-1 q_motor`` + :data:`ZERO` and, by virtual work,
    ``tau = GEARS^T tau_motor`` (the currents are FIGAROH's motor torques)."""
    motor, current = (np.loadtxt(os.path.join(directory, name), delimiter=",", skiprows=1)
                      for name in ("pos_read_data.csv", "curr_data.csv"))
    return motor @ np.linalg.inv(GEARS).T + ZERO, current @ GEARS


def recording(directory, step=10, window=21, motion=MOTION):
    """``(time, q, qd, qdd, tau)`` of the ``motion`` (from, to; s), every ``step``-th sample, derivatives by local
    cubic fits over ``window`` samples (on the whole recording, so that the motion's ends are not one-sided)."""
    q, tau = (x[::step] for x in raw_recording(directory))
    time = np.arange(len(q)) * step / RATE
    qd = smooth_derivatives(time, q, window)[0]
    qdd = smooth_derivatives(time, qd, window)[0]
    part = (time >= motion[0]) & (time <= motion[1])
    return time[part], q[part], qd[part], qdd[part], tau[part]


def figaroh_filtered_recording(directory):
    """``(time, q, qd, qdd, tau)`` of the motion preprocessed as FIGAROH's example (module docstring), at 50 Hz."""
    from scipy import signal
    q, tau = raw_recording(directory)
    b, a = signal.butter(4, 100.0 / RATE / 2, "low")    # its Wn = ts f_c / 2
    q = signal.filtfilt(b, a, q, axis=0, padtype="odd", padlen=3 * (max(len(b), len(a)) - 1))
    qd = np.diff(q, axis=0) * RATE
    qdd = np.gradient(qd, axis=0) * RATE
    arrays = [q[:-1], qd, qdd, tau[:-1]]
    for _ in range(2):
        arrays = [signal.decimate(x, 10, axis=0, zero_phase=True) for x in arrays]
    time = np.arange(len(arrays[0])) * 100 / RATE
    motion = (time >= MOTION[0]) & (time <= MOTION[1])
    return (time[motion], *(x[motion] for x in arrays))


def coupled_wrist(robot):
    """``robot`` with its gears as transmissions: joints 1-4 through a motor each, joints 5 and 6 through two
    motors with :data:`GEARS`' wrist block (joint 6's motor turns both)."""
    joints = robot.joint_names
    return robot.with_drive(transmissions={
        **{f"t{j}": {"joints": [joints[j]], "matrix": [[REDUCTIONS[j]]]} for j in range(4)},
        "wrist": {"joints": list(joints[4:]), "motors": ["m5", "m6"], "matrix": GEARS[4:, 4:].tolist()}})


def published_model(robot, path, column=3):
    """``(model, joint6_rotor)``: FIGAROH's published model as a robot of ours, and the rotor inertia its joint 6
    lacks. ``column``: 1 their least-squares values, 3 their weighted least-squares ones.

    Each of their base parameters is its first standard parameter plus a combination of others (Gautier's grouping;
    ``Ixx2`` about joint 2's frame origin, ``mx2 = m c_x``: Pinocchio's parameters, as ours): the first is set to
    the base value, the others to 0, which gives their ``Y_b beta`` whatever the grouping. Their drive terms per
    joint are ``Ia qdd + fv qd + fs sign(qd) + off`` (``Ia1``, ``Ia2`` grouped into the first two bodies' ``Izz``;
    ``Ia6`` is not among their base parameters), and joint 6's motor's ``Iam6``, ``fvm6``, ``fsm6`` have the
    columns ``(qdd6, qd6, sign(qd5 + qd6))`` on joint 5 and ``(qdd5, qd5, sign(qd5 + qd6))`` on joint 6: the
    coupling share of a motor turning both joints (``G_6 = [32, 32]``), which here is that motor (rotor inertia
    ``Iam6 / 32^2``, damping ``fvm6 / 32^2``, Coulomb ``fsm6 / 32``, sign law) with its share on each joint's own
    velocity taken off that joint's terms. Joint 6's rotor inertia would be ``-Iam6`` (their model's wrist rotor
    inertia ``[[Ia5, Iam6], [Iam6, 0]]`` is indefinite, which no motor has): ``model``'s torques on joint 6 plus
    ``joint6_rotor qdd6`` are theirs."""
    with open(path, newline="") as stream:
        rows = [(row[0].split()[0], float(row[column])) for row in csv.reader(stream) if row]
    parameters = np.zeros(10 * robot.nv)
    drive = {term: np.zeros(robot.nv) for term in DRIVE_TERMS.values()}
    motor = {}
    for name, value in rows:
        if name in ("Iam6", "fvm6", "fsm6"):
            motor[name] = value
            continue
        kind = name.rstrip("0123456789")
        joint = int(name[len(kind):]) - 1
        if kind in FIGAROH_NAMES:
            parameters[10 * joint + FIGAROH_NAMES[kind]] = value
        else:
            drive[DRIVE_TERMS[kind]][joint] = value
    n = REDUCTIONS[5]
    drive["armature"][4] -= motor["Iam6"]
    drive["damping"][4:] -= motor["fvm6"]
    joints = robot.joint_names
    model = with_inertial_parameters(robot, parameters).with_drive(
        coulomb_velocity=np.zeros(robot.nv), **drive).with_drive(transmissions={"wrist": {
            "joints": list(joints[4:]), "motors": ["m5", "m6"], "matrix": GEARS[4:, 4:].tolist(),
            "rotor_inertia": [0.0, motor["Iam6"] / n ** 2], "damping": [0.0, motor["fvm6"] / n ** 2],
            "friction": [0.0, motor["fsm6"] / n], "coulomb_velocity": [0.0, 0.0]}})
    return model, -motor["Iam6"]


def published_torques(robot, path, q, qd, qdd, column=3):
    """FIGAROH's published model's torques (:func:`published_model`) by our inverse dynamics."""
    model, joint6_rotor = published_model(robot, path, column)
    tau = rd.inverse_dynamics(model, q, qd, qdd).torques
    tau[:, 5] += joint6_rotor * qdd[:, 5]
    return tau


def comparison(robot, path, q, qd, qdd, tau, holdout=0.3):
    """``{model: held-out torque RMSE per joint}``: the URDF, FIGAROH's published model, and ``rd.identify_robot``
    fitted on the first ``1 - holdout`` with per-joint drive terms and with the coupled wrist."""
    cut = len(q) - int(round(holdout * len(q)))
    held = slice(cut, None)

    def rmse(predicted):
        return np.sqrt(np.mean((tau[held] - predicted) ** 2, axis=0))
    rows = {"URDF": rmse(rd.inverse_dynamics(robot, q[held], qd[held], qdd[held]).torques),
            "FIGAROH, published (fitted on all)": rmse(published_torques(robot, path, q[held], qd[held], qdd[held]))}
    for name, model in (("identified, per-joint drive terms", robot), ("identified, coupled wrist",
                                                                      coupled_wrist(robot))):
        result = rd.identify_robot(model, (q, qd, qdd, tau), holdout=holdout, armature=True, max_condition=1e8)
        rows[name] = result.holdout_rmse
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=os.path.join(os.path.expanduser("~"), ".cache", "rne_dynamics",
                                                       "figaroh_tx40"), help="where the files are (or are put)")
    parser.add_argument("--figaroh-filter", action="store_true", help="FIGAROH's filter and decimation to 50 Hz")
    args = parser.parse_args(argv)
    directory = download(args.data)
    robot = rd.load_urdf(os.path.join(directory, "tx40_mdh_modified.urdf"))
    time, q, qd, qdd, tau = (figaroh_filtered_recording if args.figaroh_filter else recording)(directory)
    rows = comparison(robot, os.path.join(directory, "TX40_bp_5.csv"), q, qd, qdd, tau)
    held = int(round(0.3 * len(q)))
    print(f"torque RMSE (N m) on the last {held} of {len(q)} samples ({time[-held]:.2f} s to {time[-1]:.2f} s), "
          "joints 1-6:")
    for name, values in rows.items():
        print(f"  {name:<36}" + "".join(f"{v:7.2f}" for v in values))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
