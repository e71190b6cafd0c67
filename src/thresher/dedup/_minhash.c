/* Compiled MinHash kernel (thresher.dedup.kernels): the pure-Python kernel's result, in C.
 *
 * One call takes a document's token values and a configuration's constants and returns what
 * `kernels.minhash_pure` computes before densification:
 *   - the shingle hashes h = (offset + sum_j m_j * t_{i+j}) mod 2^64 of every window of k tokens,
 *   - the distinct shingle ids (h >> 32), sorted, of which the first `sample_size` are the sample
 *     (complete when there are no more than that),
 *   - k_permutation: for each (a, b), min over the distinct ids x of ((a * x + b) mod 2^64) >> 32;
 *     one_permutation: for each bin (the top `bin_bits` bits of h) the 32 bits below them of its
 *     smallest h, -1 for an empty bin (the caller densifies, as the pure kernel does).
 * Unsigned 64-bit arithmetic wraps modulo 2^64 in C, which is what the reference's `& MASK64`
 * does, so every value is the same integer. Memory: a few arrays of the document's shingle count.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

/* The constants of a tuple of Python ints, each reduced modulo 2^64 (the reference's `& MASK64`
 * semantics for any int). Returns a PyMem buffer (NULL with an exception set). */
static uint64_t *
u64_array(PyObject *seq, Py_ssize_t *count)
{
    PyObject *fast = PySequence_Fast(seq, "expected a sequence of ints");
    if (fast == NULL) {
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    uint64_t *out = PyMem_Malloc((size_t)(n > 0 ? n : 1) * sizeof(uint64_t));
    if (out == NULL) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        return NULL;
    }
    PyObject **items = PySequence_Fast_ITEMS(fast);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!PyLong_Check(items[i])) {
            PyErr_SetString(PyExc_TypeError, "token values and constants must be ints");
            PyMem_Free(out);
            Py_DECREF(fast);
            return NULL;
        }
        out[i] = (uint64_t)PyLong_AsUnsignedLongLongMask(items[i]);
        if (out[i] == (uint64_t)-1 && PyErr_Occurred()) {
            PyMem_Free(out);
            Py_DECREF(fast);
            return NULL;
        }
    }
    Py_DECREF(fast);
    *count = n;
    return out;
}

/* Sorted distinct shingle ids of `hashes` into `ids` (`scratch`: n more), by a least-significant-
 * digit radix sort on bytes (linear; a comparison sort through qsort's callback cost as much as the
 * rest of the kernel). Returns how many distinct ids. */
static Py_ssize_t
distinct_ids(const uint64_t *hashes, Py_ssize_t n, uint32_t *ids, uint32_t *scratch)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        ids[i] = (uint32_t)(hashes[i] >> 32);
    }
    uint32_t *from = ids, *to = scratch;
    for (int digit = 0; digit < 4; digit++) {
        int shift = 8 * digit;
        Py_ssize_t counts[257] = {0};
        for (Py_ssize_t i = 0; i < n; i++) {
            counts[((from[i] >> shift) & 0xFF) + 1]++;
        }
        for (int b = 0; b < 256; b++) {
            counts[b + 1] += counts[b];
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            to[counts[(from[i] >> shift) & 0xFF]++] = from[i];
        }
        uint32_t *swap = from;
        from = to;
        to = swap;
    }
    /* four passes: the sorted ids are back in `ids` */
    Py_ssize_t distinct = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (distinct == 0 || ids[i] != ids[distinct - 1]) {
            ids[distinct++] = ids[i];
        }
    }
    return distinct;
}

static PyObject *
list_of_u32(const uint32_t *values, Py_ssize_t n)
{
    PyObject *list = PyList_New(n);
    if (list == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = PyLong_FromUnsignedLong(values[i]);
        if (v == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, v);
    }
    return list;
}

/* minhash(tokens, window, offset, k_permutation, bin_bits, perm_a, perm_b, sample_size)
 *   -> (values, sample, complete) or None when there are fewer tokens than a shingle. */
static PyObject *
minhash(PyObject *self, PyObject *args)
{
    PyObject *tokens_obj, *window_obj, *offset_obj, *perm_a_obj, *perm_b_obj;
    int k_permutation, bin_bits;
    Py_ssize_t sample_size;
    if (!PyArg_ParseTuple(args, "OOOpiOOn", &tokens_obj, &window_obj, &offset_obj, &k_permutation, &bin_bits,
                          &perm_a_obj, &perm_b_obj, &sample_size)) {
        return NULL;
    }
    if (!PyLong_Check(offset_obj)) {
        PyErr_SetString(PyExc_TypeError, "offset must be an int");
        return NULL;
    }
    if (bin_bits < 0 || bin_bits > 24) {
        PyErr_SetString(PyExc_ValueError, "bin_bits must be in 0..24");
        return NULL;
    }
    uint64_t offset = (uint64_t)PyLong_AsUnsignedLongLongMask(offset_obj);
    if (offset == (uint64_t)-1 && PyErr_Occurred()) {
        return NULL;
    }
    PyObject *result = NULL, *values = NULL, *sample = NULL;
    uint64_t *tokens = NULL, *window = NULL, *hashes = NULL, *perm_a = NULL, *perm_b = NULL, *best = NULL;
    uint32_t *ids = NULL;
    Py_ssize_t n_tokens = 0, k = 0, n_a = 0, n_b = 0;

    tokens = u64_array(tokens_obj, &n_tokens);
    if (tokens == NULL) {
        goto done;
    }
    window = u64_array(window_obj, &k);
    if (window == NULL) {
        goto done;
    }
    if (k < 1) {
        PyErr_SetString(PyExc_ValueError, "the shingle window must not be empty");
        goto done;
    }
    Py_ssize_t n = n_tokens - k + 1;
    if (n <= 0) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    hashes = PyMem_Malloc((size_t)n * sizeof(uint64_t));
    if (hashes == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        uint64_t h = offset;
        for (Py_ssize_t j = 0; j < k; j++) {
            h += window[j] * tokens[i + j];
        }
        hashes[i] = h;
    }

    Py_ssize_t distinct = 0;
    int complete = 0;
    if (sample_size > 0 || k_permutation) {
        ids = PyMem_Malloc(2 * (size_t)n * sizeof(uint32_t));
        if (ids == NULL) {
            PyErr_NoMemory();
            goto done;
        }
        distinct = distinct_ids(hashes, n, ids, ids + n);
    }
    if (sample_size > 0) {
        complete = distinct <= sample_size;
        sample = list_of_u32(ids, complete ? distinct : sample_size);
    }
    else {
        sample = PyList_New(0);
    }
    if (sample == NULL) {
        goto done;
    }

    if (k_permutation) {
        perm_a = u64_array(perm_a_obj, &n_a);
        if (perm_a == NULL) {
            goto done;
        }
        perm_b = u64_array(perm_b_obj, &n_b);
        if (perm_b == NULL) {
            goto done;
        }
        if (n_a != n_b) {
            PyErr_SetString(PyExc_ValueError, "perm_a and perm_b differ in length");
            goto done;
        }
        values = PyList_New(n_a);
        if (values == NULL) {
            goto done;
        }
        for (Py_ssize_t i = 0; i < n_a; i++) {
            uint64_t a = perm_a[i], b = perm_b[i];
            uint64_t low = UINT64_MAX;
            for (Py_ssize_t x = 0; x < distinct; x++) {
                uint64_t g = a * (uint64_t)ids[x] + b;
                if (g < low) {
                    low = g;
                }
            }
            PyObject *v = PyLong_FromUnsignedLongLong(low >> 32);
            if (v == NULL) {
                goto done;
            }
            PyList_SET_ITEM(values, i, v);
        }
    }
    else {
        Py_ssize_t bins = (Py_ssize_t)1 << bin_bits;
        int shift = 64 - bin_bits; /* 64 when there is one bin: every hash falls in bin 0 */
        int value_shift = shift - 32;
        best = PyMem_Malloc((size_t)bins * sizeof(uint64_t));
        char *filled = PyMem_Calloc((size_t)bins, 1);
        if (best == NULL || filled == NULL) {
            PyMem_Free(filled);
            PyErr_NoMemory();
            goto done;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            uint64_t h = hashes[i];
            Py_ssize_t bin = shift >= 64 ? 0 : (Py_ssize_t)(h >> shift);
            if (!filled[bin] || h < best[bin]) {
                best[bin] = h;
                filled[bin] = 1;
            }
        }
        values = PyList_New(bins);
        if (values == NULL) {
            PyMem_Free(filled);
            goto done;
        }
        for (Py_ssize_t bin = 0; bin < bins; bin++) {
            PyObject *v = filled[bin] ? PyLong_FromUnsignedLongLong((best[bin] >> value_shift) & 0xFFFFFFFFULL)
                                      : PyLong_FromLong(-1);
            if (v == NULL) {
                PyMem_Free(filled);
                goto done;
            }
            PyList_SET_ITEM(values, bin, v);
        }
        PyMem_Free(filled);
    }
    result = Py_BuildValue("(OOO)", values, sample, complete ? Py_True : Py_False);

done:
    Py_XDECREF(values);
    Py_XDECREF(sample);
    PyMem_Free(tokens);
    PyMem_Free(window);
    PyMem_Free(hashes);
    PyMem_Free(ids);
    PyMem_Free(perm_a);
    PyMem_Free(perm_b);
    PyMem_Free(best);
    return result;
}

static PyMethodDef methods[] = {
    {"minhash", minhash, METH_VARARGS,
     "minhash(tokens, window, offset, k_permutation, bin_bits, perm_a, perm_b, sample_size) -> "
     "(values, sample, complete) | None: kernels.minhash_pure before densification."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_minhash", "Compiled MinHash kernel: the pure kernel's values, in C.", -1, methods,
};

PyMODINIT_FUNC
PyInit__minhash(void)
{
    return PyModule_Create(&module);
}
