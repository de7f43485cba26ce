"""``rne-dynamics identify ROBOT MOTION [MOTION ...] --links``: the whole robot from recordings with measured efforts
(:func:`~rne_dynamics.algorithms.robot_identification.identify_robot`), written back as files the package reads.

Writes into DIR, only once everything is computed: ``identified.urdf`` (ROBOT with each moving body's identified
inertial on the link its joint moves, the links fixed to it left without one, and ``<dynamics damping friction>``
per joint), ``drive.yaml`` (:func:`~rne_dynamics.load_drive`'s format: armature, damping, friction, friction_offset
and coulomb_velocity per joint, and the transmissions with their identified rotor inertias: ``loads --drive`` and the
nodes' ``drive_file``), ``identified.yaml`` (every parameter,
base parameters with standard deviations, condition number, per-joint RMSE), ``parameters.yaml`` (the nodes'
``robot_description`` and ``drive_file``), ``residuals.png`` and, with ``--holdout``, ``holdout.png``.

Velocities and accelerations missing from a recording are differentiated by zero-phase local cubic fits
(Savitzky-Golay for uneven stamps, :func:`~rne_dynamics.tools.loads.smooth_derivatives`) over a window chosen from the
median sampling rate unless ``--window`` is given (:func:`~rne_dynamics.tools.loads.rate_window`: -3 dB near
``min(10 Hz, rate / 5)``); the printout says which.

Several recordings (paths, directories, globs) run through Dask (:mod:`~rne_dynamics.tools.fleet`): each is read,
and its share of the fit made, by a task on a worker, where it stays; the fit sums the shares here.
"""
import os
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import replace

import numpy as np
import yaml

from ..algorithms.robot_identification import body_quantities, identify_robot, shared
from ..model.drive import REFLECTED, reflected_terms
from ..model.urdf import expand_xacro
from . import fleet
from .identify import joint_figure, write_files
from .inspect_robot import effort_unit, load_robot, print_warnings
from .loads import DEFAULT_TOPIC, rate_window, read_motion

#: Share of the held-out samples with the robot still (``RobotIdentification.holdout_still``) above which the summary
#: says so: its held-out RMSE is then mostly the Coulomb law's noise.
HELD_STILL = 0.2


def read_recording(path, *, robot, topic=DEFAULT_TOPIC, window=None, show_progress=True):
    """The recording at ``path`` as a motion with efforts (one task of a fleet)."""
    return read_motion(robot, path, topic=topic, window=window, show_progress=show_progress, need_effort=True)


def describe(motion, path, *, window=None):
    """``(line, time)``: what was read from ``path`` and how it was differentiated, and its sample times."""
    note = ""
    if motion.derived:
        _, cutoff, rate = rate_window(motion.time)
        chosen = f", -3 dB near {cutoff:.3g} Hz" if window is None else ""
        note = (f"; {' and '.join(motion.derived)} by zero-phase local cubic fits over {motion.window:.3g} s "
                f"(median rate {rate:.4g} Hz{chosen})")
    return f"{path}: {len(motion.time)} samples over {motion.time[-1] - motion.time[0]:.3f} s{note}", motion.time


def identified_urdf(result, robot_path, **source):
    """ROBOT's URDF text with the identified inertials and friction."""
    root = ET.fromstring(expand_xacro(robot_path, xacro_args=source.get("xacro_args"),
                                      package_paths=source.get("package_paths")))
    links = {e.get("name"): e for e in root.findall("link")}
    joints = {e.get("name"): e for e in root.findall("joint")}
    identified = result.robot
    for index, body in enumerate(identified.bodies):
        child = identified.joints[body.joint].child
        for link, (owner, _, _) in identified.link_frames.items():
            if owner == index and link != child and links[link].find("inertial") is not None:
                links[link].remove(links[link].find("inertial"))  # lumped into the body's inertial below
        element = links[child]
        if element.find("inertial") is not None:
            element.remove(element.find("inertial"))
        mass, com, inertia = body_quantities(body)
        inertial = ET.SubElement(element, "inertial")
        ET.SubElement(inertial, "origin", xyz=" ".join(f"{x:.12g}" for x in com), rpy="0 0 0")
        ET.SubElement(inertial, "mass", value=f"{mass:.12g}")
        ET.SubElement(inertial, "inertia", **{name: f"{value:.12g}" for name, value in
                                              zip(("ixx", "ixy", "ixz", "iyy", "iyz", "izz"), inertia)})
    for j, name in enumerate(identified.joint_names):
        element = joints[name]
        dynamics = element.find("dynamics")
        if dynamics is None:
            dynamics = ET.SubElement(element, "dynamics")
        dynamics.set("damping", f"{identified.damping[j]:.12g}")
        dynamics.set("friction", f"{identified.friction[j]:.12g}")
    ET.indent(root)
    return ET.tostring(root, encoding="unicode") + "\n"


def drive_document(robot):
    """``drive.yaml``: per joint the identified drive terms, as :func:`~rne_dynamics.load_drive` reads them, and
    the robot's ``transmissions``: a joint turned by one motor (of all the transmissions), that turns it alone, has
    its identified rotor inertia written as that motor's (``I_m = armature / n^2``); the rest stays the joint's own
    ``armature``."""
    motors = reflected_terms(robot, robot.transmissions)
    own = {label: getattr(robot, label) - motors[label] for label in REFLECTED}
    turning = Counter(joint for t in robot.transmissions for joint, column in zip(t.joints, t.matrix.T)
                      for n in column if n != 0)      # motors per joint
    transmissions = []
    for t in robot.transmissions:
        inertia = t.rotor_inertia.copy()
        for m in range(len(t.motors)):
            turned = np.flatnonzero(t.matrix[m])
            if len(turned) == 1 and t.joints[turned[0]] in robot.joint_names and turning[t.joints[turned[0]]] == 1:
                j, n = robot.joint_names.index(t.joints[turned[0]]), t.matrix[m, turned[0]]
                inertia[m] += own["armature"][j] / n ** 2
                own["armature"][j] = 0.0
        transmissions.append(replace(t, rotor_inertia=inertia))
    document = {joint: {"armature": float(own["armature"][j]), "damping": float(own["damping"][j]),
                        "friction": float(own["friction"][j]), "friction_offset": float(robot.friction_offset[j]),
                        "coulomb_velocity": float(robot.coulomb_velocity[j])}
                for j, joint in enumerate(robot.joint_names)}
    if transmissions:
        document["transmissions"] = {t.name: t.described() for t in transmissions}
    return document


def run_identify_links(robot_path, motion_paths, *, friction=True, holdout=0.0, coulomb_velocity=0.01,
                       regularisation=1e-3, output="rne_identified", topic=DEFAULT_TOPIC, window=None, print_=print,
                       scheduler=None, workers=None, **source):
    """The ``identify --links`` command: read, identify, print, then write the files. Several recordings (or a
    ``scheduler``) go through Dask (:mod:`~rne_dynamics.tools.fleet`): each is read, and its share of the fit
    computed, by a task on the worker that holds it."""
    robot = load_robot(robot_path, **source)
    print_warnings("identify", robot)
    options = {"friction": friction, "armature": friction, "holdout": holdout, "coulomb_velocity": coulomb_velocity,
               "regularisation": regularisation}
    if not fleet.use_cluster(motion_paths, scheduler):
        motions = [read_recording(path, robot=robot, topic=topic, window=window) for path in motion_paths]
        lines, times = zip(*(describe(motion, path, window=window) for motion, path in zip(motions, motion_paths)))
        print_("\n".join(lines))
        result = identify_robot(robot, motions, **options)
    else:
        with fleet.dask_client(scheduler, workers, len(motion_paths)) as client:
            motions = client.map(read_recording, [os.path.abspath(p) for p in motion_paths], pure=False,
                                 show_progress=False, **shared(client, robot=robot, topic=topic, window=window))
            lines, times = zip(*client.gather(client.map(describe, motions, motion_paths, pure=False,
                                                         window=window)))
            print_("\n".join(lines))
            result = identify_robot(robot, motions, client=client, **options)
    drive_path = os.path.abspath(os.path.join(output, "drive.yaml"))
    urdf = identified_urdf(result, robot_path, **source)
    files = {"identified.urdf": urdf.encode(),
             "drive.yaml": yaml.safe_dump(drive_document(result.robot), sort_keys=False).encode(),
             "identified.yaml": yaml.safe_dump(result.as_dict(), sort_keys=False).encode(),
             "parameters.yaml": yaml.safe_dump({"/**": {"ros__parameters": {
                 "robot_description": urdf, "drive_file": drive_path}}}, sort_keys=False).encode(),
             "residuals.png": torque_figure(robot, times, result.fitted, "fitted samples")}
    if result.held_out:
        files["holdout.png"] = torque_figure(robot, times, result.held_out, "held-out samples")
    print_("\n".join(summary_lines(robot, result)))
    write_files(output, files, print_)
    return 0


def summary_lines(robot, result):
    """Condition number, masses, friction and the per-joint RMSE of the URDF's model and the identified one."""
    lines = [f"{result.samples} samples fitted ({result.holdout_samples} held out); {len(result.base.names)} base "
             f"parameters; condition number {result.condition_number:.4g} (weighted, unit columns)"]
    for link in result.repaired:
        lines.append(f"{link}: the URDF's inertial is not physically consistent (triangle inequality); the fit starts "
                     "from the nearest consistent one")
    lines.append(f"{'body (joint)':<26}{'mass':>10}{'URDF':>10}  kg")
    for body, given in zip(result.robot.bodies, robot.bodies):
        lines.append(f"  {body.joint[:24]:<24}{body.mass:10.4f}{given.mass:10.4f}")
    if result.friction is not None:
        terms = [t for t in ("viscous", "coulomb", "offset", "armature") if t in next(iter(result.friction.values()))]
        lines.append(f"{'drive':<26}" + "".join(f"{t:>18}" for t in terms))
        for joint, f in result.friction.items():
            lines.append(f"  {joint[:24]:<24}" + "".join(f"{'lumped':>18}" if np.isnan(f[t + "_std"]) else
                                                          f"{f[t]:>9.4f} +-{f[t + '_std']:<7.4f}" for t in terms))
    for motor, f in (result.motors or {}).items():
        values = ", ".join(f"{term} lumped" if np.isnan(f[term + "_std"]) else
                           f"{term} {f[term]:.4g} +-{f[term + '_std']:.2g}"
                           for term in ("viscous", "coulomb", "rotor_inertia") if term in f)
        lines.append(f"  motor {motor} (turns several joints, motor side): {values}")
    if result.not_separable:
        lines.append(f"not separable in this motion (0, lumped into the terms kept): "
                     f"{', '.join(result.not_separable)}")
    header = f"{'torque RMSE':<26}{'URDF':>10}{'identified':>12}"
    if result.holdout_rmse is not None:
        header += f"{'held-out URDF':>15}{'identified':>12}"
    lines.append(header)
    for j, joint in enumerate(robot.joint_names):
        unit = effort_unit(robot.joints[joint].type)
        line = f"  {joint[:24]:<24}{result.rmse_given[j]:10.4f}{result.rmse[j]:12.4f}"
        if result.holdout_rmse is not None:
            line += f"{result.holdout_rmse_given[j]:15.4f}{result.holdout_rmse[j]:12.4f}"
        lines.append(line + f"  {unit}")
    if result.holdout_still > HELD_STILL:
        lines.append(f"the robot stands still in {100 * result.holdout_still:.0f}% of the held-out samples, where a "
                     "Coulomb law's sign is the encoders' noise: hold out a part where it moves")
    return lines


def torque_figure(robot, times, parts, what):
    """PNG bytes: per joint the measured torque, the identified model's, the URDF model's and the residual, against
    time (recordings one after another), with the RMSE of both models in each title."""
    measured, identified, given = (np.concatenate([p[k] for p in parts]) for k in (2, 3, 4))
    offset, joined = 0.0, []
    for k, index, *_ in parts:
        t = times[k][index] - times[k][0]
        joined.append(t + offset)
        offset += t[-1] + np.median(np.diff(times[k]))
    time = np.concatenate(joined)
    rmse = np.sqrt(np.mean((measured - identified) ** 2, axis=0))
    rmse_given = np.sqrt(np.mean((measured - given) ** 2, axis=0))

    def panel(ax, j, joint, unit):
        ax.plot(time, measured[:, j], color="0.6", lw=1.0, label="measured")
        ax.plot(time, given[:, j], color="tab:orange", lw=0.8, label="URDF model")
        ax.plot(time, identified[:, j], color="tab:blue", lw=1.0, label="identified model")
        ax.plot(time, measured[:, j] - identified[:, j], color="tab:red", lw=0.8, label="residual (identified)")
        ax.set_title(f"{joint}: RMSE {rmse[j]:.3g} {unit} (URDF {rmse_given[j]:.3g})", fontsize=10)
    return joint_figure(robot, panel, f"{robot.name}: measured torque against the models, {what}",
                        "time [s] (recordings one after another)")
