"""``/joint_states`` from several publishers, merged as robot_state_publisher merges them.

An arm driver and a gripper driver both publish ``/joint_states``, each message carrying its own joints. The nodes
keep the last position and velocity of every joint of the model (:class:`MergedJointStates`): a message that carries
some of them updates those and is answered once every joint of the model has been heard at least once; a message
that shares no joint with the model (a third robot, a camera pan-tilt) is counted, not refused; a joint whose last
value is older than parameter ``joint_state_timeout`` is reported by name (a driver that stopped).
"""
import array
import math

import numpy as np

from ..errors import StateError

#: The remedy for joints no message carries: what the missing-joints message says.
LOCK_REMEDY = ("publish them on /joint_states, or hold them fixed with parameter locked_joints "
               "(entries joint=position)")


def message_values(values, count, what, take, names, optional=False):
    """The entries ``take`` of a message's per-name array ``values`` (``position``, ``effort`` ...; ``count`` names),
    the joints ``names``. An empty array of an ``optional`` field gives None. Wrong lengths and non-finite values of
    the taken entries raise :class:`StateError` naming the joint (other entries are not looked at)."""
    if len(values) != count:
        if optional and len(values) == 0:
            return None
        raise StateError(f"{count} joint names but {len(values)} {what} values")
    x = (np.frombuffer(values) if type(values) is array.array else np.asarray(values, float))[take]
    if not np.isfinite(x).all():
        bad = int(np.flatnonzero(~np.isfinite(x))[0])
        raise StateError(f"{what} of joint '{names[bad]}' is {x[bad]}")
    return x


class MergedJointStates:
    """The last position and velocity of each of ``names`` (a model's input joints), from messages that each carry
    any subset of them; ``q`` and ``qd`` are updated in place (read them before the next message)."""

    def __init__(self, names):
        self.names = list(names)
        self.index = {name: k for k, name in enumerate(self.names)}
        self.q, self.qd = np.zeros(len(names)), np.zeros(len(names))
        self.heard = np.full(len(names), -math.inf)  # time.monotonic() of each joint's last value
        self.complete = False  # every joint heard at least once
        self.foreign = 0  # messages that share no joint with the model
        self._maps = {}  # a message's name tuple -> (indices in the message, indices in the model), or a reason

    def take(self, msg, now):
        """Take a JointState received at ``now`` (``time.monotonic()``). True: ``q``, ``qd`` hold a full state to
        answer; False: the message shares no joint with the model (counted in ``foreign``). Raises
        :class:`StateError` naming the fault: a joint named twice, arrays of the wrong length, a value that is not
        finite, or joints of the model never heard yet (with :data:`LOCK_REMEDY`)."""
        names = msg.name
        from_msg, to_model = self._map(tuple(names))
        model_names = [self.names[k] for k in to_model]
        positions = message_values(msg.position, len(names), "position", from_msg, model_names)
        velocities = message_values(msg.velocity, len(names), "velocity", from_msg, model_names, optional=True)
        if len(to_model) == 0:
            self.foreign += 1
            return False
        self.q[to_model] = positions
        self.qd[to_model] = 0.0 if velocities is None else velocities
        self.heard[to_model] = now
        if not self.complete:
            self.complete = bool(np.isfinite(self.heard).all())
            if not self.complete:
                missing = ", ".join(self.unheard(self.names))
                raise StateError(f"missing joints {missing}: not yet heard on /joint_states (the model needs "
                                 f"{', '.join(self.names)}); {LOCK_REMEDY}")
        return True

    def unheard(self, names):
        """Those of ``names`` (joints of the model) that no message has carried yet."""
        return [name for name in names if not np.isfinite(self.heard[self.index[name]])]

    def _map(self, names):
        found = self._maps.get(names)
        if found is None:
            found = self._maps[names] = self._mapping(names)
            if len(self._maps) > 64:  # a publisher that keeps changing its name list: stay bounded
                self._maps = {names: found}
        if isinstance(found, str):
            raise StateError(found)
        return found

    def _mapping(self, names):
        if len(set(names)) != len(names):
            twice = next(name for k, name in enumerate(names) if name in names[:k])
            return f"joint '{twice}' is named twice"
        pairs = [(k, self.index[name]) for k, name in enumerate(names) if name in self.index]
        from_msg, to_model = (np.array(column, dtype=np.intp) for column in zip(*pairs)) if pairs else ((), ())
        return np.asarray(from_msg, dtype=np.intp), np.asarray(to_model, dtype=np.intp)

    def stale(self, now, timeout):
        """The joints heard before whose last value is older than ``timeout`` s (none if ``timeout`` is 0)."""
        if timeout <= 0.0:
            return []
        old = np.isfinite(self.heard) & (now - self.heard > timeout)
        return [self.names[k] for k in np.flatnonzero(old)]

    def carry_over(self, previous):
        """Keep the values ``previous`` (the merge of the model before a swap) heard of the same joints."""
        for k, name in enumerate(self.names):
            j = previous.index.get(name)
            if j is not None:
                self.q[k], self.qd[k], self.heard[k] = previous.q[j], previous.qd[j], previous.heard[j]
        self.complete = bool(np.isfinite(self.heard).all())
        self.foreign = previous.foreign
