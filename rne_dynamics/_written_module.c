/* The fixed part of a robot's written code as a Python extension module (rne_dynamics/_native.py, c_source).

   _native.c_source writes, before this file's text, the program's sizes and tables as macros:
     MODULE_NAME, INIT_FUNCTION   the module's name (a string) and its PyInit_ function
     INPUTS, OUTPUTS        the numbers of input arrays and of output numbers
     SIZES                  the size of each input, comma separated
     QUATERNIONS            the first index in input 0 of each unit quaternion, then -1
     IS_UNIT(u)             whether the quaternion u[0..3] has unit norm (the trace of _jit.is_unit)
     SLOTS, SLOT_TABLE      the result's arrays in the outputs (for fresh), then a last entry
     TEMPORARIES, LANES, LANE_TEMPORARIES          the scratch of one state, of a vector of LANES states
     PARAMETERS, LANES_PARAMETERS, INPUT_ROWS(x)   the parameters of compute and lanes_compute, and x's rows
     STATUS_OK, STATUS_BAD_SHAPE, STATUS_NOT_FINITE, STATUS_NOT_UNIT, STATUS_OVERFLOW   the status codes (_jit.py)
   and after it the program: compute (one state) and lanes_compute (LANES states at once). */
#define PY_SSIZE_T_CLEAN
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <Python.h>  /* (and <stdlib.h>, <string.h>: the headers the C API documents that it includes) */
#include <math.h>
#include <stdint.h>
#include <numpy/arrayobject.h>
#ifdef __AVX__
#include <immintrin.h>
#endif

static const Py_ssize_t sizes[INPUTS] = {SIZES};
static const int quaternions[] = {QUATERNIONS};
static const struct {Py_ssize_t offset; int ndim; npy_intp dims[4];} slots[SLOTS + 1] = {SLOT_TABLE};
typedef double vec __attribute__((vector_size(LANES * sizeof(double))));
static unsigned long long served_states;  /* states computed (status OK): rd.engine_report() reads them */

/* the program (after this file's text) */
static int compute(PARAMETERS);
static int lanes_compute(LANES_PARAMETERS);

/* a float64 C-contiguous array of n elements (a multiple of n, if many); its data, or NULL */
static double *array_of(PyObject *o, Py_ssize_t n, int many, Py_ssize_t *count, int writable)
{
    if (!PyArray_Check(o)) return NULL;
    PyArrayObject *a = (PyArrayObject *)o;
    if (PyArray_TYPE(a) != NPY_DOUBLE || !PyArray_IS_C_CONTIGUOUS(a) || (writable && !PyArray_ISWRITEABLE(a)))
        return NULL;
    Py_ssize_t size = PyArray_SIZE(a);
    if (many ? (n == 0 || size % n != 0) : size < n) return NULL;
    *count = n ? size / n : 0;
    return (double *)PyArray_DATA(a);
}

/* whether all n numbers are finite: no branch per number (an inf or a NaN has every exponent bit set), so that
   the compiler makes it a few vector instructions */
__attribute__((optimize("tree-vectorize")))
static int all_finite(const double *x, Py_ssize_t n)
{
    uint64_t bad = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        uint64_t bits;
        memcpy(&bits, x + i, sizeof bits);
        bad |= ((bits & 0x7ff0000000000000u) + 0x0010000000000000u) & 0x8000000000000000u;
    }
#ifdef __AVX__
    /* the wide registers cleared: left dirty (gcc's -march=native code did not clear them on this AMD CPU), they
       slowed the interpreter's code after the call by a third (a Python loop of Pinocchio's rnea after a batch:
       3.05 against 2.37 us a call). Every entry's last step is this check of its outputs, after the vector lanes */
    _mm256_zeroupper();
#endif
    return bad == 0;
}

/* whether the quaternions of configuration q have unit norm */
static int unit_quaternions(const double *q)
{
    for (int k = 0; quaternions[k] >= 0; k++) {
        const double *u = q + quaternions[k];
        if (!IS_UNIT(u)) return 0;
    }
    return 1;
}

/* one state's outputs (their finiteness is the caller's to check); its inputs' finiteness too unless known; T:
   TEMPORARIES numbers */
static int state(double *const *x, double *out, int inputs_finite, double *T)
{
    for (int k = 0; k < INPUTS && !inputs_finite; k++)
        if (!all_finite(x[k], sizes[k])) return STATUS_NOT_FINITE;
    if (!unit_quaternions(x[0])) return STATUS_NOT_UNIT;
    return compute(INPUT_ROWS(x), T, out);
}

/* the LANES states from row n of the inputs at base (a row every step[k] numbers; finite), at once, into their rows
   of out; any status but OK leaves them to be run one by one. T: LANE_TEMPORARIES vectors */
static int lanes_state(double *const *base, const Py_ssize_t *step, Py_ssize_t n, double *out, vec *T)
{
    const double *x[INPUTS + 1][LANES];
    double *rows[LANES];
    for (int s = 0; s < LANES; s++) {
        if (!unit_quaternions(base[0] + (n + s) * step[0])) return STATUS_NOT_UNIT;
        for (int k = 0; k < INPUTS; k++) x[k][s] = base[k] + (n + s) * step[k];
        rows[s] = out + (n + s) * OUTPUTS;
    }
    return lanes_compute(INPUT_ROWS(x), T, rows);
}

/* the status of the one state of args[1..INPUTS] (each float64, C order, of its size), its outputs into out and
   checked */
static int checked_state(PyObject *const *args, Py_ssize_t nargs, double *out)
{
    Py_ssize_t count;
    double *x[INPUTS + 1];
    if (nargs != INPUTS + 1) return STATUS_BAD_SHAPE;
    for (int k = 0; k < INPUTS; k++) {
        x[k] = array_of(args[k + 1], sizes[k], 1, &count, 0);
        if (!x[k] || count != 1 || PyArray_NDIM((PyArrayObject *)args[k + 1]) != 1) return STATUS_BAD_SHAPE;
    }
    double *T = malloc(TEMPORARIES * sizeof(double));
    if (!T) return STATUS_OVERFLOW;
    int status = state(x, out, 0, T);
    free(T);
    return status == STATUS_OK && !all_finite(out, OUTPUTS) ? STATUS_OVERFLOW : status;
}

static PyObject *single(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_ssize_t count;
    double *out = nargs == INPUTS + 1 ? array_of(args[0], OUTPUTS, 0, &count, 1) : NULL;
    int status = out ? checked_state(args, nargs, out) : STATUS_BAD_SHAPE;
    served_states += status == STATUS_OK;
    return PyLong_FromLong(status);
}

/* one state into a new block; the result: its first view (kind None) or every view in a tuple of type kind */
static PyObject *fresh(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    npy_intp length = OUTPUTS;
    PyObject *block = PyArray_SimpleNew(1, &length, NPY_DOUBLE), *result = NULL, *view = NULL;
    if (!block) return NULL;
    double *data = (double *)PyArray_DATA((PyArrayObject *)block);
    int status = checked_state(args, nargs, data);
    if (status != STATUS_OK) {
        Py_DECREF(block);
        return PyLong_FromLong(status);
    }
    served_states++;
    if (args[0] != Py_None) {
        PyTypeObject *kind = (PyTypeObject *)args[0];
        result = kind == &PyTuple_Type ? PyTuple_New(SLOTS) : kind->tp_alloc(kind, SLOTS);
        if (!result) goto fail;
    }
    for (int s = 0; s < (result ? SLOTS : 1); s++) {
        view = PyArray_New(&PyArray_Type, slots[s].ndim, (npy_intp *)slots[s].dims, NPY_DOUBLE, NULL,
                           data + slots[s].offset, 0, NPY_ARRAY_CARRAY, NULL);
        if (!view) goto fail;
        Py_INCREF(block);
        PyArray_SetBaseObject((PyArrayObject *)view, block);
        if (result) PyTuple_SET_ITEM(result, s, view);
    }
    Py_DECREF(block);
    return result ? result : view;
fail:
    Py_XDECREF(result);
    Py_DECREF(block);
    return NULL;
}

static PyObject *batch(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_ssize_t N, count, step[INPUTS];
    double *base[INPUTS], *x[INPUTS + 1];
    double *out = nargs == INPUTS + 1 ? array_of(args[0], OUTPUTS, 1, &N, 1) : NULL;
    if (!out) return Py_BuildValue("(ii)", STATUS_BAD_SHAPE, 0);
    for (int k = 0; k < INPUTS; k++) {
        base[k] = array_of(args[k + 1], sizes[k], 1, &count, 0);
        if (!base[k] || (count != 1 && count != N)) return Py_BuildValue("(ii)", STATUS_BAD_SHAPE, 0);
        step[k] = count == 1 ? 0 : sizes[k];
    }
    int status = STATUS_OK, inputs_finite = 1;
    Py_ssize_t n = 0;
    Py_BEGIN_ALLOW_THREADS
    double *T = malloc(TEMPORARIES * sizeof(double));
    vec *lane_T = N >= LANES ? aligned_alloc(sizeof(vec), LANE_TEMPORARIES * sizeof(vec)) : NULL;
    /* finiteness over all states at once (a state at a time only if something is not finite) */
    for (int k = 0; k < INPUTS; k++)
        inputs_finite = inputs_finite && all_finite(base[k], (step[k] ? N : 1) * sizes[k]);
    for (; T && lane_T && inputs_finite && n + LANES <= N; n += LANES)
        if (lanes_state(base, step, n, out, lane_T) != STATUS_OK) break;  /* these states again, one by one */
    for (; T && n < N; n++) {
        for (int k = 0; k < INPUTS; k++) x[k] = base[k] + n * step[k];
        status = state(x, out + n * OUTPUTS, inputs_finite, T);
        if (status != STATUS_OK) break;
    }
    if (!T)
        status = STATUS_OVERFLOW;
    else if (!all_finite(out, n * OUTPUTS)) {  /* the first state that overflowed, before any other fault */
        status = STATUS_OVERFLOW;
        for (n = 0; all_finite(out + n * OUTPUTS, OUTPUTS); n++) ;
    }
    free(T);
    free(lane_T);
    Py_END_ALLOW_THREADS
    if (status == STATUS_OK) served_states += N;  /* (the interpreter's lock held: a batch's threads add in turn) */
    return Py_BuildValue("(in)", status, status == STATUS_OK ? (Py_ssize_t)0 : n);
}

static PyObject *served(PyObject *self, PyObject *unused)
{
    return PyLong_FromUnsignedLongLong(served_states);
}

static PyMethodDef methods[] = {
    {"served", served, METH_NOARGS, "the states computed so far"},
    {"single", (PyCFunction)(void (*)(void))single, METH_FASTCALL, "one state"},
    {"batch", (PyCFunction)(void (*)(void))batch, METH_FASTCALL, "a batch of states"},
    {"fresh", (PyCFunction)(void (*)(void))fresh, METH_FASTCALL, "one state into a new array"},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, MODULE_NAME, NULL, -1, methods};

PyMODINIT_FUNC INIT_FUNCTION(void)
{
    import_array();
    return PyModule_Create(&module);
}
