"""Dynamic motion planning: B-spline trajectory optimisation with analytic dynamics gradients (:mod:`.problem`),
time-optimal retiming of a fixed path (:mod:`.retime`), the limits and their check (:mod:`.limits`), the flexible
feedforward of a trajectory's points (:mod:`.feedforward`)."""
from .bspline import ClampedBasis, SplineTrajectory
from .feedforward import flexible_feedforward_through
from .limits import LimitCheck, Limits
from .problem import Iterate, PlannedTrajectory, TrajectoryProblem, plan
from .retime import PlanningError, Polyline, RetimedPath, SplinePath, retime

__all__ = ["ClampedBasis", "SplineTrajectory", "flexible_feedforward_through", "LimitCheck", "Limits", "Iterate",
           "PlannedTrajectory", "TrajectoryProblem", "plan", "PlanningError", "Polyline", "RetimedPath", "SplinePath",
           "retime"]
