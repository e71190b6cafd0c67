/* Compiled domain-list kernel (thresher.quality.list_store): what the pure-Python compile of a large
 * domain list computes, in C.
 *
 *   - digest_lines(data) -> bytes | None: the 64-bit digests, native-endian, of the entries of a
 *     chunk of a UT1 `domains` file, one per line: each line lowercased, one leading "www." and the
 *     trailing dots removed, empty lines and `#` comments skipped; the digest is BLAKE2b with an
 *     8-byte output (RFC 7693), read as a big-endian integer, i.e. `DomainDigests.digest`. Only
 *     chunks of printable ASCII without spaces (bytes 0x21-0x7E and '\n') are taken: for any other
 *     byte it returns None and the caller runs the Python reference on that chunk (Unicode
 *     lowercasing, whitespace stripping and universal newlines stay Python's).
 *   - sort_unique(buffer) -> int: sorts a writable buffer of native 64-bit unsigned values in place,
 *     moves the distinct values to its front and returns how many there are (no extra memory).
 *
 * BLAKE2b is written from RFC 7693 (section 3 and appendix C); tests compare it with hashlib.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

static const uint64_t IV[8] = {
    0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL, 0x3c6ef372fe94f82bULL, 0xa54ff53a5f1d36f1ULL,
    0x510e527fade682d1ULL, 0x9b05688c2b3e6c1fULL, 0x1f83d9abfb41bd6bULL, 0x5be0cd19137e2179ULL,
};

static const uint8_t SIGMA[12][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
    {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4},
    {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
    {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13},
    {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
    {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11},
    {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
    {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5},
    {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
};

static inline uint64_t
rotr64(uint64_t x, int n)
{
    return (x >> n) | (x << (64 - n));
}

#define G(a, b, c, d, x, y)               \
    do {                                  \
        v[a] = v[a] + v[b] + (x);         \
        v[d] = rotr64(v[d] ^ v[a], 32);   \
        v[c] = v[c] + v[d];               \
        v[b] = rotr64(v[b] ^ v[c], 24);   \
        v[a] = v[a] + v[b] + (y);         \
        v[d] = rotr64(v[d] ^ v[a], 16);   \
        v[c] = v[c] + v[d];               \
        v[b] = rotr64(v[b] ^ v[c], 63);   \
    } while (0)

/* The compression function F on one 128-byte block (RFC 7693, 3.2). */
static void
compress(uint64_t h[8], const uint8_t block[128], uint64_t t, int last)
{
    uint64_t m[16], v[16];
    for (int i = 0; i < 16; i++) {
        const uint8_t *p = block + 8 * i;
        m[i] = (uint64_t)p[0] | ((uint64_t)p[1] << 8) | ((uint64_t)p[2] << 16) | ((uint64_t)p[3] << 24) |
               ((uint64_t)p[4] << 32) | ((uint64_t)p[5] << 40) | ((uint64_t)p[6] << 48) | ((uint64_t)p[7] << 56);
    }
    for (int i = 0; i < 8; i++) {
        v[i] = h[i];
        v[i + 8] = IV[i];
    }
    v[12] ^= t;  /* the byte counter's high word stays 0: a line is far below 2^64 bytes */
    if (last) {
        v[14] = ~v[14];
    }
    for (int r = 0; r < 12; r++) {
        const uint8_t *s = SIGMA[r];
        G(0, 4, 8, 12, m[s[0]], m[s[1]]);
        G(1, 5, 9, 13, m[s[2]], m[s[3]]);
        G(2, 6, 10, 14, m[s[4]], m[s[5]]);
        G(3, 7, 11, 15, m[s[6]], m[s[7]]);
        G(0, 5, 10, 15, m[s[8]], m[s[9]]);
        G(1, 6, 11, 12, m[s[10]], m[s[11]]);
        G(2, 7, 8, 13, m[s[12]], m[s[13]]);
        G(3, 4, 9, 14, m[s[14]], m[s[15]]);
    }
    for (int i = 0; i < 8; i++) {
        h[i] ^= v[i] ^ v[i + 8];
    }
}

/* BLAKE2b-64 of `len` bytes (unkeyed), as the big-endian integer of its 8 output bytes. */
static uint64_t
blake2b64(const uint8_t *data, size_t len)
{
    uint64_t h[8];
    uint8_t block[128];
    memcpy(h, IV, sizeof(h));
    h[0] ^= 0x01010000ULL ^ 8;  /* parameter block: fanout 1, depth 1, no key, 8-byte digest */
    uint64_t t = 0;
    while (len > 128) {
        t += 128;
        compress(h, data, t, 0);
        data += 128;
        len -= 128;
    }
    memset(block, 0, sizeof(block));
    memcpy(block, data, len);
    t += len;
    compress(h, block, t, 1);
    /* output bytes are h[0] little-endian; read big-endian that is h[0] byte-swapped */
    uint64_t x = h[0], out = 0;
    for (int i = 0; i < 8; i++) {
        out = (out << 8) | (x & 0xff);
        x >>= 8;
    }
    return out;
}

static PyObject *
digest_lines(PyObject *self, PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) {
        return NULL;
    }
    const uint8_t *data = view.buf;
    Py_ssize_t n = view.len, lines = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        uint8_t c = data[i];
        if (c == '\n') {
            lines++;
        } else if (c < 0x21 || c > 0x7e) {
            PyBuffer_Release(&view);
            Py_RETURN_NONE;
        }
    }
    uint64_t *out = PyMem_Malloc((size_t)lines * sizeof(uint64_t));
    uint8_t *line = PyMem_Malloc((size_t)(n > 0 ? n : 1));
    if (out == NULL || line == NULL) {
        PyMem_Free(out);
        PyMem_Free(line);
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    Py_ssize_t count = 0, start = 0;
    Py_BEGIN_ALLOW_THREADS
    while (start <= n) {
        Py_ssize_t end = start;
        while (end < n && data[end] != '\n') {
            end++;
        }
        Py_ssize_t len = end - start;
        if (len > 0 && data[start] != '#') {
            for (Py_ssize_t i = 0; i < len; i++) {
                uint8_t c = data[start + i];
                line[i] = (c >= 'A' && c <= 'Z') ? (uint8_t)(c + 32) : c;
            }
            const uint8_t *p = line;
            if (len >= 4 && memcmp(p, "www.", 4) == 0) {
                p += 4;
                len -= 4;
            }
            while (len > 0 && p[len - 1] == '.') {
                len--;
            }
            if (len > 0) {
                out[count++] = blake2b64(p, (size_t)len);
            }
        }
        start = end + 1;
    }
    Py_END_ALLOW_THREADS
    PyMem_Free(line);
    PyBuffer_Release(&view);
    PyObject *result = PyBytes_FromStringAndSize((const char *)out, count * (Py_ssize_t)sizeof(uint64_t));
    PyMem_Free(out);
    return result;
}

static void
sift_down(uint64_t *a, Py_ssize_t root, Py_ssize_t n)
{
    uint64_t x = a[root];
    for (;;) {
        Py_ssize_t child = 2 * root + 1;
        if (child >= n) {
            break;
        }
        if (child + 1 < n && a[child + 1] > a[child]) {
            child++;
        }
        if (a[child] <= x) {
            break;
        }
        a[root] = a[child];
        root = child;
    }
    a[root] = x;
}

static void
heap_sort(uint64_t *a, Py_ssize_t n)
{
    for (Py_ssize_t i = n / 2 - 1; i >= 0; i--) {
        sift_down(a, i, n);
    }
    for (Py_ssize_t i = n - 1; i > 0; i--) {
        uint64_t t = a[0];
        a[0] = a[i];
        a[i] = t;
        sift_down(a, 0, i);
    }
}

/* Introsort: quicksort (median of three), heap sort past a depth limit, insertion sort for runs of
 * up to 16. In place: the list's digests are sorted where they are. */
static void
intro_sort(uint64_t *a, Py_ssize_t n, int depth)
{
    while (n > 16) {
        if (depth-- == 0) {
            heap_sort(a, n);
            return;
        }
        uint64_t x = a[0], y = a[n / 2], z = a[n - 1];
        uint64_t pivot = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        Py_ssize_t i = 0, j = n - 1;
        for (;;) {
            while (a[i] < pivot) {
                i++;
            }
            while (a[j] > pivot) {
                j--;
            }
            if (i >= j) {
                break;
            }
            uint64_t t = a[i];
            a[i] = a[j];
            a[j] = t;
            i++;
            j--;
        }
        /* [0, j] <= pivot <= [j + 1, n): recurse into the smaller side, loop on the larger */
        Py_ssize_t left = j + 1;
        if (left < n - left) {
            intro_sort(a, left, depth);
            a += left;
            n -= left;
        } else {
            intro_sort(a + left, n - left, depth);
            n = left;
        }
    }
    for (Py_ssize_t i = 1; i < n; i++) {
        uint64_t x = a[i];
        Py_ssize_t k = i;
        while (k > 0 && a[k - 1] > x) {
            a[k] = a[k - 1];
            k--;
        }
        a[k] = x;
    }
}

static PyObject *
sort_unique(PyObject *self, PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_WRITABLE) < 0) {
        return NULL;
    }
    if (view.len % (Py_ssize_t)sizeof(uint64_t) != 0) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "buffer length is not a multiple of 8 bytes");
        return NULL;
    }
    uint64_t *a = view.buf;
    Py_ssize_t n = view.len / (Py_ssize_t)sizeof(uint64_t), kept = 0;
    Py_BEGIN_ALLOW_THREADS
    int depth = 0;
    for (Py_ssize_t m = n; m > 1; m >>= 1) {
        depth += 2;
    }
    intro_sort(a, n, depth);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (kept == 0 || a[i] != a[kept - 1]) {
            a[kept++] = a[i];
        }
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(kept);
}

static PyMethodDef methods[] = {
    {"digest_lines", digest_lines, METH_O,
     "digest_lines(data) -> bytes | None: native 64-bit digests of a domains chunk's entries (None: not plain ASCII)."},
    {"sort_unique", sort_unique, METH_O,
     "sort_unique(buffer) -> int: sort native uint64 values in place, distinct ones first; their count."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_domainlist", "Compiled domain-list kernel: digests and an in-place sort, in C.", -1, methods,
};

PyMODINIT_FUNC
PyInit__domainlist(void)
{
    return PyModule_Create(&module);
}
