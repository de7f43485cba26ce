"""Memory declared as data: an algorithm's arrays of one state by name and shape (results first), from which come the
size of its one flat block, the views of it a compiled kernel makes without allocation (the *layout*, written out
once per declaration and compiled into the algorithm's entry: :func:`rne_dynamics._jit.compiled_layout`), the views
of its results and the named tuple a public result type derives from."""
import ast
import copy
import linecache
import sys
from collections import namedtuple

import numpy as np

from .._jit import carve, compiled_layout


#: The model's sizes a memory declaration names (fields of :class:`~rne_dynamics.model.buffers.ModelView`).
SIZES = ("nb", "nv", "nq", "nj", "ncol", "nl", "nm")


def memory(name, results=None, parameters=(), **arrays):
    """The memory of an algorithm, declared as data: the named arrays of one state, ``results`` first (a dict, in
    order), then ``arrays`` (in order). A shape is a tuple of numbers and expressions of the model's sizes
    (:data:`SIZES`: ``"nb + 1"``, ``"0 if ncol != nv else nb"``) and of the declared ``parameters``; an array may
    also be another memory, nested by name (``rnea=rnea_workspace``), with sizes of its own given by
    ``.sized(nb="0", ...)`` (expressions of this memory's sizes).

    Returns the *layout*, ``layout(block, m, *parameters) -> (arrays, end_of_results, end)``: ``arrays`` a named
    tuple of views of the flat ``block`` (nested memories as named tuples of theirs), made without allocation in a
    compiled kernel; with ``block`` None (in Python) its arrays are :class:`Slot`, which measures the block. Its
    attribute ``results`` is the named tuple of the results alone (a public result type derives from it). Every
    engine writes all of ``block[:end_of_results]``: a memory nested among the results (an algorithm's
    intermediates that a ``Data`` shows) is written too, but is not a field of ``results``."""
    fields = [(field, _declared(field, spec, name)) for field, spec in [*(results or {}).items(), *arrays.items()]]
    declaration = _Declaration(name, fields, len(results or ()), tuple(parameters),
                               sys._getframe(1).f_globals.get("__name__", __name__))
    for field, spec in fields:
        declaration.check(field, spec)
    return declaration.layout()


class _Nested:
    """A memory nested in another, its sizes ``bindings`` (name: expression of the enclosing memory's sizes)."""

    def __init__(self, declaration, bindings):
        self.declaration, self.bindings = declaration, {k: _expression(v) for k, v in bindings.items()}


def _declared(field, spec, memory_name):
    """A field's declaration: a nested memory (a layout, or one :meth:`_Declaration.sized`), or a shape as a tuple
    of expressions."""
    if isinstance(spec, _Nested):
        return spec
    if hasattr(spec, "declaration"):
        return _Nested(spec.declaration, {})
    if not isinstance(spec, tuple):
        raise TypeError(f"memory {memory_name!r}: {field} must be a shape tuple or a memory, got {spec!r}")
    return tuple(_expression(n) for n in spec)


def _expression(n):
    """A size as an expression tree: a number, or the text of an expression of sizes."""
    if isinstance(n, int):
        return ast.Constant(n)
    return ast.parse(str(n), mode="eval").body


def _names(expression):
    return {node.id for node in ast.walk(expression) if isinstance(node, ast.Name)}


class _Declaration:
    """A declared memory: its name, its fields (a shape, or a :class:`_Nested`), how many are results, its
    parameters and its named tuples."""

    def __init__(self, name, fields, results, parameters, module):
        self.name, self.fields, self.results, self.parameters = name, fields, results, parameters
        title = "".join(part.title() for part in name.split("_"))
        self.type = namedtuple(title, [field for field, _ in fields], module=module)
        self.results_type = namedtuple(title + "Results", [field for field, spec in fields[:results]
                                                           if not isinstance(spec, _Nested)], module=module)
        self.results_type.__annotations__ = {field: np.ndarray for field in self.results_type._fields}  # (docs)
        self.results_type.__new__.__annotations__ = dict(self.results_type.__annotations__)
        self.module = module

    def check(self, field, spec):
        """Every name a field uses is a size of the model or a parameter; a nested memory's parameters are given."""
        known = set(SIZES) | set(self.parameters)
        if field in ("block", "m", "o", "results") + self.parameters:
            raise TypeError(f"memory {self.name!r}: {field!r} names an argument of its layout")
        if isinstance(spec, _Nested):
            inner = spec.declaration
            used = set().union(*(_names(e) for e in spec.bindings.values()))
            missing = set(inner.parameters) - set(spec.bindings)
            if missing:
                raise TypeError(f"memory {self.name!r}: {field} ({inner.name}) needs sizes for {sorted(missing)}")
            foreign = set(spec.bindings) - set(SIZES) - set(inner.parameters)
            if foreign:
                raise TypeError(f"memory {self.name!r}: {field} ({inner.name}) has no size {sorted(foreign)}")
        else:
            used = set().union(set(), *(_names(e) for e in spec))
        unknown = used - known
        if unknown:
            raise TypeError(f"memory {self.name!r}: {field} names {sorted(unknown)}, neither a model size "
                            f"{SIZES} nor a parameter {self.parameters}")

    def sized(self, **bindings):
        """This memory nested with its sizes ``bindings`` (expressions of the enclosing memory's sizes)."""
        return _Nested(self, bindings)

    def layout(self):
        """The layout function of the declaration (:func:`memory`), written out and compiled once."""
        lines, namespace = [], {"carve": carve, "__name__": self.module}
        made = self._source(lines, namespace, "", [])
        if self.results == 0:
            lines.insert(0, "    results = 0")
        source = (f"def {self.name}(block, m{''.join(', ' + p for p in self.parameters)}):\n    o = 0\n"
                  + "\n".join(lines) + f"\n    return {made}, results, o\n")
        filename = f"<memory {self.name}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)  # for tracebacks
        exec(compile(source, filename, "exec"), namespace)
        function = namespace[self.name]
        function.declaration, function.results, function.sized = self, self.results_type, self.sized
        return compiled_layout(function)

    def _source(self, lines, namespace, prefix, scopes):
        """Append the statements that carve this memory's arrays to ``lines``; return the expression that makes
        its named tuple. ``scopes``: the bindings of the enclosing memories, innermost first."""
        made = []
        for k, (field, spec) in enumerate(self.fields):
            local = prefix + field
            if isinstance(spec, _Nested):
                made.append(spec.declaration._source(lines, namespace, local + "__", [spec.bindings] + scopes))
            else:
                shape = ", ".join(ast.unparse(_resolved(e, scopes)) for e in spec) + ("," if len(spec) == 1 else "")
                lines.append(f"    {local}, o = carve(block, o, ({shape}))")
                made.append(local)
            if not prefix and k + 1 == self.results:
                lines.append("    results = o")
        type_name = f"_{self.name}_type"
        namespace[type_name] = self.type
        return f"{type_name}({', '.join(made)})"


def _resolved(expression, scopes):
    """``expression`` in terms of the outermost memory's arguments: each name replaced by its binding in the
    innermost scope that binds it, the model's sizes read from ``m``."""
    class Replace(ast.NodeTransformer):
        def visit_Name(self, node):
            for depth, bindings in enumerate(scopes):
                if node.id in bindings:
                    return _resolved(bindings[node.id], scopes[depth + 1:])
            if node.id in SIZES:
                return ast.Attribute(ast.Name("m", ast.Load()), node.id, ast.Load())
            return node  # a parameter of the outermost memory
    return Replace().visit(copy.deepcopy(expression))
