/* Compiled kernel for the Gopher n-gram repetition measures (thresher.quality.repetition).
 *
 * One call takes a document's tokens and computes, for every n from 2 to a given maximum, what the
 * pure-Python reference (repeat_groups, top_ngram_chars, duplicate_ngram_chars) derives from the
 * n-gram groups:
 *   - the count of the most frequent n-gram (1 when no n-gram repeats),
 *   - the token characters of that n-gram at its first occurrence (the earliest wins a tie),
 *   - the token characters inside repeated n-grams, scanning left to right and jumping past each
 *     repeat.
 * Separators and the minimum count are applied by the caller, so the measured numbers are the same
 * integers the reference computes, hence the same floats.
 *
 * How: tokens are interned to small integer ids (equal strings, equal ids). Level n names each
 * n-gram by the position of its first occurrence; level n + 1 refines only the positions whose
 * n-gram repeats, keyed by (their n-gram's name, the next token id), in an open-addressing table.
 * A position whose n-gram is unique starts only unique longer n-grams and is never looked at again,
 * so the work shrinks with the repetition. Memory is linear in the token count; no recursion.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define FIRST_LEVEL 2            /* the shortest n-gram measured */
#define MAX_TOKENS (INT32_MAX / 4) /* positions and ids are int32; tables hold up to 4x the tokens */
#define FIBONACCI_MULTIPLIER 0x9E3779B97F4A7C15ULL /* 2^64 / golden ratio: spreads keys over a table */

/* A power of two at least twice `used` (at least 2): tables stay at most half full. */
static size_t
table_size(size_t used)
{
    size_t size = 2;
    while (size < 2 * used) {
        size <<= 1;
    }
    return size;
}

static unsigned
log2_of(size_t power_of_two)
{
    unsigned bits = 0;
    while (((size_t)1 << bits) < power_of_two) {
        bits++;
    }
    return bits;
}

/* ---- token interning: equal strings get equal ids, numbered in order of first occurrence ---- */

#define WORD_BYTES 8 /* the hash reads a token's code units eight bytes at a time */
#define MIX_MULTIPLIER 0xFF51AFD7ED558CCDULL /* MurmurHash3's finalizer constant */
#define MIX_SHIFT 33

typedef struct {
    uint32_t hash;  /* high bits of the token's hash: most unequal tokens differ here */
    int32_t index;  /* position of the token's first occurrence plus 1; 0 marks an empty slot */
} TokenSlot;

/* A hash of an exact str's code units. Equal str objects have the same kind (the narrowest that
 * holds their code points) and the same units, so equal tokens hash equal. Not str's own hash:
 * fresh tokens have none cached, and SipHash costs several times this on short words. */
static uint64_t
text_hash(PyObject *text)
{
    const unsigned char *data = PyUnicode_DATA(text);
    size_t size = (size_t)PyUnicode_GET_LENGTH(text) * PyUnicode_KIND(text);
    uint64_t hash = size * FIBONACCI_MULTIPLIER;
    uint64_t word;
    for (; size >= WORD_BYTES; data += WORD_BYTES, size -= WORD_BYTES) {
        memcpy(&word, data, WORD_BYTES);
        hash = (hash ^ word) * MIX_MULTIPLIER;
        hash ^= hash >> MIX_SHIFT;
    }
    if (size > 0) {
        /* the last 1..7 bytes in registers (a byte-wise copy to memory stalls the load after it):
         * two overlapping 4-byte reads, or the first, middle and last byte */
        uint32_t low, high;
        if (size >= 4) {
            memcpy(&low, data, 4);
            memcpy(&high, data + size - 4, 4);
            word = ((uint64_t)high << 32) | low;
        }
        else {
            word = ((uint64_t)data[0] << 16) | ((uint64_t)data[size >> 1] << 8) | data[size - 1];
        }
        hash = (hash ^ word) * MIX_MULTIPLIER;
        hash ^= hash >> MIX_SHIFT;
    }
    return hash * FIBONACCI_MULTIPLIER; /* the table takes the high bits */
}

/* Equality of two exact str objects, as str.__eq__ decides it (same length, kind and code units). */
static int
same_text(PyObject *a, PyObject *b)
{
    if (a == b) {
        return 1;
    }
    Py_ssize_t length = PyUnicode_GET_LENGTH(a);
    if (length != PyUnicode_GET_LENGTH(b) || PyUnicode_KIND(a) != PyUnicode_KIND(b)) {
        return 0;
    }
    return memcmp(PyUnicode_DATA(a), PyUnicode_DATA(b), (size_t)length * PyUnicode_KIND(a)) == 0;
}

/* Fills ids[0..n), counts[id] (occurrences of each id) and prefix[0..n] (characters before each
 * token). Returns 0, or -1 with an exception set. */
static int
intern_tokens(PyObject *tokens, Py_ssize_t n, int32_t *ids, int32_t *counts, int64_t *prefix)
{
    size_t size = table_size((size_t)n);
    size_t mask = size - 1;
    unsigned shift = 64 - log2_of(size);
    TokenSlot *table = PyMem_Calloc(size, sizeof(TokenSlot));
    if (table == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    int32_t distinct = 0;
    prefix[0] = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *token = PyList_GET_ITEM(tokens, i);
        if (!PyUnicode_CheckExact(token)) {
            PyErr_Format(PyExc_TypeError, "tokens must be str, not %.100s", Py_TYPE(token)->tp_name);
            PyMem_Free(table);
            return -1;
        }
#if PY_VERSION_HEX < 0x030C0000
        if (PyUnicode_READY(token) < 0) { /* legacy strings only; a no-op from 3.12 on */
            PyMem_Free(table);
            return -1;
        }
#endif
        uint64_t hash = text_hash(token);
        uint32_t tag = (uint32_t)(hash >> 32);
        size_t slot = (size_t)(hash >> shift);
        while (table[slot].index != 0
               && !(table[slot].hash == tag
                    && same_text(PyList_GET_ITEM(tokens, table[slot].index - 1), token))) {
            slot = (slot + 1) & mask;
        }
        int32_t id;
        if (table[slot].index == 0) {
            table[slot].hash = tag;
            table[slot].index = (int32_t)i + 1;
            id = distinct++;
            counts[id] = 0;
        }
        else {
            id = ids[table[slot].index - 1]; /* the id given at the first occurrence */
        }
        ids[i] = id;
        counts[id]++;
        prefix[i + 1] = prefix[i] + PyUnicode_GET_LENGTH(token);
    }
    PyMem_Free(table);
    return 0;
}

/* ---- n-gram levels ---- */

typedef struct {
    uint64_t key;  /* (name of the (n-1)-gram, id of the next token) */
    int32_t first; /* position of the first occurrence: the n-gram's name */
    int32_t count; /* 0 marks an empty slot */
} GramSlot;

typedef struct {
    int64_t *top_count; /* per n: occurrences of the most frequent n-gram */
    int64_t *top_chars; /* per n: its token characters */
    int64_t *duplicate_chars; /* per n: characters in repeated n-grams (left-to-right scan) */
} LevelResults;

/* Levels FIRST_LEVEL..last, for last <= n tokens. Returns 0, or -1 with MemoryError set. */
static int
measure_levels(const int32_t *ids, const int32_t *counts, const int64_t *prefix, Py_ssize_t n,
               Py_ssize_t last, LevelResults *out)
{
    int32_t *name = PyMem_Malloc((size_t)n * sizeof(int32_t));     /* name of the gram at a position */
    int32_t *positions = PyMem_Malloc((size_t)n * sizeof(int32_t)); /* the candidates, ascending */
    int32_t *slot_of = PyMem_Malloc((size_t)n * sizeof(int32_t));   /* each candidate's table slot */
    int32_t *seen_at = PyMem_Calloc((size_t)n, sizeof(int32_t));   /* level a name was last seen at */
    GramSlot *table = PyMem_Malloc(table_size((size_t)n) * sizeof(GramSlot));
    if (name == NULL || positions == NULL || slot_of == NULL || seen_at == NULL || table == NULL) {
        PyMem_Free(name);
        PyMem_Free(positions);
        PyMem_Free(slot_of);
        PyMem_Free(seen_at);
        PyMem_Free(table);
        PyErr_NoMemory();
        return -1;
    }
    /* level 1: a token's name is its id; a 2-gram can repeat only where both of its tokens do */
    Py_ssize_t candidates = 0;
    for (Py_ssize_t p = 0; p + 1 < n; p++) {
        name[p] = ids[p];
        if (counts[ids[p]] > 1 && counts[ids[p + 1]] > 1) {
            positions[candidates++] = (int32_t)p;
        }
    }
    Py_ssize_t level = FIRST_LEVEL;
    for (; level <= last && candidates > 1; level++) {
        size_t size = table_size((size_t)candidates);
        size_t mask = size - 1;
        unsigned shift = 64 - log2_of(size);
        memset(table, 0, size * sizeof(GramSlot));
        Py_ssize_t offset = level - 1; /* the token that extends an (n-1)-gram to this level */
        for (Py_ssize_t i = 0; i < candidates; i++) {
            int32_t p = positions[i];
            uint64_t key = ((uint64_t)(uint32_t)name[p] << 32) | (uint32_t)ids[p + offset];
            size_t slot = (size_t)((key * FIBONACCI_MULTIPLIER) >> shift);
            while (table[slot].count != 0 && table[slot].key != key) {
                slot = (slot + 1) & mask;
            }
            if (table[slot].count == 0) {
                table[slot].key = key;
                table[slot].first = p;
            }
            table[slot].count++;
            slot_of[i] = (int32_t)slot;
        }
        /* keep the positions whose n-gram repeats (in place: the kept index never passes the read
         * one); positions ascend, so a name is met first at its first occurrence, and a strictly
         * larger count is what displaces the best: the earliest n-gram wins a tie */
        Py_ssize_t repeated = 0;
        int32_t best_count = 0, best_at = 0;
        for (Py_ssize_t i = 0; i < candidates; i++) {
            const GramSlot *gram = &table[slot_of[i]];
            if (gram->count > 1) {
                int32_t p = positions[i];
                name[p] = gram->first;
                positions[repeated++] = p;
                if (gram->count > best_count) {
                    best_count = gram->count;
                    best_at = gram->first;
                }
            }
        }
        if (repeated == 0) {
            break;
        }
        /* the reference scan visits every position not jumped over; a unique n-gram there is never
         * a repeat, so only repeated positions need visiting, in order, skipping jumped ones */
        int64_t duplicate = 0;
        Py_ssize_t frontier = 0;
        for (Py_ssize_t i = 0; i < repeated; i++) {
            int32_t p = positions[i];
            if (p < frontier) {
                continue;
            }
            int32_t gram = name[p];
            if (seen_at[gram] == level) {
                duplicate += prefix[p + level] - prefix[p];
                frontier = p + level;
            }
            else {
                seen_at[gram] = (int32_t)level;
            }
        }
        out->top_count[level] = best_count;
        out->top_chars[level] = prefix[best_at + level] - prefix[best_at];
        out->duplicate_chars[level] = duplicate;
        /* the next level extends each n-gram by one token: it needs one more after it */
        candidates = 0;
        for (Py_ssize_t i = 0; i < repeated; i++) {
            if (positions[i] + level < n) {
                positions[candidates++] = positions[i];
            }
        }
    }
    /* no n-gram repeats from here on: every n-gram occurs once, the first one is the "top" */
    for (; level <= last; level++) {
        out->top_count[level] = 1;
        out->top_chars[level] = prefix[level];
        out->duplicate_chars[level] = 0;
    }
    PyMem_Free(name);
    PyMem_Free(positions);
    PyMem_Free(slot_of);
    PyMem_Free(seen_at);
    PyMem_Free(table);
    return 0;
}

static PyObject *
list_of(const int64_t *values, Py_ssize_t length)
{
    PyObject *list = PyList_New(length);
    if (list == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < length; i++) {
        PyObject *value = PyLong_FromLongLong(values[i]);
        if (value == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, value);
    }
    return list;
}

PyDoc_STRVAR(ngram_levels_doc,
"ngram_levels(tokens, max_n, /) -> (top_counts, top_chars, duplicate_chars)\n\n"
"For a list of str tokens, three lists indexed by n (entries below 2 are 0), for n up to\n"
"min(max_n, len(tokens)): the count of the most frequent n-gram (1 when none repeats), the\n"
"token characters of that n-gram at its first occurrence (the earliest wins a tie), and the\n"
"token characters inside repeated n-grams, scanning left to right and jumping past each repeat.");

static PyObject *
ngram_levels(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "ngram_levels expected 2 arguments, got %zd", nargs);
        return NULL;
    }
    PyObject *tokens = args[0];
    if (!PyList_Check(tokens)) {
        PyErr_Format(PyExc_TypeError, "tokens must be a list, not %.100s", Py_TYPE(tokens)->tp_name);
        return NULL;
    }
    Py_ssize_t max_n = PyLong_AsSsize_t(args[1]);
    if (max_n == -1 && PyErr_Occurred()) {
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(tokens);
    if (n > MAX_TOKENS) {
        PyErr_SetString(PyExc_OverflowError, "too many tokens for the repetition kernel");
        return NULL;
    }
    Py_ssize_t last = max_n < n ? max_n : n;
    Py_ssize_t length = (last < FIRST_LEVEL ? FIRST_LEVEL - 1 : last) + 1;
    size_t tokens_or_one = n > 0 ? (size_t)n : 1;
    int32_t *ids = PyMem_Malloc(tokens_or_one * sizeof(int32_t));
    int32_t *counts = PyMem_Malloc(tokens_or_one * sizeof(int32_t));
    int64_t *prefix = PyMem_Malloc(((size_t)n + 1) * sizeof(int64_t));
    int64_t *results = PyMem_Calloc(3 * (size_t)length, sizeof(int64_t));
    PyObject *answer = NULL, *top_count = NULL, *top_chars = NULL, *duplicate = NULL;
    LevelResults out = {results, results + length, results + 2 * length};
    if (ids == NULL || counts == NULL || prefix == NULL || results == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (intern_tokens(tokens, n, ids, counts, prefix) < 0) {
        goto done;
    }
    if (last >= FIRST_LEVEL && measure_levels(ids, counts, prefix, n, last, &out) < 0) {
        goto done;
    }
    top_count = list_of(out.top_count, length);
    top_chars = top_count ? list_of(out.top_chars, length) : NULL;
    duplicate = top_chars ? list_of(out.duplicate_chars, length) : NULL;
    if (duplicate != NULL) {
        answer = PyTuple_Pack(3, top_count, top_chars, duplicate);
    }
done:
    Py_XDECREF(top_count);
    Py_XDECREF(top_chars);
    Py_XDECREF(duplicate);
    PyMem_Free(ids);
    PyMem_Free(counts);
    PyMem_Free(prefix);
    PyMem_Free(results);
    return answer;
}

static PyMethodDef repetition_methods[] = {
    {"ngram_levels", (PyCFunction)(void (*)(void))ngram_levels, METH_FASTCALL, ngram_levels_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef repetition_module = {
    PyModuleDef_HEAD_INIT,
    "thresher.quality._repetition",
    "Compiled kernel for the Gopher n-gram repetition measures (see thresher.quality.repetition).",
    0,
    repetition_methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__repetition(void)
{
    return PyModuleDef_Init(&repetition_module);
}
