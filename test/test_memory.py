"""Memory declared as data (``rne_dynamics.model.memory``): the layout made from a declaration puts every array
where the sizes say, nested memories by name with sizes of their own, and refuses a declaration naming what the
model has not."""
import numpy as np
import pytest

from rne_dynamics import InverseDynamicsResult
from rne_dynamics._jit import Slot
from rne_dynamics.model.memory import memory
from rne_dynamics.algorithms.rnea import inverse_dynamics_memory
from rne_dynamics.model.buffers import ModelView

#: A model with only its sizes set (the layouts read nothing else).
GIVEN = dict(nb=4, nv=5, nq=6, nj=3, ncol=7, nl=2)
SIZES = ModelView(**GIVEN, **{f: None for f in ModelView._fields if f not in GIVEN})

inner = memory("inner", parameters=("n",), x=("n", 3), y=("nb + 1",))
outer = memory("outer", results=dict(tau=("nv",), J=(6, "nv")), scratch=(6,),
               full=inner.sized(n="nq"), empty=inner.sized(n=0, nb="0 if ncol != nv else nb"))


def test_offsets_and_shapes_follow_the_declaration_in_order():
    w, results, end = outer(None, SIZES)
    assert w.tau == Slot(0, (5,)) and w.J == Slot(5, (6, 5))
    assert results == 35
    assert w.scratch == Slot(35, (6,))
    assert w.full.x == Slot(41, (6, 3)) and w.full.y == Slot(59, (5,))
    # ncol != nv: the nested memory's nb is 0, so y has one row; n = 0: x is empty
    assert w.empty.x == Slot(64, (0, 3)) and w.empty.y == Slot(64, (1,))
    assert end == 65


def test_views_tile_the_block():
    _, _, end = outer(None, SIZES)
    block = np.arange(end, dtype=float)
    w, results, _ = outer(block, SIZES)
    views = [w.tau, w.J, w.scratch, w.full.x, w.full.y, w.empty.x, w.empty.y]
    assert all(np.shares_memory(v, block) or v.size == 0 for v in views)
    assert np.array_equal(np.concatenate([v.ravel() for v in views]), block)  # in order, no gap, no overlap
    assert w.full.x.shape == (6, 3) and w.J.shape == (6, 5)


def test_results_named_tuple_holds_the_results_alone():
    assert outer.results._fields == ("tau", "J")
    assert InverseDynamicsResult._fields == ("torques", "joint_wrenches", "base_wrench")
    assert issubclass(InverseDynamicsResult, inverse_dynamics_memory.results)


def test_a_memory_nested_among_the_results_is_written_but_is_no_field_of_them():
    """An algorithm's intermediates that a Data shows (inverse dynamics: RNEA's arrays): inside the end of the
    results, which every engine writes, but not a field of the result type."""
    shown = memory("shown", results=dict(tau=("nv",), rnea=inner.sized(n=2)), scratch=(6,))
    w, results, end = shown(None, SIZES)
    assert shown.results._fields == ("tau",)
    assert w.rnea.x == Slot(5, (2, 3)) and w.rnea.y == Slot(11, (5,))
    assert results == 16 and w.scratch == Slot(16, (6,)) and end == 22


@pytest.mark.parametrize("declare, message", [
    (lambda: memory("bad", a=("nbodies", 6)), r"a names \['nbodies'\], neither a model size"),
    (lambda: memory("bad", inner=inner), r"inner \(inner\) needs sizes for \['n'\]"),
    (lambda: memory("bad", inner=inner.sized(n=1, nx=2)), r"inner \(inner\) has no size \['nx'\]"),
    (lambda: memory("bad", a=6), "a must be a shape tuple or a memory, got 6"),
    (lambda: memory("bad", parameters=("n",), n=(3,)), "'n' names an argument of its layout"),
])
def test_a_bad_declaration_is_refused_naming_the_array(declare, message):
    with pytest.raises(TypeError, match=message):
        declare()
