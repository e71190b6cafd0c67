/* thresher.extract._ctree: the tree builder of thresher.extract.tree, compiled.

`parse(html, deadline=None)` builds exactly the `HtmlDocument` that `tree._parse_python` builds
(that Python function is the specification; read it first). What is done here in C is the hot
path: the `tokenizer.TEXT_TOKEN` match (text run, whitespace run, tag with its attribute grammar,
comment, other markup), the per-tag lookup, the element stack with its counters, node creation
and the implied end tags. The rare or intricate parts call the very Python objects the reference
calls: `decode_text` for text with "&", `LinkText`, `parse_attrs` for <meta>/<link>/<html>,
`raw_text_end` for raw text that the one-search fast case does not settle, `_TAG_INFO[name]` for
a tag name seen for the first time (its `__missing__` decides the tag's role).

The module binds those objects from `thresher.extract.tree` on its first call. It is optional:
`tree.parse` is this function when the extension is built and importable, and the Python reference
otherwise, or when the environment sets THRESHER_PURE_PYTHON=1.

Safety: no recursion (the element stack is a bounded array: elements beyond MAX_DEPTH are not
pushed), every allocation checked, and per-parse state lives on the C stack of the call, so that
a parse running while another thread's is paused in a Python callback shares nothing mutable
except the append-only tag caches (changed only while holding the GIL, without calling Python
in between).
*/
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define ALWAYS_INLINE static inline
#endif

/* How many tag names (as written, "/" first for an end tag) the process-wide cache keeps: the bound
   of `tree._TagTable`, so that a page of random names cannot grow it without limit. */
#define MAX_CACHED_NAMES 4096
/* Distinct implied-end boundary sets the record bit masks can hold. */
#define MAX_BOUNDARIES 31

/* -- objects bound from thresher.extract.tree ------------------------------------------------ */

static int bound = 0;
static PyTypeObject *node_type;
static PyObject *doc_class, *link_text_class, *decode_text_fn, *parse_attrs_fn, *raw_text_end_fn;
static PyObject *tag_info, *raw_end_search, *headings, *heading_rule, *br_text, *cpu_clock_fn;
static PyObject *timeout_exc;
static Py_ssize_t max_depth, check_mask;
static long table_inside, mark_table;
static long A_BARE, A_RAW, A_VOID, A_STRUCTURE, A_LINK, A_END, A_END_LINK, A_END_BARE;
static PyObject *space_text, *empty_text, *nul_text;
static PyObject *s_root, *s_nodes, *s_metas, *s_links, *s_json_ld, *s_title, *s_lang, *s_strip;
static PyObject *s_lower, *s_lang_key, *s_xml_lang_key, *s_children;
static PyObject *s_end, *s_text_len, *s_link_len, *s_flags;
static PyObject *boundaries[MAX_BOUNDARIES];
static int n_boundaries;
static unsigned p_boundary_bit;

/* Node slots, written directly at their member offsets when every slot is a plain object member
   (checked at bind); otherwise nodes are made by calling the class and set by attribute. */
enum { SL_TAG, SL_RAW, SL_ATTRS, SL_CHILDREN, SL_PARENT, SL_INDEX, SL_END, SL_TEXT_LEN, SL_LINK_LEN,
       SL_FLAGS, N_SLOTS };
static const char *const slot_names[N_SLOTS] = {"tag", "raw_attrs", "_attrs", "children", "parent", "index",
                                                 "end", "text_len", "link_len", "flags"};
static Py_ssize_t slot_offset[N_SLOTS];
static int fast_nodes = 0;
static int force_class_call = 0; /* tests: exercise the class-call path */

#define SLOT(obj, i) (*(PyObject **)((char *)(obj) + slot_offset[i]))

/* -- string-keyed tables (open addressing; items never removed while the table lives) -------- */

typedef struct {
    Py_uhash_t hash;
    PyObject *key; /* str */
} Item;

typedef struct {
    Item **slots;
    size_t cap, count;
} Table;

ALWAYS_INLINE Py_uhash_t hash_range(int kind, const void *data, Py_ssize_t start, Py_ssize_t len)
{
    Py_uhash_t h = (Py_uhash_t)14695981039346656037ULL;
    for (Py_ssize_t i = 0; i < len; i++) {
        h ^= (Py_uhash_t)PyUnicode_READ(kind, data, start + i);
        h *= (Py_uhash_t)1099511628211ULL;
    }
    return h;
}

static Py_uhash_t hash_str(PyObject *s)
{
    return hash_range(PyUnicode_KIND(s), PyUnicode_DATA(s), 0, PyUnicode_GET_LENGTH(s));
}

static int key_equals(PyObject *key, int kind, const void *data, Py_ssize_t start, Py_ssize_t len)
{
    if (PyUnicode_GET_LENGTH(key) != len)
        return 0;
    int kkind = PyUnicode_KIND(key);
    const void *kdata = PyUnicode_DATA(key);
    if (kkind == PyUnicode_1BYTE_KIND && kind == PyUnicode_1BYTE_KIND)
        return memcmp(kdata, (const Py_UCS1 *)data + start, (size_t)len) == 0;
    for (Py_ssize_t i = 0; i < len; i++)
        if (PyUnicode_READ(kkind, kdata, i) != PyUnicode_READ(kind, data, start + i))
            return 0;
    return 1;
}

static Item *table_find(const Table *t, Py_uhash_t h, int kind, const void *data, Py_ssize_t start,
                        Py_ssize_t len)
{
    if (t->cap == 0)
        return NULL;
    size_t mask = t->cap - 1;
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        Item *it = t->slots[i];
        if (it == NULL)
            return NULL;
        if (it->hash == h && key_equals(it->key, kind, data, start, len))
            return it;
    }
}

static Item *table_find_str(const Table *t, PyObject *s)
{
    return table_find(t, hash_str(s), PyUnicode_KIND(s), PyUnicode_DATA(s), 0, PyUnicode_GET_LENGTH(s));
}

/* Add an item whose key is not in the table; -1 (MemoryError set) when growing fails. */
static int table_add(Table *t, Item *it)
{
    if ((t->count + 1) * 2 > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        Item **slots = PyMem_Calloc(cap, sizeof(Item *));
        if (slots == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        for (size_t i = 0; i < t->cap; i++) {
            Item *old = t->slots[i];
            if (old != NULL) {
                size_t j = (size_t)old->hash & (cap - 1);
                while (slots[j] != NULL)
                    j = (j + 1) & (cap - 1);
                slots[j] = old;
            }
        }
        PyMem_Free(t->slots);
        t->slots = slots;
        t->cap = cap;
    }
    size_t j = (size_t)it->hash & (t->cap - 1);
    while (t->slots[j] != NULL)
        j = (j + 1) & (t->cap - 1);
    t->slots[j] = it;
    t->count++;
    return 0;
}

/* -- tag records (one per distinct lowered tag) and name entries (one per name as written) ---- */

typedef struct {
    Py_ssize_t open;      /* elements of the tag on the stack (`open_count`) */
    Py_ssize_t skipped;   /* opened beyond MAX_DEPTH and not yet closed */
    Py_ssize_t flattened; /* attribute-less inline elements opened and not closed */
} Counts;

enum {
    R_HEADING = 1, R_BR = 2, R_META = 4, R_LINK = 8, R_HR = 16, R_SCRIPT = 32, R_TITLE = 64, R_HTML = 128,
    R_END_SEARCH = 256 /* in `_RAW_END_SEARCH`: the one-search case for its end tag applies */
};

typedef struct {
    Item item;      /* key: the tag, lowered */
    Py_ssize_t id;  /* global records: index into a parse's counts */
    int local;      /* a per-parse record (the global cache was full): its counts are here */
    Counts counts;
    unsigned bmask; /* bit b set: the tag is in boundaries[b] */
    unsigned flags;
} TagRec;

typedef struct {
    TagRec *closes;
    unsigned bit;
} Implied;

enum { IMPLIED_NONE, IMPLIED_HEADING, IMPLIED_LIST };

typedef struct {
    Item item;      /* key: the name as written */
    PyObject *info; /* the `_TAG_INFO` tuple, which owns `tag` */
    PyObject *tag;
    TagRec *rec;
    long action, marks;
    int closes_p;
    int implied_kind;
    Py_ssize_t n_implied;
    Implied *implied;
} Entry;

static Table global_entries, global_recs;
static Py_ssize_t global_rec_count;
static TagRec root_rec = {{0, NULL}, -1, 1, {0, 0, 0}, 0, 0}; /* "#root": equal to no tag, in no boundary */
static TagRec *p_rec, *pre_rec;

static int flag_if_equal(PyObject *tag, const char *name, unsigned flag, unsigned *flags)
{
    if (PyUnicode_CompareWithASCIIString(tag, name) == 0)
        *flags |= flag;
    return 0;
}

static void rec_free(TagRec *r)
{
    if (r != NULL) {
        Py_XDECREF(r->item.key);
        PyMem_Free(r);
    }
}

static TagRec *rec_new(PyObject *tag, Py_uhash_t h, int local)
{
    TagRec *r = PyMem_Calloc(1, sizeof(TagRec));
    if (r == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    r->item.hash = h;
    r->item.key = Py_NewRef(tag);
    r->local = local;
    r->id = -1;
    for (int b = 0; b < n_boundaries; b++) {
        int in = PySet_Contains(boundaries[b], tag);
        if (in < 0)
            goto error;
        if (in)
            r->bmask |= 1u << b;
    }
    int in = PySet_Contains(headings, tag);
    if (in < 0)
        goto error;
    if (in)
        r->flags |= R_HEADING;
    in = PyDict_Contains(raw_end_search, tag);
    if (in < 0)
        goto error;
    if (in && PyUnicode_IS_ASCII(tag))
        r->flags |= R_END_SEARCH;
    flag_if_equal(tag, "br", R_BR, &r->flags);
    flag_if_equal(tag, "meta", R_META, &r->flags);
    flag_if_equal(tag, "link", R_LINK, &r->flags);
    flag_if_equal(tag, "hr", R_HR, &r->flags);
    flag_if_equal(tag, "script", R_SCRIPT, &r->flags);
    flag_if_equal(tag, "title", R_TITLE, &r->flags);
    flag_if_equal(tag, "html", R_HTML, &r->flags);
    return r;
error:
    rec_free(r);
    return NULL;
}

/* The global record of `tag`, created when missing. */
static TagRec *global_rec(PyObject *tag)
{
    TagRec *r = (TagRec *)table_find_str(&global_recs, tag);
    if (r != NULL)
        return r;
    r = rec_new(tag, hash_str(tag), 0);
    if (r == NULL)
        return NULL;
    if (table_add(&global_recs, &r->item) < 0) {
        rec_free(r);
        return NULL;
    }
    r->id = global_rec_count++;
    return r;
}

static void entry_free(Entry *e)
{
    if (e != NULL) {
        Py_XDECREF(e->item.key);
        Py_XDECREF(e->info);
        PyMem_Free(e->implied);
        PyMem_Free(e);
    }
}

static int boundary_bit(PyObject *set, unsigned *bit)
{
    for (int b = 0; b < n_boundaries; b++)
        if (boundaries[b] == set) {
            *bit = 1u << b;
            return 0;
        }
    PyErr_SetString(PyExc_RuntimeError, "_ctree: an implied end tag rule with an unknown boundary set");
    return -1;
}

/* -- per-parse state -------------------------------------------------------------------------- */

typedef struct {
    PyObject *node;     /* borrowed: `nodes` owns it */
    PyObject *children; /* borrowed: the node owns it */
    TagRec *rec;
    Py_ssize_t text_len, link_len;
    long flags;
} Frame;

typedef struct {
    PyObject *html; /* owned: the input without NUL */
    int kind;
    const void *data;
    Py_ssize_t n;
    PyObject *doc, *nodes, *metas, *links, *json_ld; /* doc owned, the rest borrowed from it */
    Frame *stack;
    Py_ssize_t depth;
    Counts *counts; /* of global records, by id */
    Py_ssize_t ncounts;
    Table local_recs;
    Entry *transient; /* the entry of an uncached name, freed at the next lookup */
    Py_ssize_t link_level;
    int pre_seen, title_set, lang_set;
} Parser;

#define CH(i) PyUnicode_READ(p->kind, p->data, (i))
#define TOP(p) (&(p)->stack[(p)->depth - 1])

static int ensure_counts(Parser *p)
{
    if (global_rec_count <= p->ncounts)
        return 0;
    Py_ssize_t size = global_rec_count + 16;
    Counts *c = PyMem_Realloc(p->counts, (size_t)size * sizeof(Counts));
    if (c == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    memset(c + p->ncounts, 0, (size_t)(size - p->ncounts) * sizeof(Counts));
    p->counts = c;
    p->ncounts = size;
    return 0;
}

ALWAYS_INLINE Counts *counts_of(Parser *p, TagRec *r)
{
    return r->local ? &r->counts : &p->counts[r->id];
}

/* The record of `tag` for an entry: global when the entry is cached, else this parse's (a global
   record of the same tag is used when there is one, so records stay one per tag). */
static TagRec *entry_rec(Parser *p, PyObject *tag, int global)
{
    if (!PyUnicode_Check(tag)) {
        PyErr_SetString(PyExc_TypeError, "_ctree: _TAG_INFO gave a tag that is not a str");
        return NULL;
    }
    if (global)
        return global_rec(tag);
    TagRec *r = (TagRec *)table_find_str(&global_recs, tag);
    if (r != NULL)
        return r;
    r = (TagRec *)table_find_str(&p->local_recs, tag);
    if (r != NULL)
        return r;
    r = rec_new(tag, hash_str(tag), 1);
    if (r == NULL)
        return NULL;
    if (table_add(&p->local_recs, &r->item) < 0) {
        rec_free(r);
        return NULL;
    }
    return r;
}

static Entry *entry_build(Parser *p, PyObject *name, Py_uhash_t h, PyObject *info, int global)
{
    if (!PyTuple_Check(info) || PyTuple_GET_SIZE(info) != 5) {
        PyErr_SetString(PyExc_TypeError, "_ctree: _TAG_INFO gave something other than a 5-tuple");
        return NULL;
    }
    Entry *e = PyMem_Calloc(1, sizeof(Entry));
    if (e == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    e->item.hash = h;
    e->item.key = Py_NewRef(name);
    e->info = Py_NewRef(info);
    e->tag = PyTuple_GET_ITEM(info, 0);
    e->action = PyLong_AsLong(PyTuple_GET_ITEM(info, 1));
    if (e->action == -1 && PyErr_Occurred())
        goto error;
    e->closes_p = PyObject_IsTrue(PyTuple_GET_ITEM(info, 2));
    if (e->closes_p < 0)
        goto error;
    e->marks = PyLong_AsLong(PyTuple_GET_ITEM(info, 4));
    if (e->marks == -1 && PyErr_Occurred())
        goto error;
    e->rec = entry_rec(p, e->tag, global);
    if (e->rec == NULL)
        goto error;
    PyObject *implied = PyTuple_GET_ITEM(info, 3);
    if (implied == Py_None) {
        e->implied_kind = IMPLIED_NONE;
    } else if (implied == heading_rule) {
        e->implied_kind = IMPLIED_HEADING;
    } else {
        if (!PyTuple_Check(implied)) {
            PyErr_SetString(PyExc_TypeError, "_ctree: implied end tags that are not a tuple");
            goto error;
        }
        e->implied_kind = IMPLIED_LIST;
        e->n_implied = PyTuple_GET_SIZE(implied);
        e->implied = PyMem_Calloc((size_t)(e->n_implied ? e->n_implied : 1), sizeof(Implied));
        if (e->implied == NULL) {
            PyErr_NoMemory();
            goto error;
        }
        for (Py_ssize_t i = 0; i < e->n_implied; i++) {
            PyObject *pair = PyTuple_GET_ITEM(implied, i);
            if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
                PyErr_SetString(PyExc_TypeError, "_ctree: an implied end tag rule that is not a pair");
                goto error;
            }
            e->implied[i].closes = entry_rec(p, PyTuple_GET_ITEM(pair, 0), global);
            if (e->implied[i].closes == NULL || boundary_bit(PyTuple_GET_ITEM(pair, 1), &e->implied[i].bit) < 0)
                goto error;
        }
    }
    return e;
error:
    entry_free(e);
    return NULL;
}

/* The entry of the tag name html[start:start+len] (`tag_info[name]`). */
static Entry *lookup_entry(Parser *p, Py_ssize_t start, Py_ssize_t len)
{
    Py_uhash_t h = hash_range(p->kind, p->data, start, len);
    Entry *e = (Entry *)table_find(&global_entries, h, p->kind, p->data, start, len);
    if (e != NULL)
        return e;
    PyObject *name = PyUnicode_Substring(p->html, start, start + len);
    if (name == NULL)
        return NULL;
    PyObject *info = PyObject_GetItem(tag_info, name); /* runs `__missing__` for a new name */
    if (info == NULL) {
        Py_DECREF(name);
        return NULL;
    }
    /* Python ran: another thread may have cached the name meanwhile */
    e = (Entry *)table_find(&global_entries, h, p->kind, p->data, start, len);
    if (e == NULL) {
        int global = global_entries.count < MAX_CACHED_NAMES;
        e = entry_build(p, name, h, info, global);
        if (e != NULL) {
            if (global) {
                if (table_add(&global_entries, &e->item) < 0) {
                    entry_free(e);
                    e = NULL;
                }
            } else {
                entry_free(p->transient);
                p->transient = e;
            }
        }
    }
    Py_DECREF(name);
    Py_DECREF(info);
    if (e != NULL && ensure_counts(p) < 0)
        return NULL;
    return e;
}

/* -- the token matcher: tokenizer.TEXT_TOKEN, anchored at `pos` ------------------------------- */

typedef struct {
    Py_ssize_t start, lt, end;       /* the match: [start, end); the "<" at lt */
    Py_ssize_t name_start, name_end; /* group 3 (a tag only) */
    Py_ssize_t raw_end;              /* group 4 is [name_end, raw_end) */
    int space;                       /* group 1: the text before "<" is whitespace only */
    int is_tag;
} Token;

/* the tokenizer's ASCII whitespace (`_WS`) */
#define IS_WS(c) ((c) == ' ' || (c) == '\n' || (c) == '\t' || (c) == '\f' || (c) == '\r')
#define IS_ALPHA(c) ((((c) | 0x20) >= 'a') && (((c) | 0x20) <= 'z'))

ALWAYS_INLINE Py_ssize_t find_char_k(const int kind, const void *data, Py_ssize_t from, Py_ssize_t to,
                                     Py_UCS4 ch)
{
    if (from >= to)
        return -1;
    if (kind == PyUnicode_1BYTE_KIND) {
        const Py_UCS1 *s = memchr((const Py_UCS1 *)data + from, (int)ch, (size_t)(to - from));
        return s ? s - (const Py_UCS1 *)data : -1;
    }
    Py_ssize_t i = from;
    if (kind == PyUnicode_2BYTE_KIND && ch < 0x10000) {
        /* four UCS-2 characters a step (a word with a zero 16-bit lane has a match): text runs
           of pages outside Latin-1 are as long as anyone's */
        const Py_UCS2 *s = (const Py_UCS2 *)data;
        const uint64_t lanes = 0x0001000100010001ULL * (uint64_t)ch;
        for (; i + 4 <= to; i += 4) {
            uint64_t word;
            memcpy(&word, s + i, sizeof word);
            word ^= lanes;
            if ((word - 0x0001000100010001ULL) & ~word & 0x8000800080008000ULL)
                break;
        }
    }
    for (; i < to; i++)
        if (PyUnicode_READ(kind, data, i) == ch)
            return i;
    return -1;
}

/* Match at `pos`; 0 where TEXT_TOKEN's match fails (no "<" left, or one that starts no complete
   token). Every branch follows the pattern's first choice at each step: its alternatives start with
   disjoint characters and its repetitions are possessive, so a first choice is never revisited. */
ALWAYS_INLINE int scan_k(const int kind, const void *d, Py_ssize_t n, Py_ssize_t pos, Token *t)
{
#define C(i) PyUnicode_READ(kind, d, (i))
    Py_ssize_t lt = find_char_k(kind, d, pos, n, '<');
    if (lt < 0)
        return 0;
    t->start = pos;
    t->lt = lt;
    t->space = 0;
    if (lt > pos) { /* `\s++()` takes the run when all of it is `str.isspace` whitespace */
        Py_ssize_t i = pos;
        while (i < lt && Py_UNICODE_ISSPACE(C(i)))
            i++;
        t->space = i == lt;
    }
    Py_ssize_t q = lt + 1, e;
    if (q >= n)
        return 0;
    Py_UCS4 c = C(q);
    if (IS_ALPHA(c) || (c == '/' && q + 1 < n && IS_ALPHA(C(q + 1)))) {
        /* _TREE_TAG: (/?[a-zA-Z][^WS/>]*+)(_ATTRIBUTES)> */
        Py_ssize_t i = q + (c == '/') + 1;
        while (i < n) {
            c = C(i);
            if (IS_WS(c) || c == '/' || c == '>')
                break;
            i++;
        }
        t->name_start = q;
        t->name_end = i;
        for (;;) { /* (?:_ATTRIBUTE|[WS/]++)*+ : stops only at ">" or the end */
            if (i >= n)
                return 0; /* unfinished tag */
            c = C(i);
            if (c == '>')
                break;
            if (IS_WS(c) || c == '/') {
                i++;
                continue;
            }
            i++; /* [^WS/>] (may be "=", a quote or "<") then [^WS/>=]*+ */
            while (i < n) {
                c = C(i);
                if (IS_WS(c) || c == '/' || c == '>' || c == '=')
                    break;
                i++;
            }
            Py_ssize_t r = i; /* (?:[WS]*+=[WS]*+(?:"[^"]*+"?|'[^']*+'?|[^WS>"'][^WS>]*+)?)? */
            while (r < n && IS_WS(C(r)))
                r++;
            if (r < n && C(r) == '=') {
                r++;
                while (r < n && IS_WS(C(r)))
                    r++;
                if (r < n) {
                    c = C(r);
                    if (c == '"' || c == '\'') {
                        Py_UCS4 quote = c;
                        r++;
                        while (r < n && C(r) != quote)
                            r++;
                        if (r < n)
                            r++;
                    } else if (c != '>') {
                        r++;
                        while (r < n) {
                            c = C(r);
                            if (IS_WS(c) || c == '>')
                                break;
                            r++;
                        }
                    }
                }
                i = r;
            }
        }
        t->raw_end = i;
        t->end = i + 1;
        t->is_tag = 1;
        return 1;
    }
    t->is_tag = 0;
    if (c == '!') {
        if (q + 2 < n && C(q + 1) == '-' && C(q + 2) == '-') { /* !--(?:-?>|.*?--!?>) */
            Py_ssize_t i = q + 3;
            if (i < n && C(i) == '>') {
                t->end = i + 1;
                return 1;
            }
            if (i + 1 < n && C(i) == '-' && C(i + 1) == '>') {
                t->end = i + 2;
                return 1;
            }
            for (;;) {
                i = find_char_k(kind, d, i, n, '-');
                if (i < 0 || i + 2 >= n)
                    return 0; /* unclosed comment: no other alternative starts "<!--" */
                if (C(i + 1) == '-') {
                    Py_UCS4 c3 = C(i + 2);
                    if (c3 == '>') {
                        t->end = i + 3;
                        return 1;
                    }
                    if (c3 == '!' && i + 3 < n && C(i + 3) == '>') {
                        t->end = i + 4;
                        return 1;
                    }
                }
                i++;
            }
        }
        e = find_char_k(kind, d, q + 1, n, '>'); /* !(?!--)[^>]*+> */
    } else if (c == '?') {
        e = find_char_k(kind, d, q + 1, n, '>'); /* \?[^>]*+> */
    } else if (c == '/') { /* /(?:[^a-zA-Z>][^>]*+)?> (a letter went to the tag) */
        if (q + 1 >= n)
            return 0;
        e = C(q + 1) == '>' ? q + 1 : find_char_k(kind, d, q + 2, n, '>');
    } else {
        return 0;
    }
    if (e < 0)
        return 0;
    t->end = e + 1;
    return 1;
#undef C
}

static int scan_1(const void *d, Py_ssize_t n, Py_ssize_t pos, Token *t)
{
    return scan_k(PyUnicode_1BYTE_KIND, d, n, pos, t);
}
static int scan_2(const void *d, Py_ssize_t n, Py_ssize_t pos, Token *t)
{
    return scan_k(PyUnicode_2BYTE_KIND, d, n, pos, t);
}
static int scan_4(const void *d, Py_ssize_t n, Py_ssize_t pos, Token *t)
{
    return scan_k(PyUnicode_4BYTE_KIND, d, n, pos, t);
}

static int all_space(Parser *p, Py_ssize_t start, Py_ssize_t end)
{
    if (start >= end)
        return 0; /* "".isspace() is False */
    for (Py_ssize_t i = start; i < end; i++)
        if (!Py_UNICODE_ISSPACE(CH(i)))
            return 0;
    return 1;
}

static Py_ssize_t find_char(Parser *p, Py_ssize_t from, Py_ssize_t to, Py_UCS4 ch)
{
    switch (p->kind) {
    case PyUnicode_1BYTE_KIND:
        return find_char_k(PyUnicode_1BYTE_KIND, p->data, from, to, ch);
    case PyUnicode_2BYTE_KIND:
        return find_char_k(PyUnicode_2BYTE_KIND, p->data, from, to, ch);
    default:
        return find_char_k(PyUnicode_4BYTE_KIND, p->data, from, to, ch);
    }
}

/* -- tree building ---------------------------------------------------------------------------- */

static PyObject *new_int(Py_ssize_t v)
{
    return PyLong_FromSsize_t(v);
}

/* Write a node's closing values (end, text and link lengths, flags). */
static int write_closed(PyObject *node, Py_ssize_t end, Py_ssize_t text_len, Py_ssize_t link_len, long flags)
{
    PyObject *values[4] = {new_int(end), new_int(text_len), new_int(link_len), PyLong_FromLong(flags)};
    int rc = 0;
    if (!values[0] || !values[1] || !values[2] || !values[3]) {
        rc = -1;
    } else if (fast_nodes && !force_class_call) {
        for (int i = 0; i < 4; i++) {
            PyObject **slot = &SLOT(node, SL_END + i);
            PyObject *old = *slot;
            *slot = values[i];
            values[i] = NULL;
            Py_XDECREF(old);
        }
    } else {
        PyObject *names[4] = {s_end, s_text_len, s_link_len, s_flags};
        for (int i = 0; i < 4 && rc == 0; i++)
            rc = PyObject_SetAttr(node, names[i], values[i]);
    }
    for (int i = 0; i < 4; i++)
        Py_XDECREF(values[i]);
    return rc;
}

/* `_close` of the frame just popped (the parent frame is the one below it). */
static int close_frame(Parser *p, Frame *f, Py_ssize_t end)
{
    Frame *parent = f - 1;
    parent->text_len += f->text_len;
    parent->link_len += f->link_len;
    return write_closed(f->node, end, f->text_len, f->link_len, f->flags);
}

/* A new element `Node(tag, raw, parent, index)`; *children gets its (borrowed) children list. An
   element that will be pushed gets its closing values when it closes. */
static PyObject *make_node(PyObject *tag, PyObject *raw, PyObject *parent, Py_ssize_t index, int pushed,
                           PyObject **children)
{
    PyObject *node;
    if (!fast_nodes || force_class_call) {
        node = PyObject_CallFunction((PyObject *)node_type, "OOOn", tag, raw, parent, index);
        if (node == NULL)
            return NULL;
        PyObject *list = PyObject_GetAttr(node, s_children);
        if (list == NULL) {
            Py_DECREF(node);
            return NULL;
        }
        *children = list; /* the node keeps it */
        Py_DECREF(list);
        return node;
    }
    node = node_type->tp_alloc(node_type, 0);
    if (node == NULL)
        return NULL;
    PyObject *list = PyList_New(0);
    PyObject *idx = new_int(index);
    if (list == NULL || idx == NULL) {
        Py_XDECREF(list);
        Py_XDECREF(idx);
        Py_DECREF(node);
        return NULL;
    }
    /* untracked while the tree is built: the collections that the allocations trigger meanwhile
       would traverse the growing tree again and again (a fifth of the parse); `track_tree` tracks
       it once it is complete, or before it is dropped on an error, so its cycles stay collectable */
    PyObject_GC_UnTrack(node);
    PyObject_GC_UnTrack(list);
    SLOT(node, SL_TAG) = Py_NewRef(tag);
    SLOT(node, SL_RAW) = Py_NewRef(raw);
    SLOT(node, SL_ATTRS) = Py_NewRef(Py_None);
    SLOT(node, SL_CHILDREN) = list;
    SLOT(node, SL_PARENT) = Py_NewRef(parent);
    SLOT(node, SL_INDEX) = idx;
    *children = list;
    if (!pushed && write_closed(node, index + 1, 0, 0, 0) < 0) {
        Py_DECREF(node);
        return NULL;
    }
    return node;
}

/* Track every node that `make_node` left untracked, and its children list. */
static void track_tree(Parser *p)
{
    if (p->nodes == NULL)
        return;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(p->nodes); i++) {
        PyObject *node = PyList_GET_ITEM(p->nodes, i);
        if (Py_TYPE(node) != node_type || PyObject_GC_IsTracked(node))
            continue;
        PyObject *children = SLOT(node, SL_CHILDREN);
        if (children != NULL && !PyObject_GC_IsTracked(children))
            PyObject_GC_Track(children);
        PyObject_GC_Track(node);
    }
}

/* `_append_text`: html[start:end] (not whitespace only) as a child of the current element. */
static int append_text(Parser *p, Py_ssize_t start, Py_ssize_t end)
{
    Frame *cur = TOP(p);
    PyObject *text = PyUnicode_Substring(p->html, start, end);
    if (text == NULL)
        return -1;
    Py_ssize_t blanks = 0, len = end - start;
    int amp = 0;
    for (Py_ssize_t i = start; i < end; i++) {
        Py_UCS4 c = CH(i);
        blanks += c == ' ' || c == '\n';
        amp |= c == '&';
    }
    if (amp) {
        PyObject *decoded = PyObject_CallOneArg(decode_text_fn, text);
        Py_DECREF(text);
        if (decoded == NULL)
            return -1;
        if (!PyUnicode_Check(decoded)) {
            Py_DECREF(decoded);
            PyErr_SetString(PyExc_TypeError, "_ctree: decode_text gave something other than a str");
            return -1;
        }
        text = decoded;
        int kind = PyUnicode_KIND(text);
        const void *data = PyUnicode_DATA(text);
        len = PyUnicode_GET_LENGTH(text);
        blanks = 0;
        for (Py_ssize_t i = 0; i < len; i++) {
            Py_UCS4 c = PyUnicode_READ(kind, data, i);
            blanks += c == ' ' || c == '\n';
        }
    }
    Py_ssize_t count = len - blanks;
    cur->text_len += count;
    if (p->link_level) {
        PyObject *link = PyObject_CallOneArg(link_text_class, text);
        Py_DECREF(text);
        if (link == NULL)
            return -1;
        text = link;
        cur->link_len += count;
    }
    int rc = PyList_Append(cur->children, text);
    Py_DECREF(text);
    return rc;
}

/* `_pop_to`: close elements up to the innermost open `rec`. */
static int pop_to(Parser *p, TagRec *rec)
{
    Py_ssize_t end = PyList_GET_SIZE(p->nodes);
    while (p->depth > 1) {
        Frame *f = &p->stack[--p->depth];
        counts_of(p, f->rec)->open--;
        if (close_frame(p, f, end) < 0)
            return -1;
        if (f->rec == rec)
            break;
    }
    if (p->link_level > p->depth)
        p->link_level = 0; /* the link's parent closed, and the link with it */
    return 0;
}

/* `_close_if_open`: close an open `rec` unless an element of the boundary is nearer. */
static int close_if_open(Parser *p, TagRec *rec, unsigned bit)
{
    for (Py_ssize_t i = p->depth - 1; i > 0; i--) {
        TagRec *t = p->stack[i].rec;
        if (t == rec)
            return pop_to(p, rec);
        if (t->bmask & bit)
            break;
    }
    return 0;
}

static int check_deadline(PyObject *deadline)
{
    PyObject *now = PyObject_CallNoArgs(cpu_clock_fn);
    if (now == NULL)
        return -1;
    int late = PyObject_RichCompareBool(now, deadline, Py_GT);
    Py_DECREF(now);
    if (late < 0)
        return -1;
    if (late) {
        PyErr_SetString(timeout_exc, "parsing passed the deadline");
        return -1;
    }
    return 0;
}

static int contains_ascii_lower(Parser *p, Py_ssize_t start, Py_ssize_t end, const char *needle)
{
    Py_ssize_t m = (Py_ssize_t)strlen(needle);
    for (Py_ssize_t i = start; i + m <= end; i++) {
        Py_ssize_t k = 0;
        while (k < m) {
            Py_UCS4 c = CH(i + k);
            if (c >= 'A' && c <= 'Z')
                c += 'a' - 'A';
            if (c != (Py_UCS4)(unsigned char)needle[k])
                break;
            k++;
        }
        if (k == m)
            return 1;
    }
    return 0;
}

static Py_ssize_t find_ascii(Parser *p, Py_ssize_t from, Py_ssize_t to, const char *needle)
{
    Py_ssize_t m = (Py_ssize_t)strlen(needle);
    for (Py_ssize_t i = find_char(p, from, to, (Py_UCS4)needle[0]); i >= 0 && i + m <= to;
         i = find_char(p, i + 1, to, (Py_UCS4)needle[0])) {
        Py_ssize_t k = 1;
        while (k < m && CH(i + k) == (Py_UCS4)(unsigned char)needle[k])
            k++;
        if (k == m)
            return i;
    }
    return -1;
}

/* `_RAW_END_SEARCH[tag]`: the first "</tag" (ASCII case folded) followed by ">" or [\t\n\f\r /].
   Returns its start or -1; *closed is set when ">" follows at once (group 1). */
static Py_ssize_t raw_end_search_c(Parser *p, Py_ssize_t from, PyObject *tag, int *closed)
{
    const Py_UCS1 *name = PyUnicode_1BYTE_DATA(tag); /* ASCII, checked when the record was made */
    Py_ssize_t m = PyUnicode_GET_LENGTH(tag);
    for (Py_ssize_t i = find_char(p, from, p->n, '<'); i >= 0; i = find_char(p, i + 1, p->n, '<')) {
        if (i + 2 + m >= p->n)
            return -1; /* no room left for "</", the name and one character after it */
        if (CH(i + 1) != '/')
            continue;
        Py_ssize_t k = 0;
        while (k < m) {
            Py_UCS4 c = CH(i + 2 + k);
            if (c >= 'A' && c <= 'Z')
                c += 'a' - 'A';
            if (c != name[k])
                break;
            k++;
        }
        if (k < m)
            continue;
        Py_UCS4 after = CH(i + 2 + m);
        if (after == '>') {
            *closed = 1;
            return i;
        }
        if (IS_WS(after) || after == '/') {
            *closed = 0;
            return i;
        }
    }
    return -1;
}

static int unpack_raw_end(PyObject *res, Py_ssize_t n, Py_ssize_t *content_end, Py_ssize_t *end)
{
    if (res == NULL)
        return -1;
    if (!PyTuple_Check(res) || PyTuple_GET_SIZE(res) != 2) {
        Py_DECREF(res);
        PyErr_SetString(PyExc_TypeError, "_ctree: raw_text_end gave something other than a pair");
        return -1;
    }
    *content_end = PyLong_AsSsize_t(PyTuple_GET_ITEM(res, 0));
    *end = PyLong_AsSsize_t(PyTuple_GET_ITEM(res, 1));
    Py_DECREF(res);
    if ((*content_end == -1 || *end == -1) && PyErr_Occurred())
        return -1;
    if (*content_end < 0 || *end > n || *content_end > n) {
        PyErr_SetString(PyExc_ValueError, "_ctree: raw_text_end gave positions outside the input");
        return -1;
    }
    return 0;
}

/* A raw-text element whose start tag ends at `pos`: skip its content, keep what metadata wants. */
static int raw_element(Parser *p, Entry *e, Token *t, Py_ssize_t *pos_out)
{
    Py_ssize_t pos = t->end, content_end = -1, end = -1;
    TagRec *rec = e->rec;
    int fast = 0;
    if (rec->flags & R_END_SEARCH) {
        int closed = 0;
        Py_ssize_t start = raw_end_search_c(p, pos, e->tag, &closed);
        /* the common case in one search: the end tag closes at once and, for a script, no "<!--"
           before it (escaped script data) */
        if (start >= 0 && closed && (!(rec->flags & R_SCRIPT) || find_ascii(p, pos, start, "<!--") < 0)) {
            content_end = start;
            end = start + 2 + PyUnicode_GET_LENGTH(e->tag) + 1;
            fast = 1;
        }
    }
    if (!fast) {
        PyObject *res = PyObject_CallFunction(raw_text_end_fn, "OnO", p->html, pos, e->tag);
        if (unpack_raw_end(res, p->n, &content_end, &end) < 0)
            return -1;
    }
    if (rec->flags & R_SCRIPT) {
        int ld;
        int ascii = 1;
        for (Py_ssize_t i = t->name_end; i < t->raw_end && ascii; i++)
            ascii = CH(i) < 128;
        if (ascii) {
            ld = contains_ascii_lower(p, t->name_end, t->raw_end, "ld+json");
        } else { /* `str.lower` of non-ASCII text: as the reference does it */
            PyObject *raw = PyUnicode_Substring(p->html, t->name_end, t->raw_end);
            PyObject *lowered = raw ? PyObject_CallMethodNoArgs(raw, s_lower) : NULL;
            Py_XDECREF(raw);
            if (lowered == NULL)
                return -1;
            PyObject *needle = PyUnicode_FromString("ld+json");
            ld = needle ? PySequence_Contains(lowered, needle) : -1;
            Py_XDECREF(needle);
            Py_DECREF(lowered);
            if (ld < 0)
                return -1;
        }
        if (ld) {
            PyObject *content = PyUnicode_Substring(p->html, pos, content_end);
            if (content == NULL)
                return -1;
            int rc = PyList_Append(p->json_ld, content);
            Py_DECREF(content);
            if (rc < 0)
                return -1;
        }
    } else if ((rec->flags & R_TITLE) && !p->title_set) {
        PyObject *content = PyUnicode_Substring(p->html, pos, content_end);
        PyObject *decoded = content ? PyObject_CallOneArg(decode_text_fn, content) : NULL;
        Py_XDECREF(content);
        PyObject *title = decoded ? PyObject_CallMethodNoArgs(decoded, s_strip) : NULL;
        Py_XDECREF(decoded);
        if (title == NULL)
            return -1;
        int rc = PyObject_SetAttr(p->doc, s_title, title);
        p->title_set = 1;
        Py_DECREF(title);
        if (rc < 0)
            return -1;
    }
    *pos_out = end;
    return 0;
}

/* <html lang>: `lang`, else `xml:lang`, of the first <html> that declares one. */
static int html_lang(Parser *p, PyObject *raw)
{
    PyObject *attrs = PyObject_CallOneArg(parse_attrs_fn, raw);
    if (attrs == NULL)
        return -1;
    if (!PyDict_Check(attrs)) {
        Py_DECREF(attrs);
        PyErr_SetString(PyExc_TypeError, "_ctree: parse_attrs gave something other than a dict");
        return -1;
    }
    PyObject *keys[2] = {s_lang_key, s_xml_lang_key};
    int rc = 0;
    for (int k = 0; k < 2; k++) {
        PyObject *lang = PyDict_GetItemWithError(attrs, keys[k]); /* borrowed */
        if (lang == NULL) {
            if (PyErr_Occurred())
                rc = -1;
            continue;
        }
        int truth = PyObject_IsTrue(lang);
        if (truth < 0)
            rc = -1;
        if (truth <= 0)
            continue;
        PyObject *stripped = PyObject_CallMethodNoArgs(lang, s_strip);
        if (stripped == NULL || PyObject_SetAttr(p->doc, s_lang, stripped) < 0)
            rc = -1;
        else
            p->lang_set = 1;
        Py_XDECREF(stripped);
        break;
    }
    Py_DECREF(attrs);
    return rc;
}

/* One tag token (the text before it is already appended). */
static int handle_tag(Parser *p, Token *t, Py_ssize_t *pos, int *restart)
{
    Entry *e = lookup_entry(p, t->name_start, t->name_end - t->name_start);
    if (e == NULL)
        return -1;
    TagRec *rec = e->rec;
    long action = e->action;
    Frame *cur = TOP(p);
    if (action >= A_END) {
        Counts *c = counts_of(p, rec);
        if (action == A_END_LINK) {
            p->link_level = 0;
        } else if (c->skipped) {
            c->skipped--;
        } else if (action == A_END_BARE && c->flattened) {
            c->flattened--;
        } else if (cur->rec == rec) { /* the common case: closing the current element */
            p->depth--;
            c->open--;
            if (close_frame(p, cur, PyList_GET_SIZE(p->nodes)) < 0)
                return -1;
            if (p->link_level > p->depth)
                p->link_level = 0;
        } else if (rec->flags & R_BR) {
            return PyList_Append(cur->children, br_text);
        } else if (c->open) {
            return pop_to(p, rec);
        }
        return 0;
    }
    Py_ssize_t raw_len = t->raw_end - t->name_end;
    if (action) {
        if (action == A_LINK) {
            /* links are not materialized: their text is marked as LinkText; a nested <a> ends the
               open one and starts another, as in browsers */
            p->link_level = p->depth;
            return 0;
        }
        if (action == A_BARE) {
            if (raw_len == 0 || all_space(p, t->name_end, t->raw_end)) {
                counts_of(p, rec)->flattened++; /* no attributes: the text joins the parent */
                return 0;
            }
        } else if (action == A_VOID) {
            if (rec->flags & R_BR)
                return PyList_Append(cur->children, br_text);
            if (rec->flags & (R_META | R_LINK | R_HR)) {
                PyObject *raw = PyUnicode_Substring(p->html, t->name_end, t->raw_end);
                if (raw == NULL)
                    return -1;
                int rc;
                if (rec->flags & R_HR) { /* a thematic break ends a block */
                    PyObject *children;
                    PyObject *node = make_node(e->tag, raw, cur->node, PyList_GET_SIZE(p->nodes), 0, &children);
                    rc = node ? PyList_Append(p->nodes, node) : -1;
                    if (rc == 0)
                        rc = PyList_Append(cur->children, node);
                    Py_XDECREF(node);
                } else {
                    PyObject *attrs = PyObject_CallOneArg(parse_attrs_fn, raw);
                    rc = attrs ? PyList_Append(rec->flags & R_META ? p->metas : p->links, attrs) : -1;
                    Py_XDECREF(attrs);
                }
                Py_DECREF(raw);
                return rc;
            }
            return 0; /* other void elements carry no text */
        } else if (action == A_RAW) {
            *restart = 1;
            return raw_element(p, e, t, pos);
        } else { /* A_STRUCTURE */
            if ((rec->flags & R_HTML) && !p->lang_set && raw_len) {
                PyObject *raw = PyUnicode_Substring(p->html, t->name_end, t->raw_end);
                if (raw == NULL)
                    return -1;
                int rc = html_lang(p, raw);
                Py_DECREF(raw);
                return rc;
            }
            return 0;
        }
    }
    /* implied end tags */
    if (e->closes_p && counts_of(p, p_rec)->open && !(cur->rec->bmask & p_boundary_bit)) {
        if (close_if_open(p, p_rec, p_boundary_bit) < 0)
            return -1;
        cur = TOP(p);
    }
    if (e->implied_kind == IMPLIED_HEADING) {
        if (cur->rec->flags & R_HEADING) {
            if (pop_to(p, cur->rec) < 0)
                return -1;
            cur = TOP(p);
        }
    } else if (e->implied_kind == IMPLIED_LIST) {
        for (Py_ssize_t i = 0; i < e->n_implied; i++) {
            Implied *im = &e->implied[i];
            if (counts_of(p, im->closes)->open && !(cur->rec->bmask & im->bit)) {
                if (close_if_open(p, im->closes, im->bit) < 0)
                    return -1;
                cur = TOP(p);
            }
        }
    }
    if (p->depth > max_depth) {
        counts_of(p, rec)->skipped++;
        return 0;
    }
    /* XHTML-style <div/>: nothing inside */
    int self_closing = raw_len && CH(t->raw_end - 1) == '/';
    PyObject *raw = PyUnicode_Substring(p->html, t->name_end, t->raw_end);
    if (raw == NULL)
        return -1;
    PyObject *children;
    PyObject *node = make_node(e->tag, raw, cur->node, PyList_GET_SIZE(p->nodes), !self_closing, &children);
    Py_DECREF(raw);
    if (node == NULL)
        return -1;
    int rc = PyList_Append(p->nodes, node);
    if (rc == 0)
        rc = PyList_Append(cur->children, node);
    Py_DECREF(node); /* `nodes` keeps it */
    if (rc < 0)
        return -1;
    if (e->marks) {
        if (e->marks == mark_table) {
            /* mark the ancestors: a table around another is layout (blocks.is_data_table) */
            for (Py_ssize_t i = p->depth - 1; i >= 0; i--) {
                if (p->stack[i].flags & table_inside)
                    break;
                p->stack[i].flags |= table_inside;
            }
        } else {
            p->pre_seen = 1;
        }
    }
    if (self_closing)
        return 0;
    Frame *f = &p->stack[p->depth++];
    f->node = node;
    f->children = children;
    f->rec = rec;
    f->text_len = f->link_len = 0;
    f->flags = 0;
    counts_of(p, rec)->open++;
    return 0;
}

static int handle_token(Parser *p, Token *t, Py_ssize_t *pos, int *restart)
{
    if (t->space) { /* whitespace only: one space, or as written inside an open <pre> */
        Frame *cur = TOP(p);
        if (p->pre_seen && counts_of(p, pre_rec)->open) {
            PyObject *ws = PyUnicode_Substring(p->html, t->start, t->lt);
            if (ws == NULL)
                return -1;
            int rc = PyList_Append(cur->children, ws);
            Py_DECREF(ws);
            if (rc < 0)
                return -1;
        } else if (PyList_Append(cur->children, space_text) < 0) {
            return -1;
        }
    } else if (t->lt > t->start && append_text(p, t->start, t->lt) < 0) {
        return -1;
    }
    if (!t->is_tag)
        return 0; /* comment, doctype, bogus comment, "</>" */
    return handle_tag(p, t, pos, restart);
}

static void parser_free(Parser *p)
{
    track_tree(p);
    for (size_t i = 0; i < p->local_recs.cap; i++)
        rec_free((TagRec *)p->local_recs.slots[i]);
    PyMem_Free(p->local_recs.slots);
    entry_free(p->transient);
    PyMem_Free(p->counts);
    PyMem_Free(p->stack);
    Py_XDECREF(p->html);
    Py_XDECREF(p->doc);
}

static int bind(void);

static PyObject *build(PyObject *html, PyObject *deadline)
{
    Parser P;
    Parser *p = &P;
    memset(p, 0, sizeof P);
    Py_ssize_t n = PyUnicode_GET_LENGTH(html);
    int kind = PyUnicode_KIND(html);
    const void *data = PyUnicode_DATA(html);
    Py_ssize_t nul = kind == PyUnicode_1BYTE_KIND   ? find_char_k(PyUnicode_1BYTE_KIND, data, 0, n, 0)
                     : kind == PyUnicode_2BYTE_KIND ? find_char_k(PyUnicode_2BYTE_KIND, data, 0, n, 0)
                                                    : find_char_k(PyUnicode_4BYTE_KIND, data, 0, n, 0);
    if (nul >= 0) /* NUL: dropped, as the standard's "in body" insertion mode ignores it */
        p->html = PyUnicode_Replace(html, nul_text, empty_text, -1);
    else
        p->html = Py_NewRef(html);
    if (p->html == NULL)
        goto error;
    p->kind = PyUnicode_KIND(p->html);
    p->data = PyUnicode_DATA(p->html);
    p->n = n = PyUnicode_GET_LENGTH(p->html);
    p->doc = PyObject_CallNoArgs(doc_class);
    if (p->doc == NULL)
        goto error;
    PyObject *root = PyObject_GetAttr(p->doc, s_root);
    PyObject *attrs[4] = {PyObject_GetAttr(p->doc, s_nodes), PyObject_GetAttr(p->doc, s_metas),
                          PyObject_GetAttr(p->doc, s_links), PyObject_GetAttr(p->doc, s_json_ld)};
    PyObject *root_children = root ? PyObject_GetAttr(root, s_children) : NULL;
    /* the document keeps them all: borrowed from here on */
    Py_XDECREF(root);
    Py_XDECREF(root_children);
    for (int i = 0; i < 4; i++)
        Py_XDECREF(attrs[i]);
    if (!root || !root_children || !attrs[0] || !attrs[1] || !attrs[2] || !attrs[3])
        goto error;
    if (!PyList_Check(attrs[0]) || !PyList_Check(attrs[1]) || !PyList_Check(attrs[2]) || !PyList_Check(attrs[3]) ||
        !PyList_Check(root_children)) {
        PyErr_SetString(PyExc_TypeError, "_ctree: HtmlDocument() without its lists");
        goto error;
    }
    p->nodes = attrs[0];
    p->metas = attrs[1];
    p->links = attrs[2];
    p->json_ld = attrs[3];
    p->stack = PyMem_Calloc((size_t)max_depth + 1, sizeof(Frame));
    if (p->stack == NULL) {
        PyErr_NoMemory();
        goto error;
    }
    p->stack[0].node = root;
    p->stack[0].children = root_children;
    p->stack[0].rec = &root_rec;
    p->depth = 1;
    if (ensure_counts(p) < 0)
        goto error;
    int (*scan)(const void *, Py_ssize_t, Py_ssize_t, Token *) =
        p->kind == PyUnicode_1BYTE_KIND ? scan_1 : p->kind == PyUnicode_2BYTE_KIND ? scan_2 : scan_4;

    /* Tokens are matched anchored, each with the text before it. A match fails where a "<" starts no
       token (stray text) and where there is no token left; a raw-text element moves `pos` past its
       end tag. Either way matching resumes from `pos`, and the deadline count starts again (the
       reference's scanner restarts there). */
    Py_ssize_t pos = 0;
    while (pos < n) {
        int restart = 0;
        Py_ssize_t i = 0;
        Token t;
        while (scan(p->data, n, pos, &t)) {
            if (!(i & check_mask) && deadline != Py_None && check_deadline(deadline) < 0)
                goto error;
            i++;
            pos = t.end;
            if (handle_token(p, &t, &pos, &restart) < 0)
                goto error;
            if (restart)
                break;
        }
        if (restart)
            continue;
        /* No complete token at the next "<". Either it starts none ("<" before a space, a digit,
           the end: text, as in the standard's tag open state), or it starts a tag, comment or
           declaration that the end of the input cuts short: the standard drops that to the end. */
        Py_ssize_t lt = find_char(p, pos, n, '<');
        if (lt < 0)
            break;
        Py_UCS4 nxt = lt + 1 < n ? CH(lt + 1) : 0;
        if ((lt + 1 < n && (IS_ALPHA(nxt) || nxt == '!' || nxt == '?')) || (nxt == '/' && lt + 2 < n)) {
            if (lt > pos && !all_space(p, pos, lt) && append_text(p, pos, lt) < 0)
                goto error;
            pos = n;
            break;
        }
        if (append_text(p, pos, lt + 1) < 0)
            goto error;
        pos = lt + 1;
    }
    if (pos < n && !all_space(p, pos, n) && append_text(p, pos, n) < 0)
        goto error;
    Py_ssize_t end = PyList_GET_SIZE(p->nodes);
    while (p->depth > 1) { /* elements left open at the end close here */
        Frame *f = &p->stack[--p->depth];
        if (close_frame(p, f, end) < 0)
            goto error;
    }
    if (write_closed(root, end, p->stack[0].text_len, p->stack[0].link_len, p->stack[0].flags) < 0)
        goto error;
    PyObject *doc = p->doc;
    p->doc = NULL;
    parser_free(p);
    return doc;
error:
    parser_free(p);
    return NULL;
}

/* -- binding and the module ------------------------------------------------------------------ */

static PyObject *tree_attr(PyObject *mod, const char *name)
{
    return PyObject_GetAttrString(mod, name);
}

static int long_attr(PyObject *mod, const char *name, long *out)
{
    PyObject *v = tree_attr(mod, name);
    if (v == NULL)
        return -1;
    *out = PyLong_AsLong(v);
    Py_DECREF(v);
    return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

static int add_boundary(PyObject *set, PyObject **list, int *count)
{
    if (!PyFrozenSet_Check(set) && !PySet_Check(set)) {
        PyErr_SetString(PyExc_TypeError, "_ctree: an implied end tag boundary that is not a set");
        return -1;
    }
    for (int b = 0; b < *count; b++)
        if (list[b] == set)
            return 0;
    if (*count >= MAX_BOUNDARIES) {
        PyErr_SetString(PyExc_RuntimeError, "_ctree: too many implied end tag boundary sets");
        return -1;
    }
    list[(*count)++] = set;
    return 0;
}

/* Whether every Node slot is a writable object member: then nodes are allocated with the type's
   tp_alloc and their slots written at the members' offsets (no Python __init__ call). */
static int check_node_slots(PyTypeObject *type, Py_ssize_t *offsets)
{
    if (type->tp_dictoffset != 0 || type->tp_new != PyBaseObject_Type.tp_new || type->tp_alloc == NULL)
        return 0;
    for (int i = 0; i < N_SLOTS; i++) {
        PyObject *descr = PyDict_GetItemString(type->tp_dict, slot_names[i]);
        if (descr == NULL || !PyObject_TypeCheck(descr, &PyMemberDescr_Type))
            return 0;
        PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
        if (member->type != T_OBJECT_EX || (member->flags & READONLY) || member->offset <= 0 ||
            member->offset + (Py_ssize_t)sizeof(PyObject *) > type->tp_basicsize)
            return 0;
        offsets[i] = member->offset;
    }
    return 1;
}

static int bind(void)
{
    PyObject *mod = PyImport_ImportModule("thresher.extract.tree");
    if (mod == NULL)
        return -1;
    PyObject *objs[13] = {NULL};
    static const char *const names[13] = {"Node", "HtmlDocument", "LinkText", "decode_text", "parse_attrs",
                                          "raw_text_end", "_TAG_INFO", "_RAW_END_SEARCH", "_HEADINGS",
                                          "_HEADING_RULE", "BR", "cpu_clock", "ExtractionTimeout"};
    PyObject *p_set = NULL, *implied = NULL;
    long depth, check_every, consts[11];
    static const char *const const_names[11] = {"MAX_DEPTH", "_CHECK_EVERY", "TABLE_INSIDE", "_MARK_TABLE", "_BARE",
                                                "_RAW", "_VOID", "_STRUCTURE", "_LINK", "_END", "_END_LINK"};
    long end_bare;
    PyObject *bset[MAX_BOUNDARIES];
    int nb = 0, rc = -1;
    for (int i = 0; i < 13; i++)
        if ((objs[i] = tree_attr(mod, names[i])) == NULL)
            goto done;
    for (int i = 0; i < 11; i++)
        if (long_attr(mod, const_names[i], &consts[i]) < 0)
            goto done;
    if (long_attr(mod, "_END_BARE", &end_bare) < 0)
        goto done;
    depth = consts[0];
    check_every = consts[1];
    if (!PyType_Check(objs[0]) || !PyDict_Check(objs[6]) || !PyDict_Check(objs[7]) || !PyUnicode_Check(objs[10]) ||
        depth < 1 || depth > 1000000 || check_every < 1) {
        PyErr_SetString(PyExc_TypeError, "_ctree: thresher.extract.tree is not the module this was built for");
        goto done;
    }
    if ((p_set = tree_attr(mod, "_P_BOUNDARY")) == NULL || (implied = tree_attr(mod, "_IMPLIED_END")) == NULL)
        goto done;
    if (add_boundary(p_set, bset, &nb) < 0)
        goto done;
    if (!PyDict_Check(implied)) {
        PyErr_SetString(PyExc_TypeError, "_ctree: _IMPLIED_END is not a dict");
        goto done;
    }
    Py_ssize_t it = 0;
    PyObject *key, *rules;
    while (PyDict_Next(implied, &it, &key, &rules)) {
        if (!PyTuple_Check(rules)) {
            PyErr_SetString(PyExc_TypeError, "_ctree: _IMPLIED_END values must be tuples");
            goto done;
        }
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(rules); i++) {
            PyObject *pair = PyTuple_GET_ITEM(rules, i);
            if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 || !PyUnicode_Check(PyTuple_GET_ITEM(pair, 0))) {
                PyErr_SetString(PyExc_TypeError, "_ctree: _IMPLIED_END rules must be (tag, boundary) pairs");
                goto done;
            }
            if (add_boundary(PyTuple_GET_ITEM(pair, 1), bset, &nb) < 0)
                goto done;
        }
    }
    if (bound) { /* another thread bound while Python ran */
        rc = 0;
        goto done;
    }
    /* from here on no Python code runs until `bound` is set */
    node_type = (PyTypeObject *)objs[0];
    doc_class = objs[1];
    link_text_class = objs[2];
    decode_text_fn = objs[3];
    parse_attrs_fn = objs[4];
    raw_text_end_fn = objs[5];
    tag_info = objs[6];
    raw_end_search = objs[7];
    headings = objs[8];
    heading_rule = objs[9];
    br_text = objs[10];
    cpu_clock_fn = objs[11];
    timeout_exc = objs[12];
    for (int i = 0; i < 13; i++)
        objs[i] = NULL; /* owned by the module's statics now */
    max_depth = depth;
    check_mask = check_every - 1;
    table_inside = consts[2];
    mark_table = consts[3];
    A_BARE = consts[4];
    A_RAW = consts[5];
    A_VOID = consts[6];
    A_STRUCTURE = consts[7];
    A_LINK = consts[8];
    A_END = consts[9];
    A_END_LINK = consts[10];
    A_END_BARE = end_bare;
    for (int b = 0; b < nb; b++)
        boundaries[b] = Py_NewRef(bset[b]);
    n_boundaries = nb;
    p_boundary_bit = 1u; /* _P_BOUNDARY was registered first */
    fast_nodes = check_node_slots(node_type, slot_offset);
    PyObject *p_tag = PyUnicode_FromString("p"), *pre_tag = PyUnicode_FromString("pre");
    if (p_tag == NULL || pre_tag == NULL) {
        Py_XDECREF(p_tag);
        Py_XDECREF(pre_tag);
        goto done;
    }
    p_rec = global_rec(p_tag);
    pre_rec = global_rec(pre_tag);
    Py_DECREF(p_tag);
    Py_DECREF(pre_tag);
    if (p_rec == NULL || pre_rec == NULL)
        goto done;
    it = 0;
    while (PyDict_Next(implied, &it, &key, &rules))
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(rules); i++)
            if (global_rec(PyTuple_GET_ITEM(PyTuple_GET_ITEM(rules, i), 0)) == NULL)
                goto done;
    bound = 1;
    rc = 0;
done:
    for (int i = 0; i < 13; i++)
        Py_XDECREF(objs[i]);
    Py_XDECREF(p_set);
    Py_XDECREF(implied);
    Py_DECREF(mod);
    return rc;
}

static PyObject *py_parse(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"html", "deadline", NULL};
    PyObject *html, *deadline = Py_None;
    (void)self;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "U|O:parse", kwlist, &html, &deadline))
        return NULL;
    if (!bound && bind() < 0)
        return NULL;
    return build(html, deadline);
}

static PyObject *py_force_class_call(PyObject *self, PyObject *arg)
{
    (void)self;
    int on = PyObject_IsTrue(arg);
    if (on < 0)
        return NULL;
    force_class_call = on;
    Py_RETURN_NONE;
}

static PyObject *py_node_allocation(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    if (!bound && bind() < 0)
        return NULL;
    return PyUnicode_FromString(fast_nodes && !force_class_call ? "slots" : "class call");
}

static PyMethodDef methods[] = {
    {"parse", (PyCFunction)(void (*)(void))py_parse, METH_VARARGS | METH_KEYWORDS,
     "parse(html, deadline=None) -> HtmlDocument\n\nThe tree `thresher.extract.tree._parse_python` builds; "
     "raises ExtractionTimeout past `deadline` (a cpu_clock() value)."},
    {"_force_class_call", py_force_class_call, METH_O,
     "Tests: make nodes by calling the Node class (True) or by writing their slots (False, the default)."},
    {"_node_allocation", py_node_allocation, METH_NOARGS, "How nodes are made: 'slots' or 'class call'."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "thresher.extract._ctree",
    "The tree builder of thresher.extract.tree, compiled: `parse` builds exactly the tree of the Python "
    "reference `tree._parse_python`. Optional: set THRESHER_PURE_PYTHON=1 to make `tree.parse` the reference.",
    -1, methods, NULL, NULL, NULL, NULL,
};

static PyObject **interned[] = {&s_root, &s_nodes, &s_metas, &s_links, &s_json_ld, &s_title, &s_lang, &s_strip,
                                &s_lower, &s_lang_key, &s_xml_lang_key, &s_children, &s_end, &s_text_len,
                                &s_link_len, &s_flags};
static const char *const interned_names[] = {"root", "nodes", "metas", "links", "json_ld", "title", "lang",
                                             "strip", "lower", "lang", "xml:lang", "children", "end", "text_len",
                                             "link_len", "flags"};

PyMODINIT_FUNC PyInit__ctree(void)
{
    for (size_t i = 0; i < sizeof interned / sizeof interned[0]; i++)
        if (*interned[i] == NULL && (*interned[i] = PyUnicode_InternFromString(interned_names[i])) == NULL)
            return NULL;
    if (space_text == NULL && (space_text = PyUnicode_FromString(" ")) == NULL)
        return NULL;
    if (empty_text == NULL && (empty_text = PyUnicode_FromString("")) == NULL)
        return NULL;
    if (nul_text == NULL && (nul_text = PyUnicode_FromStringAndSize("\0", 1)) == NULL)
        return NULL;
    return PyModule_Create(&module);
}
