"""Partial evaluation of a kernel step: run the generic step once, as plain Python, on *symbolic* numbers with the
model's numbers as constants, and record the straight-line program it computes.

This is how a robot's own code is derived from the equations (Khalil & Kleinfinger's "customized symbolic" models,
obtained the way Pinocchio obtains its generated code from its templated algorithms): nothing is written twice.
Every value the step computes is a float (a constant: it depends on the model only, and is folded on the spot) or a
:class:`Value` (it depends on the inputs: one node of the program). Products with a zero constant vanish, products
with one are the other factor, and equal nodes are made once (hash-consing), so the program holds only the work the
robot needs.

Each node also carries its number at a *sample* state. A branch on an input-dependent comparison (a pivot check, a
skipped zero) or on a traced number's own truth follows the sample's side and becomes a *guard*: the written code
checks it and reports when a state takes the other side, so the caller can hand that state to the generic kernel.
"""
import math
import operator
import types
from threading import RLock

import numpy as np

from ._tuning import MAX_NODES


class Untraceable(TypeError):
    """The step did something a straight-line program cannot record."""


class Program:
    """The nodes recorded while tracing: ``ops[k]`` is ``(operation, operands)``, an operand a node index or a float
    constant; ``("input", (argument, element))`` reads an input (a node of its own: its operands are no nodes)."""

    def __init__(self, limit):
        self.limit = limit  # operations at most (Untraceable beyond)
        self.ops = []
        self.values = []
        self.index = {}
        self.guards = []  # (a condition's node, the side the sample took)

    def node(self, op, args, value):
        key = (op, tuple(x if type(x) is int else ("constant", x) for x in args))  # node 3 is not the constant 3.0
        k = self.index.get(key)
        if k is None:
            if len(self.ops) >= self.limit:
                raise Untraceable(f"the program has more than {self.limit} operations")
            k = self.index[key] = len(self.ops)
            self.ops.append((op, args))
            self.values.append(value)
        return Value(self, k)


def _operand(x):
    """A node index or a float; anything else cannot enter the program."""
    if type(x) is Value:
        return x.k
    try:
        return float(x)
    except TypeError:
        raise Untraceable(f"a {type(x).__name__} ({x!r}) met a traced number") from None


def _sample(x):
    return x.program.values[x.k] if type(x) is Value else float(x)


_COMMUTATIVE = {"add", "mul", "max", "min"}
_BINARY = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv,
           "max": max, "min": min, "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge,
           "eq": operator.eq, "ne": operator.ne}
_UNARY = {"neg": operator.neg, "abs": abs, "sin": math.sin, "cos": math.cos, "sqrt": math.sqrt, "tanh": math.tanh,
          "exp": math.exp, "log": math.log, "atan": math.atan, "asin": math.asin, "acos": math.acos,
          "sign": lambda x: float(np.sign(x))}


def binary(op, a, b):
    """``a op b`` with at least one traced operand, folded where a constant allows."""
    if type(a) is not Value and type(b) is not Value:
        return _BINARY[op](a, b)
    program = (a if type(a) is Value else b).program
    A, B = _operand(a), _operand(b)
    if op in _COMMUTATIVE and (type(A) is float or (type(B) is not float and B < A)):
        A, B = B, A  # a constant second, nodes in order: a + b and b + a are one node
    if type(B) is float:  # a node and a constant
        if B == 0.0 and op in ("add", "sub") or B == 1.0 and op in ("mul", "div"):
            return Value(program, A)
        if B == 0.0 and op == "mul":  # a finite model's zero (an infinite input is caught by the caller)
            return 0.0
        if B == -1.0 and op == "mul":
            return unary("neg", Value(program, A))
    elif op == "sub" and type(A) is int and A == B:  # x - x (a constant equal to a node's index is no node)
        return 0.0
    elif op == "sub" and type(A) is float and A == 0.0:
        return unary("neg", b)
    return program.node(op, (A, B), _BINARY[op](_sample(a), _sample(b)))


def unary(op, a):
    """``op a``, folded where ``a`` is a constant or ``op`` undoes the operation that made it."""
    if type(a) is not Value:
        return _UNARY[op](a)
    if op == "neg" and a.program.ops[a.k][0] == "neg":  # -(-x) is x
        return Value(a.program, a.program.ops[a.k][1][0])
    return a.program.node(op, (a.k,), _UNARY[op](_sample(a)))


class Value:
    """A number that depends on the inputs: node ``k`` of ``program``."""
    __slots__ = ("program", "k")

    def __init__(self, program, k):
        self.program, self.k = program, k

    def __add__(self, other): return binary("add", self, other)
    def __radd__(self, other): return binary("add", other, self)
    def __sub__(self, other): return binary("sub", self, other)
    def __rsub__(self, other): return binary("sub", other, self)
    def __mul__(self, other): return binary("mul", self, other)
    def __rmul__(self, other): return binary("mul", other, self)
    def __truediv__(self, other): return binary("div", self, other)
    def __rtruediv__(self, other): return binary("div", other, self)
    def __neg__(self): return unary("neg", self)
    def __abs__(self): return unary("abs", self)
    def __lt__(self, other): return binary("lt", self, other)
    def __le__(self, other): return binary("le", self, other)
    def __gt__(self, other): return binary("gt", self, other)
    def __ge__(self, other): return binary("ge", self, other)
    def __eq__(self, other): return binary("eq", self, other)
    def __ne__(self, other): return binary("ne", self, other)
    __hash__ = None

    def __bool__(self):
        """As a condition (a comparison's, or a number's own), the sample's side, which the program keeps as a
        guard."""
        side = bool(self.program.values[self.k])
        self.program.guards.append((self.k, side))
        return side

    def __float__(self):
        raise Untraceable("a traced number was converted to a float")

    def __index__(self):
        raise Untraceable("a traced number was used as an index")

    def __pow__(self, exponent):
        if exponent == 2:
            return self * self
        raise Untraceable(f"power {exponent!r}")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """numpy's scalars and functions on a traced number (``np.float64 * x``, ``np.sign(x)``)."""
        name = {"add": "add", "subtract": "sub", "multiply": "mul", "true_divide": "div", "divide": "div",
                "negative": "neg", "absolute": "abs", "fabs": "abs", "maximum": "max", "minimum": "min",
                "fmax": "max", "fmin": "min", "less": "lt", "less_equal": "le", "greater": "gt",
                "greater_equal": "ge"}.get(ufunc.__name__, ufunc.__name__)
        if method != "__call__" or kwargs:
            return NotImplemented
        if name in _UNARY and len(inputs) == 1:
            return unary(name, inputs[0])
        if name in _BINARY and len(inputs) == 2:
            return binary(name, *inputs)
        if name == "square":
            return inputs[0] * inputs[0]
        if name == "isfinite":
            return isfinite(inputs[0])
        return NotImplemented


def isfinite(x):
    """``math.isfinite``; true of a traced number: the written code checks the finiteness of its inputs and its
    results."""
    return np.True_ if type(x) is Value else math.isfinite(x)


#: The functions of ``math`` a kernel may call, made to accept traced numbers (while tracing they stand in for
#: ``math`` in the package's modules).
_MATH = types.SimpleNamespace(**{name: getattr(math, name) for name in dir(math) if not name.startswith("_")})
for _name in ("sin", "cos", "sqrt", "tanh", "exp", "log", "atan", "asin", "acos"):
    setattr(_MATH, _name, (lambda name: lambda x: unary(name, x))(_name))
_MATH.fabs, _MATH.isfinite = (lambda x: unary("abs", x)), isfinite

_clones = {}
_namespaces = {}
_LOCK = RLock()


def traceable(function):
    """``function`` (a kernel: its Python, where numba compiled it) as a copy whose globals see the traceable copies
    of the package's functions and :data:`_MATH` for ``math``: tracing runs the same code without changing any
    module, so a kernel numba compiles meanwhile in another thread sees the real ones. Also the Python of a kernel
    all the way down, for a Python caller that needs its answer now rather than after numba compiles it."""
    function = getattr(function, "py_func", function)
    with _LOCK:
        clone = _clones.get(function)
        if clone is None:
            clone = _clones[function] = types.FunctionType(function.__code__, _namespace(function.__globals__),
                                                           function.__name__, function.__defaults__,
                                                           function.__closure__)
    return clone


def _namespace(module_globals):
    namespace = _namespaces.get(id(module_globals))
    if namespace is None:
        namespace = _namespaces[id(module_globals)] = dict(module_globals)
        for name, value in module_globals.items():
            function = getattr(value, "py_func", value)
            if value is math:
                namespace[name] = _MATH
            elif isinstance(function, types.FunctionType) and function.__module__.startswith("rne_dynamics"):
                namespace[name] = traceable(function)
    return namespace


def trace(run, samples, limit=None):
    """The program of ``run(*inputs)``: ``samples`` gives each input's shape and sample numbers; ``run`` returns the
    flat sequence of outputs (numbers) and calls kernels through :func:`traceable`. Returns ``(program, outputs)``,
    each output a node index or a constant; :class:`Untraceable` past ``limit`` operations (default
    :data:`~rne_dynamics._tuning.MAX_NODES`)."""
    program = Program(limit or MAX_NODES)
    inputs = []  # an object array of the sample's shape for each input, whose elements read it
    for argument, sample in enumerate(samples):
        sample = np.asarray(sample, float)
        symbols = [program.node("input", (argument, e), x) for e, x in enumerate(sample.ravel().tolist())]
        inputs.append(np.array(symbols, object).reshape(sample.shape))
    with np.errstate(all="ignore"):
        outputs = run(*inputs)
    if any(x is None for x in outputs):
        raise Untraceable("an output was never written")
    return program, [_operand(x) for x in outputs]
