"""The counters behind a dynamics node's ``/diagnostics``."""
import time


class Statistics:
    """Counters behind /diagnostics: a window since the last status, and totals since start or ``~/reset``."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.total_inputs = self.total_rejected = self.total_violations = 0
        self.last_rejection = ""
        self.refused = {}  # topic -> (wall time, reason) of its last refused input, until a good one arrives
        self.new_window()

    def new_window(self):
        self.window_start = time.monotonic()
        self.inputs = self.rejected = self.violations = 0
        self.compute_sum = self.compute_max = 0.0
        self.violating_joints = set()

    def computed(self, seconds):
        self.inputs += 1
        self.total_inputs += 1
        self.compute_sum += seconds
        self.compute_max = max(self.compute_max, seconds)

    def reject(self, reason, topic=None):
        self.rejected += 1
        self.total_rejected += 1
        self.last_rejection = reason
        if topic is not None:
            self.refused[topic] = (time.time(), reason)

    def accepted(self, topic):
        """A good input on ``topic``: its last refusal is no longer news."""
        if self.refused:
            self.refused.pop(topic, None)

    def exceeded(self, joints):
        self.violations += 1
        self.total_violations += 1
        self.violating_joints.update(joints)
