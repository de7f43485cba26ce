"""The forward node's simulated time and its runaway diagnosis: :class:`SimulationClock` follows the wall clock in
whole periods, :func:`real_time` says how far it kept up and why not, :func:`runaway_message` names the joint, the
step and the likely cause when a simulation runs away."""
from typing import NamedTuple

import numpy as np
from builtin_interfaces.msg import Time

import rne_dynamics as rd
from ..model.joints import joint_type


#: How far (ns) the simulation may fall behind the wall clock: a tick that comes later than this (the machine or the
#: executor held the node up) drops the time beyond (the real-time factor falls below 1); within it, ticks catch up.
MAX_LAG_NS = 100_000_000
#: Least wall time (ns) one tick may spend catching up (else one period): a tick that runs out of it leaves the
#: periods still due to the next, so the executor's other callbacks (effort commands, a controller) get their turn.
MIN_TICK_BUDGET_NS = 5_000_000
REAL_TIME_TOLERANCE = 0.95  # a real-time factor below this makes the diagnostics WARN, with the reason


def period_ns(rate_hz):
    """The simulation's step (ns) at ``rate_hz``."""
    return round(1e9 / rate_hz)


def tick_budget_ns(period_ns):
    """The wall time a tick may spend on sub-steps: a period, at least :data:`MIN_TICK_BUDGET_NS`."""
    return max(period_ns, MIN_TICK_BUDGET_NS)


class Tally(NamedTuple):
    """What a :class:`SimulationClock` measured since it started (differences of two give a window's)."""
    elapsed_ns: int    # wall time since the clock started, at its last tick (a stopped simulation's stall left out)
    simulated_ns: int  # simulated time
    steps: int         # sub-steps taken
    step_cpu_ns: int   # the thread's computing time in the sub-steps (a core taken away mid-step is not counted)
    step_wall_ns: int  # their wall time
    ticks: int
    late_ticks: int    # ticks that came over MAX_LAG_NS late
    dropped_ns: int    # the wall time those dropped
    limited_ticks: int  # ticks that ran out of their budget with periods still due


class SimulationClock:
    """The simulated time of the forward node: it follows the wall clock (``time.monotonic_ns``), in integer
    nanoseconds since the start, and gives the stamps (``start_stamp_ns``, the ROS time of the start, plus the
    simulated time). Each timer tick simulates the whole periods of ``period_ns`` the wall clock has passed since the
    simulated time (:meth:`due`; the rest of a period waits for the next tick: every step is exactly one period, so
    the library's written code of the step, which takes ``dt`` as a constant, is made once), one sub-step each, as many
    as its budget (:func:`tick_budget_ns`) allows; the periods left are due at the next tick. Only time beyond
    :data:`MAX_LAG_NS` behind is dropped. It keeps the :class:`Tally` the real-time factor and its reason come from
    (:func:`real_time`)."""

    def __init__(self, period_ns, start_stamp_ns):
        self.period_ns, self.start_stamp_ns = period_ns, start_stamp_ns
        self.wall_start = None  # the wall clock one period before the first tick: the node may spin much later
        self.tally = Tally(0, 0, 0, 0, 0, 0, 0, 0, 0)

    @property
    def simulated_ns(self):
        return self.tally.simulated_ns

    @property
    def dropped_ns(self):
        return self.tally.dropped_ns

    def due(self, wall_ns):
        """A tick at ``wall_ns``: the whole periods to simulate now, the wall time passed beyond the simulated time,
        at most :data:`MAX_LAG_NS` (the time beyond dropped; :meth:`resume` a stopped clock without counting it).
        The tally's time is the last tick's: the factor between two tallies counts whole periods, not where in a
        period a window ends."""
        if self.wall_start is None:
            self.wall_start = wall_ns - self.period_ns
        tally = self.tally._replace(elapsed_ns=wall_ns - self.wall_start, ticks=self.tally.ticks + 1)
        behind = (tally.elapsed_ns - tally.dropped_ns - tally.simulated_ns) // self.period_ns
        most = max(1, MAX_LAG_NS // self.period_ns)
        if behind > most:
            tally = tally._replace(late_ticks=tally.late_ticks + 1,
                                   dropped_ns=tally.dropped_ns + (behind - most) * self.period_ns)
        self.tally = tally
        return max(min(behind, most), 0)

    def advanced(self, periods, due, cpu_ns, wall_ns):
        """A tick simulated ``periods`` of the ``due`` ones in ``cpu_ns`` of computing, ``wall_ns`` of wall time."""
        t = self.tally
        self.tally = t._replace(simulated_ns=t.simulated_ns + periods * self.period_ns, steps=t.steps + periods,
                                step_cpu_ns=t.step_cpu_ns + cpu_ns, step_wall_ns=t.step_wall_ns + wall_ns,
                                limited_ticks=t.limited_ticks + (periods < due))

    def resume(self, wall_ns):
        """Go on from ``wall_ns`` without simulating or counting the time since (a simulation stopped): the stamps
        go on from the simulated time."""
        if self.wall_start is not None:
            self.wall_start = wall_ns - self.tally.dropped_ns - self.tally.simulated_ns

    def hold(self, periods):
        """A tick whose ``periods`` passed with the state held: the stamps advance, no step is taken."""
        self.tally = self.tally._replace(simulated_ns=self.tally.simulated_ns + periods * self.period_ns)

    def since(self, tally, wall_ns):
        """The tally to compare with ``tally``: the last tick's, or, when no tick came since, the stall until
        ``wall_ns``."""
        if self.wall_start is None or self.tally.ticks > tally.ticks:
            return self.tally
        return self.tally._replace(elapsed_ns=wall_ns - self.wall_start)

    def stamp(self):
        sec, nanosec = divmod(self.start_stamp_ns + self.tally.simulated_ns, 1_000_000_000)
        return Time(sec=sec, nanosec=nanosec)


def real_time(before, after, period):
    """``(factor, reason)`` between two tallies: simulated over wall time, and when the factor is below
    :data:`REAL_TIME_TOLERANCE`, why, from what was measured (else ``""``): a step that costs more computing than a
    period, steps whose wall time exceeds the period (other processes took the core), ticks that came too late to
    catch up (the executor ran other callbacks, or the process waited for a core), ticks out of budget, or ticks
    that came too rarely."""
    wall = after.elapsed_ns - before.elapsed_ns
    if wall <= 0:
        return 1.0, ""
    factor = (after.simulated_ns - before.simulated_ns) / wall
    if factor >= REAL_TIME_TOLERANCE:
        return factor, ""
    steps = after.steps - before.steps
    ms = 1e-6 * period
    cpu = 1e-6 * (after.step_cpu_ns - before.step_cpu_ns) / max(steps, 1)
    elapsed = 1e-6 * (after.step_wall_ns - before.step_wall_ns) / max(steps, 1)
    late, limited = after.late_ticks - before.late_ticks, after.limited_ticks - before.limited_ticks
    ticks = after.ticks - before.ticks
    if steps and cpu >= REAL_TIME_TOLERANCE * ms:
        reason = f"a step costs {cpu:.3g} ms of computing, more than the period of {ms:.3g} ms: lower rate_hz"
    elif steps and elapsed >= REAL_TIME_TOLERANCE * ms:
        reason = (f"a step took {elapsed:.3g} ms of wall time for {cpu:.3g} ms of computing, more than the period "
                  f"of {ms:.3g} ms: other processes held the core (a loaded machine)")
    elif late:
        dropped = 1e-6 * (after.dropped_ns - before.dropped_ns)
        reason = (f"{late} of {ticks} ticks came over {1e-6 * MAX_LAG_NS:g} ms late ({dropped:.0f} ms of simulated "
                  "time dropped): the executor ran other callbacks or the process waited for a core")
    elif limited:
        reason = (f"{limited} of {ticks} ticks ran out of their {1e-6 * tick_budget_ns(period):g} ms "
                  f"budget for catching up (a step costs {cpu:.3g} ms of computing, {elapsed:.3g} ms of wall time)")
    else:
        reason = (f"the timer ticked {1e9 * ticks / wall:.0f} times a second (rate_hz {1e3 / ms:g}): the executor "
                  "was busy with other callbacks")
    return factor, reason


#: A simulated speed beyond this many times the joint's URDF velocity limit is a runaway: a divergence grows by orders
#: of magnitude per step, far beyond any motion the robot's drives make, well before a float overflows.
RUNAWAY_VELOCITY_FACTOR = 100.0
#: The runaway speed (rad/s or m/s) of a coordinate without a velocity limit (a floating base; a URDF that gives
#: none).
RUNAWAY_VELOCITY = 1000.0


def runaway_speeds(robot):
    """Per coordinate of ``v``, the speed beyond which the simulation has run away."""
    limits = robot.velocity_limits
    return np.where(np.isfinite(limits) & (limits > 0), RUNAWAY_VELOCITY_FACTOR * limits, RUNAWAY_VELOCITY)


def coordinate(robot, k):
    """The name and speed unit of coordinate ``k`` of ``v``."""
    base = robot.nv - len(robot.joint_names)
    if k < base:
        return "the floating base", "m/s" if k < 3 else "rad/s"
    name = robot.joint_names[k - base]
    return f"joint '{name}'", "m/s" if joint_type(robot.joints[name].type).linear else "rad/s"


def likely_cause(model, q, command, dt, fast=None):
    """Why a simulation that was at the finite state ``q`` under ``command`` ran away in a step of ``dt`` s. ``fast``:
    ``(step, coordinate, velocity)`` where the state first passed a URDF velocity limit, if it has run faster since
    (then a command beyond its limits may be a controller's answer to the runaway, not its cause). In order: the
    command beyond a joint's effort limit (a calm state only); a joint whose damping over its inertia (the mass
    matrix's diagonal, armature included) is a time constant shorter than the step (a stiff term the step does not
    resolve); a fast motion of the model's own, from where it began."""
    robot = model.robot
    over = np.abs(command) / model.effort_limits
    if fast is None and over.max(initial=0.0) > 1.0:
        j = int(np.argmax(over))
        return (f"the effort command: joint '{model.joint_names[j]}' {command[j]:.3g} {model.joint_unit(j)}, beyond "
                f"its effort limit {model.effort_limits[j]:g}")
    base = robot.nv - len(robot.joint_names)
    inertia = np.diagonal(rd.mass_matrix(robot, q))[base:]
    with np.errstate(divide="ignore"):
        constant = np.where(robot.damping > 0, inertia / robot.damping, np.inf)
    j = int(np.argmin(constant))
    if constant[j] < dt:
        return (f"the damping of joint '{model.joint_names[j]}', {robot.damping[j]:g} N m s/rad on an inertia of "
                f"{inertia[j]:.3g} kg m^2 there, is a time constant of {constant[j]:.3g} s, shorter than the step "
                f"of {dt:g} s: raise rate_hz above {1.0 / constant[j]:.0f} Hz or lower the damping")
    began = ""
    if fast is not None:
        name, unit = coordinate(robot, fast[1])
        began = (f"; it began at step {fast[0]}, where {name} passed its velocity limit ({fast[2]:.3g} {unit}), and "
                 "ran faster since")
    return (f"a motion faster than the step of {dt:g} s resolves (a light link, a stiff coupling, a joint stop, a "
            f"large effort){began}: raise rate_hz or check the model's inertias")


def runaway_message(model, step, seconds, q, q_bad, qd_bad, command, dt, speeds, failure="", fast=None):
    """One line on a runaway at sub-step ``step`` (``seconds`` of simulated time) from the good state ``q`` to the
    bad ``(q_bad, qd_bad)`` (or a step that raised ``failure``): the joint, what it reached, the likely cause
    (:func:`likely_cause`, ``fast`` as there), the way out."""
    robot = model.robot
    joints = len(robot.joint_names)
    nonfinite = ~np.isfinite(qd_bad)
    nonfinite[robot.nv - joints:] |= ~np.isfinite(q_bad[robot.nq - joints:])
    nonfinite[:robot.nv - joints] |= not np.isfinite(q_bad[:robot.nq - joints]).all()
    ratio = np.where(nonfinite, np.inf, np.abs(np.nan_to_num(qd_bad)) / speeds)
    k = int(np.argmax(ratio))
    name, unit = coordinate(robot, k)
    what = ("a non-finite state" if nonfinite[k] else
            f"a velocity of {qd_bad[k]:.3g} {unit}, beyond {speeds[k]:g} {unit}")
    what = f"the step failed ({failure})" if failure else f"{name} reached {what}"
    return (f"the simulation ran away at step {step} (t = {seconds:.3f} s simulated): {what}; "
            f"likely cause: {likely_cause(model, q, command, dt, fast)}. Integration stopped, nothing more published; "
            "~/reset restarts it")
