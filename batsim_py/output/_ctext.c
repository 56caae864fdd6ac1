/* The native writer of batsim-py's largest output files: the Pajé trace's events and the rows
 * of jobs.csv, written as bytes at C speed.
 *
 * The pure-Python writers (output/paje.py, output/jobs_csv.py) are the reference: this module
 * writes the same bytes, and is used only when it was built (setup.py) and BATSIM_PY_PURE is
 * not set (output/fixed.py, `native_text`).  tests/output/test_native_writer.py compares both
 * byte for byte.
 *
 * Doubles are printed as Python's (and C's) `%f`: six decimals, rounded half to even on the
 * exact binary value, "-0.000000" for negative zero and for negatives that round to zero,
 * "inf", "-inf" and "nan" (Python prints a nan without its sign).  Below 2**64 the digits are
 * computed exactly with 128-bit integers (x = m / 2**s, so x * 10**6 = m * 10**6 / 2**s, a
 * quotient rounded half to even on its remainder); beyond, Python's own formatter
 * (PyOS_double_to_string) prints them.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#define API_VERSION 7 /* checked by output/fixed.py: a stale build is not used */

/* ------------------------------------------------------------------ growable byte buffer */

typedef struct {
    char *data;
    Py_ssize_t len;
    Py_ssize_t cap;
    int aligned;  /* data is page-aligned (posix_memalign, free): written with O_DIRECT */
} Buf;

#define ALIGN 4096  /* address, offset and size alignment of a direct write (any block size
                     * up to a page) */

static int buf_init(Buf *b, Py_ssize_t cap) {
    b->len = 0;
    b->aligned = 0;
    b->cap = cap < 256 ? 256 : cap;
    b->data = PyMem_Malloc((size_t)b->cap);
    if (b->data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* A buffer whose data starts on a page boundary, and stays there as it grows. */
static int buf_init_aligned(Buf *b, Py_ssize_t cap) {
    void *data = NULL;
    b->len = 0;
    b->aligned = 1;
    b->cap = cap < ALIGN ? ALIGN : cap;
    if (posix_memalign(&data, ALIGN, (size_t)b->cap) != 0) {
        b->data = NULL;
        PyErr_NoMemory();
        return -1;
    }
    b->data = data;
    return 0;
}

static void buf_free(Buf *b) {
    if (b->aligned)
        free(b->data);
    else
        PyMem_Free(b->data);
    b->data = NULL;
}

/* Room for `n` more bytes. */
static int buf_reserve(Buf *b, Py_ssize_t n) {
    if (b->len + n <= b->cap)
        return 0;
    Py_ssize_t cap = b->cap;
    while (b->len + n > cap)
        cap *= 2;
    char *data;
    if (b->aligned) {
        void *moved = NULL;
        data = posix_memalign(&moved, ALIGN, (size_t)cap) == 0 ? moved : NULL;
        if (data != NULL) {
            memcpy(data, b->data, (size_t)b->len);
            free(b->data);
        }
    } else {
        data = PyMem_Realloc(b->data, (size_t)cap);
    }
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->data = data;
    b->cap = cap;
    return 0;
}

static int buf_put(Buf *b, const char *s, Py_ssize_t n) {
    if (buf_reserve(b, n) < 0)
        return -1;
    memcpy(b->data + b->len, s, (size_t)n);
    b->len += n;
    return 0;
}

#define BUF_LIT(b, lit) buf_put((b), (lit), (Py_ssize_t)(sizeof(lit) - 1))

static PyObject *buf_bytes(Buf *b) {
    PyObject *out = PyBytes_FromStringAndSize(b->data, b->len);
    buf_free(b);
    return out;
}

/* ------------------------------------------------------------------ numbers */

/* Decimal digits of v at p (no terminator); returns the end. */
static char *put_u64(char *p, uint64_t v) {
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}

static int buf_i64(Buf *b, int64_t v) {
    if (buf_reserve(b, 24) < 0)
        return -1;
    char *p = b->data + b->len;
    if (v < 0) {
        *p++ = '-';
        p = put_u64(p, (uint64_t)0 - (uint64_t)v);
    } else {
        p = put_u64(p, (uint64_t)v);
    }
    b->len = p - b->data;
    return 0;
}

#define TWO64 18446744073709551616.0

/* `%f` of x, exactly as Python prints it. */
static int buf_fixed6(Buf *b, double x) {
    if (isnan(x))
        return BUF_LIT(b, "nan");
    if (buf_reserve(b, 40) < 0)
        return -1;
    char *p = b->data + b->len;
    if (signbit(x)) {
        *p++ = '-';
        x = -x;
    }
    if (isinf(x)) {
        memcpy(p, "inf", 3);
        b->len = p + 3 - b->data;
        return 0;
    }
    if (x < TWO64) {
        uint64_t ip;
        uint32_t frac;
        if (x == 0.0) {
            ip = 0;
            frac = 0;
        } else {
            uint64_t bits;
            memcpy(&bits, &x, sizeof bits);
            int exponent = (int)(bits >> 52);  /* (the sign bit is clear) */
            uint64_t m = bits & ((UINT64_C(1) << 52) - 1);
            int s;  /* x = m / 2**s exactly */
            if (exponent == 0) {
                s = 1074;  /* subnormal */
            } else {
                m |= UINT64_C(1) << 52;
                s = 1075 - exponent;
            }
            if (s <= 0) {  /* a whole number below 2**64 */
                ip = (uint64_t)x;
                frac = 0;
            } else if (s <= 64 && (m & ((UINT64_C(1) << (s - 1) << 1) - 1)) == 0) {
                ip = m >> (s - 1) >> 1;  /* a whole number (dates in whole seconds) */
                frac = 0;
            } else if (s >= 100) {
                ip = 0;  /* x * 10**6 = m * 10**6 / 2**s < 2**73 / 2**100: below one half */
                frac = 0;
            } else {
                /* q = m * 10**6 / 2**s rounded half to even on the remainder */
                unsigned __int128 n = (unsigned __int128)m * 1000000u;  /* < 2**73 */
                unsigned __int128 one = 1;
                unsigned __int128 rem = n & ((one << s) - 1);
                unsigned __int128 half = one << (s - 1);
                unsigned __int128 q = n >> s;
                if (rem > half || (rem == half && (q & 1)))
                    q += 1;
                if (s >= 9) {  /* x < 2**44: q < 2**64, a 64-bit division by a constant */
                    uint64_t q64 = (uint64_t)q;
                    ip = q64 / 1000000u;
                    frac = (uint32_t)(q64 % 1000000u);
                } else {  /* x < 2**53 (not whole): ip fits 64 bits */
                    ip = (uint64_t)(q / 1000000u);
                    frac = (uint32_t)(q % 1000000u);
                }
            }
        }
        p = put_u64(p, ip);
        *p++ = '.';
        for (int i = 5; i >= 0; i--) {
            p[i] = (char)('0' + frac % 10);
            frac /= 10;
        }
        b->len = p + 6 - b->data;
        return 0;
    }
    b->len = p - b->data;  /* (the sign is kept) */
    char *text = PyOS_double_to_string(x, 'f', 6, 0, NULL);
    if (text == NULL)
        return -1;
    int rc = buf_put(b, text, (Py_ssize_t)strlen(text));
    PyMem_Free(text);
    return rc;
}

/* str(obj) in UTF-8 (the text files' encoding); a str is taken as is. */
static int buf_str(Buf *b, PyObject *obj) {
    Py_ssize_t n;
    const char *s;
    if (PyUnicode_Check(obj)) {
        s = PyUnicode_AsUTF8AndSize(obj, &n);
        if (s == NULL)
            return -1;
        return buf_put(b, s, n);
    }
    PyObject *text = PyObject_Str(obj);
    if (text == NULL)
        return -1;
    s = PyUnicode_AsUTF8AndSize(text, &n);
    int rc = s == NULL ? -1 : buf_put(b, s, n);
    Py_DECREF(text);
    return rc;
}

/* `%d` % obj (Python's formatting when obj is not a plain int). */
static int buf_intfmt(Buf *b, PyObject *obj) {
    if (PyLong_CheckExact(obj)) {
        int overflow;
        long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
        if (!overflow && !(v == -1 && PyErr_Occurred()))
            return buf_i64(b, (int64_t)v);
        PyErr_Clear();
    }
    PyObject *fmt = PyUnicode_FromString("%d");
    if (fmt == NULL)
        return -1;
    PyObject *text = PyUnicode_Format(fmt, obj);
    Py_DECREF(fmt);
    if (text == NULL)
        return -1;
    int rc = buf_str(b, text);
    Py_DECREF(text);
    return rc;
}

/* ------------------------------------------------------------------ allocations */

/* The machines of an allocation: a range (start, step, count) or a list of ints. */
typedef struct {
    int is_range;
    int64_t start, step;
    Py_ssize_t count;
    PyObject *seq;  /* PySequence_Fast of a non-range (owned) */
} Machines;

static PyObject *str_start, *str_stop, *str_step;  /* interned at import */
/* The attributes of a jobs.csv record (output/jobs_csv.py's JobRecord) and of its job. */
static PyObject *str_job, *str_final_state, *str_starting_time, *str_alloc, *str_energy,
    *str_metadata, *str_name, *str_workload, *str_profile, *str_subtime, *str_res,
    *str_walltime, *str_id, *str_end_time;

/* The int attribute `name` of range `r`; *err set (and an exception) when it cannot be read
 * as a long long, or was set already (then nothing is asked: one can chain the calls). */
static int64_t range_attr(PyObject *r, PyObject *name, int *err) {
    if (*err)
        return 0;
    PyObject *v = PyObject_GetAttr(r, name);
    if (v == NULL) {
        *err = 1;
        return 0;
    }
    long long x = PyLong_AsLongLong(v);
    Py_DECREF(v);
    if (x == -1 && PyErr_Occurred())
        *err = 1;
    return (int64_t)x;
}

/* CPython's range object (checked at import against a known range: `range_fields_ok`), so
 * that a range's fields are read without an attribute look-up each. */
typedef struct {
    PyObject_HEAD
    PyObject *start, *stop, *step, *length;
} RangeFields;
static int range_fields_ok = 0;

static int small_int(PyObject *v, long long *out) {
    int overflow;
    *out = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow || (*out == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return 0;
    }
    return 1;
}

static int machines_open(Machines *ms, PyObject *alloc) {
    ms->seq = NULL;
    ms->is_range = 0;
    ms->start = ms->step = 0;
    ms->count = 0;
    if (PyRange_Check(alloc)) {
        if (range_fields_ok) {
            RangeFields *r = (RangeFields *)alloc;
            long long first, stride, count;
            if (small_int(r->start, &first) && small_int(r->step, &stride)
                && small_int(r->length, &count) && count >= 0 && count <= PY_SSIZE_T_MAX) {
                ms->is_range = 1;
                ms->start = first;
                ms->step = stride;
                ms->count = (Py_ssize_t)count;
                return 0;
            }
        }
        int err = 0;
        int64_t start = range_attr(alloc, str_start, &err);
        int64_t step = range_attr(alloc, str_step, &err);
        if (err)
            return -1;
        ms->is_range = 1;
        ms->start = start;
        ms->step = step;
        Py_ssize_t len = PyObject_Length(alloc);
        if (len < 0)
            return -1;
        ms->count = len;
        return 0;
    }
    ms->is_range = 0;
    ms->seq = PySequence_Fast(alloc, "an allocation must be a sequence of machine ids");
    if (ms->seq == NULL)
        return -1;
    ms->count = PySequence_Fast_GET_SIZE(ms->seq);
    return 0;
}

static void machines_close(Machines *ms) {
    Py_XDECREF(ms->seq);
    ms->seq = NULL;
}

/* Machine i of the allocation, checked against [0, n); -1 with an exception set. */
static int64_t machines_get(Machines *ms, Py_ssize_t i, int64_t n) {
    int64_t m;
    if (ms->is_range) {
        m = ms->start + (int64_t)i * ms->step;
    } else {
        PyObject *item = PySequence_Fast_GET_ITEM(ms->seq, i);
        long long v = PyLong_AsLongLong(item);
        if (v == -1 && PyErr_Occurred())
            return -1;
        m = (int64_t)v;
    }
    if (m < 0 || m >= n) {
        PyErr_Format(PyExc_IndexError, "machine id %lld out of range (0..%lld)",
                     (long long)m, (long long)(n - 1));
        return -1;
    }
    return m;
}

/* ------------------------------------------------------------------ the Pajé trace */

typedef struct {
    int64_t *items;
    Py_ssize_t len, cap;
} JobList;

typedef struct {
    PyObject_HEAD
    int64_t n;              /* machines */
    PyObject *ids;          /* list of str, by job ordinal */
    PyObject *allocs;       /* list, by job ordinal */
    PyObject *colors;       /* list of str */
    PyObject *unavailable;  /* dict: record index -> frozenset of machines to skip */
    PyObject *times, *kinds, *jobs;  /* array('d'), array('b'), array('q') */
    int64_t *shown;         /* the job each machine shows (-1: waiting) */
    char *defined;          /* a job's state value was defined */
    Py_ssize_t nb_jobs;
    int64_t nb_defined;
    JobList *others;        /* per machine: jobs sharing it with the one it shows */
    int64_t nb_others;
    /* Each machine's number as text, 8 bytes a machine (its length in numlen), so that a
     * line copies it instead of dividing; NULL on more than NUMTAB_MAX machines. */
    char *numtab;
    unsigned char *numlen;
    Buf line;               /* a record's line head and value (`record`) */
    Buf out;                /* the block `write` formats before writing it */
    int busy;               /* `write` is running (the GIL is released while it writes) */
    int no_direct;          /* a direct write was refused: `write` writes through the cache */
    long long direct_bytes; /* bytes written by direct writes so far */
} TraceEvents;

#define NUMTAB_MAX (1 << 20)  /* machines with a table of numbers (8 MB at most) */
#define WRITE_BLOCK (1 << 20) /* bytes formatted before each write(2) */
#define DIRECT_BLOCK (8 << 20) /* bytes formatted before each direct write(2) */

static void trace_dealloc(TraceEvents *self) {
    Py_XDECREF(self->ids);
    Py_XDECREF(self->allocs);
    Py_XDECREF(self->colors);
    Py_XDECREF(self->unavailable);
    Py_XDECREF(self->times);
    Py_XDECREF(self->kinds);
    Py_XDECREF(self->jobs);
    PyMem_Free(self->shown);
    PyMem_Free(self->defined);
    PyMem_Free(self->numtab);
    PyMem_Free(self->numlen);
    PyMem_Free(self->line.data);
    buf_free(&self->out);
    if (self->others != NULL) {
        for (int64_t m = 0; m < self->n; m++)
            PyMem_Free(self->others[m].items);
        PyMem_Free(self->others);
    }
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int trace_init(TraceEvents *self, PyObject *args, PyObject *kwds) {
    long long n;
    PyObject *ids, *allocs, *colors, *unavailable, *times, *kinds, *jobs;
    if (!PyArg_ParseTuple(args, "LO!O!O!O!OOO", &n, &PyList_Type, &ids, &PyList_Type, &allocs,
                          &PyList_Type, &colors, &PyDict_Type, &unavailable, &times, &kinds,
                          &jobs))
        return -1;
    if (n < 0 || PyList_GET_SIZE(colors) == 0) {
        PyErr_SetString(PyExc_ValueError, "TraceEvents: bad machine count or no colours");
        return -1;
    }
    if (self->ids != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "TraceEvents: initialised twice");
        return -1;
    }
    self->n = n;
    Py_INCREF(ids); self->ids = ids;
    Py_INCREF(allocs); self->allocs = allocs;
    Py_INCREF(colors); self->colors = colors;
    Py_INCREF(unavailable); self->unavailable = unavailable;
    Py_INCREF(times); self->times = times;
    Py_INCREF(kinds); self->kinds = kinds;
    Py_INCREF(jobs); self->jobs = jobs;
    self->nb_jobs = PyList_GET_SIZE(ids);
    self->shown = PyMem_Malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    self->defined = PyMem_Calloc((size_t)(self->nb_jobs ? self->nb_jobs : 1), 1);
    self->others = PyMem_Calloc((size_t)(n ? n : 1), sizeof(JobList));
    if (self->shown == NULL || self->defined == NULL || self->others == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (int64_t m = 0; m < n; m++)
        self->shown[m] = -1;
    self->nb_defined = 0;
    self->nb_others = 0;
    if (n <= NUMTAB_MAX) {
        self->numtab = PyMem_Malloc((size_t)(n ? n : 1) * 8);
        self->numlen = PyMem_Malloc((size_t)(n ? n : 1));
        if (self->numtab == NULL || self->numlen == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        for (int64_t m = 0; m < n; m++) {
            char *end = put_u64(self->numtab + 8 * m, (uint64_t)m);
            self->numlen[m] = (unsigned char)(end - (self->numtab + 8 * m));
        }
    }
    if (buf_init(&self->line, 512) < 0)
        return -1;
    return 0;
}

static int joblist_append(JobList *l, int64_t k) {
    if (l->len == l->cap) {
        Py_ssize_t cap = l->cap ? l->cap * 2 : 4;
        int64_t *items = PyMem_Realloc(l->items, sizeof(int64_t) * (size_t)cap);
        if (items == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        l->items = items;
        l->cap = cap;
    }
    l->items[l->len++] = k;
    return 0;
}

static void joblist_remove_at(JobList *l, Py_ssize_t i) {
    memmove(l->items + i, l->items + i + 1, sizeof(int64_t) * (size_t)(l->len - i - 1));
    l->len--;
}

/* The job's id as UTF-8 (cached in the str object by CPython). */
static const char *job_id(TraceEvents *self, int64_t k, Py_ssize_t *len) {
    if (k < 0 || k >= self->nb_jobs) {
        PyErr_SetString(PyExc_IndexError, "job ordinal out of range");
        return NULL;
    }
    PyObject *id = PyList_GET_ITEM(self->ids, k);
    if (!PyUnicode_Check(id)) {
        PyErr_SetString(PyExc_TypeError, "job ids must be str");
        return NULL;
    }
    return PyUnicode_AsUTF8AndSize(id, len);
}

/* `5 j<id> machine_state "<id>" <colour>` the first time job k is shown. */
static int define_job(TraceEvents *self, Buf *b, int64_t k) {
    if (self->defined[k])
        return 0;
    self->defined[k] = 1;
    Py_ssize_t len;
    const char *id = job_id(self, k, &len);
    if (id == NULL)
        return -1;
    PyObject *color = PyList_GET_ITEM(self->colors,
                                      self->nb_defined % PyList_GET_SIZE(self->colors));
    self->nb_defined++;
    if (BUF_LIT(b, "5 j") < 0 || buf_put(b, id, len) < 0
        || BUF_LIT(b, " machine_state \"") < 0 || buf_put(b, id, len) < 0
        || BUF_LIT(b, "\" ") < 0 || buf_str(b, color) < 0 || BUF_LIT(b, "\n") < 0)
        return -1;
    return 0;
}

/* `6 <date> machine_state m<m> ` (the value follows). */
static int state_prefix(Buf *b, const char *date, Py_ssize_t date_len, int64_t m) {
    if (buf_reserve(b, date_len + 48) < 0)
        return -1;
    char *p = b->data + b->len;
    *p++ = '6';
    *p++ = ' ';
    memcpy(p, date, (size_t)date_len);
    p += date_len;
    memcpy(p, " machine_state m", 16);
    p = put_u64(p + 16, (uint64_t)m);
    *p++ = ' ';
    b->len = p - b->data;
    return 0;
}

static int state_job(TraceEvents *self, Buf *b, const char *date, Py_ssize_t date_len,
                     int64_t m, int64_t k) {
    Py_ssize_t len;
    const char *id = job_id(self, k, &len);
    if (id == NULL || state_prefix(b, date, date_len, m) < 0)
        return -1;
    if (buf_reserve(b, len + 2) < 0)
        return -1;
    b->data[b->len++] = 'j';
    memcpy(b->data + b->len, id, (size_t)len);
    b->len += len;
    b->data[b->len++] = '\n';
    return 0;
}

/* The lines `<head><machine><value>` of machines lo, lo + step, ... (`count` of them, each
 * in [0, n): checked by the caller), where head is a record's `6 <date> machine_state m` and
 * value ` j<id>\n` or ` w\n`: three copies a line, the machine's number from the table. */
#define HEAD_COPY 48   /* bytes of a line's head copied at once (its length kept) */
#define VALUE_COPY 16  /* bytes of a line's value copied at once */
static const char WAITING[VALUE_COPY] = " w\n";  /* (padded: read VALUE_COPY bytes at a time) */

/* `head` must be readable for HEAD_COPY bytes when hlen <= HEAD_COPY, and `value` for
 * VALUE_COPY bytes when vlen <= VALUE_COPY: then each line is three copies of fixed sizes
 * (inlined moves, each line's end overwritten by the next), a third of the time of three
 * copies of the exact lengths (a million-job trace has 300 million lines). */
static int emit_lines(TraceEvents *self, Buf *b, const char *head, Py_ssize_t hlen,
                      const char *value, Py_ssize_t vlen, int64_t lo, int64_t step,
                      Py_ssize_t count) {
    if (count <= 0)
        return 0;
    if (count > (PY_SSIZE_T_MAX - b->len - 256) / (hlen + vlen + 24)) {
        PyErr_NoMemory();
        return -1;
    }
    if (buf_reserve(b, count * (hlen + vlen + 24) + HEAD_COPY + VALUE_COPY + 8) < 0)
        return -1;
    char *p = b->data + b->len;
    const char *tab = self->numtab;
    const unsigned char *lens = self->numlen;
    int64_t m = lo;
    if (tab != NULL && hlen <= HEAD_COPY && vlen <= VALUE_COPY) {
        for (Py_ssize_t i = 0; i < count; i++, m += step) {
            memcpy(p, head, HEAD_COPY);
            p += hlen;
            memcpy(p, tab + 8 * m, 8);
            p += lens[m];
            memcpy(p, value, VALUE_COPY);
            p += vlen;
        }
        b->len = p - b->data;
        return 0;
    }
    for (Py_ssize_t i = 0; i < count; i++, m += step) {
        memcpy(p, head, (size_t)hlen);
        p += hlen;
        if (tab != NULL) {  /* (8 bytes copied, its length kept: room was reserved) */
            memcpy(p, tab + 8 * m, 8);
            p += lens[m];
        } else {
            p = put_u64(p, (uint64_t)m);
        }
        memcpy(p, value, (size_t)vlen);
        p += vlen;
    }
    b->len = p - b->data;
    return 0;
}

static int record(TraceEvents *self, Buf *b, Py_ssize_t r, double t, int kind, int64_t k) {
    if (k < 0 || k >= PyList_GET_SIZE(self->allocs)) {
        PyErr_SetString(PyExc_IndexError, "job ordinal out of range");
        return -1;
    }
    /* The record's line head `6 <date> machine_state m` and, for a start, its value
     * ` j<id>\n`, made once (the date formatted once) in self->line. */
    Buf *line = &self->line;
    line->len = 0;
    if (BUF_LIT(line, "6 ") < 0 || buf_fixed6(line, t) < 0)
        return -1;
    Py_ssize_t date_len = line->len - 2;
    if (BUF_LIT(line, " machine_state m") < 0)
        return -1;
    Py_ssize_t hlen = line->len, vlen = 0;
    if (kind == 0) {
        Py_ssize_t id_len;
        const char *id = job_id(self, k, &id_len);
        if (id == NULL || BUF_LIT(line, " j") < 0 || buf_put(line, id, id_len) < 0
            || BUF_LIT(line, "\n") < 0)
            return -1;
        vlen = line->len - hlen;
    }
    const char *head = line->data, *date = line->data + 2, *value = line->data + hlen;
    Machines ms;
    if (machines_open(&ms, PyList_GET_ITEM(self->allocs, k)) < 0)
        return -1;
    int rc = -1;
    /* The common case: a contiguous allocation whose machines all wait (a start) or all show
     * this job with no other job to show next (an end, no machine skipped): its lines in one
     * go, the same lines the machine-by-machine paths below write. */
    int contiguous = ms.is_range && ms.step == 1 && ms.count > 0 && ms.start >= 0
                     && ms.count <= self->n && ms.start <= self->n - ms.count;
    if (kind == 0) {  /* start: each waiting machine shows the job */
        if (contiguous) {
            int64_t *shown = self->shown + ms.start;
            Py_ssize_t i = 0;
            while (i < ms.count && shown[i] < 0)
                i++;
            if (i == ms.count) {
                if (define_job(self, b, k) < 0
                    || emit_lines(self, b, head, hlen, value, vlen, ms.start, 1, ms.count) < 0)
                    goto done;
                for (i = 0; i < ms.count; i++)
                    shown[i] = k;
                rc = 0;
                goto done;
            }
        }
        for (Py_ssize_t i = 0; i < ms.count; i++) {
            int64_t m = machines_get(&ms, i, self->n);
            if (m < 0)
                goto done;
            if (self->shown[m] < 0) {
                self->shown[m] = k;
                if (define_job(self, b, k) < 0
                    || emit_lines(self, b, head, hlen, value, vlen, m, 1, 1) < 0)
                    goto done;
            } else {  /* compute sharing: the machine keeps showing its first job */
                if (joblist_append(&self->others[m], k) < 0)
                    goto done;
                self->nb_others++;
            }
        }
    } else if (kind == 1) {  /* end */
        PyObject *skip = NULL;  /* borrowed */
        if (PyDict_GET_SIZE(self->unavailable)) {
            PyObject *key = PyLong_FromSsize_t(r);
            if (key == NULL)
                goto done;
            skip = PyDict_GetItemWithError(self->unavailable, key);
            Py_DECREF(key);
            if (skip == NULL && PyErr_Occurred())
                goto done;
        }
        if (contiguous && skip == NULL && self->nb_others == 0) {
            int64_t *shown = self->shown + ms.start;
            Py_ssize_t i = 0;
            while (i < ms.count && shown[i] == k)
                i++;
            if (i == ms.count) {
                if (emit_lines(self, b, head, hlen, WAITING, 3, ms.start, 1, ms.count) < 0)
                    goto done;
                for (i = 0; i < ms.count; i++)
                    shown[i] = -1;
                rc = 0;
                goto done;
            }
        }
        for (Py_ssize_t i = 0; i < ms.count; i++) {
            int64_t m = machines_get(&ms, i, self->n);
            if (m < 0)
                goto done;
            JobList *rest = &self->others[m];
            if (self->shown[m] != k) {  /* a job sharing the machine, not shown: no line */
                Py_ssize_t j = 0;
                while (j < rest->len && rest->items[j] != k)
                    j++;
                if (j == rest->len) {
                    PyErr_SetString(PyExc_ValueError, "list.remove(x): x not in list");
                    goto done;
                }
                joblist_remove_at(rest, j);
                self->nb_others--;
                continue;
            }
            if (rest->len == 0) {
                self->shown[m] = -1;
                int skipped = 0;
                if (skip != NULL) {
                    PyObject *key = PyLong_FromLongLong(m);
                    if (key == NULL)
                        goto done;
                    skipped = PySequence_Contains(skip, key);
                    Py_DECREF(key);
                    if (skipped < 0)
                        goto done;
                }
                if (!skipped) {
                    if (emit_lines(self, b, head, hlen, WAITING, 3, m, 1, 1) < 0)
                        goto done;
                }
                continue;
            }
            Py_ssize_t best = 0;  /* min(rest), its first occurrence */
            for (Py_ssize_t j = 1; j < rest->len; j++)
                if (rest->items[j] < rest->items[best])
                    best = j;
            int64_t top = rest->items[best];
            joblist_remove_at(rest, best);
            self->nb_others--;
            self->shown[m] = top;
            if (define_job(self, b, top) < 0 || state_job(self, b, date, date_len, m, top) < 0)
                goto done;
        }
    } else {  /* killed: kk on the killer, km on each machine */
        Py_ssize_t len;
        const char *id = job_id(self, k, &len);
        if (id == NULL)
            goto done;
        if (BUF_LIT(b, "8 ") < 0 || buf_put(b, date, date_len) < 0
            || BUF_LIT(b, " kk k \"") < 0 || buf_put(b, id, len) < 0 || BUF_LIT(b, "\"\n") < 0)
            goto done;
        for (Py_ssize_t i = 0; i < ms.count; i++) {
            int64_t m;
            if (ms.is_range) {  /* (no bound check: no machine state is read) */
                m = ms.start + (int64_t)i * ms.step;
            } else {
                long long v = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(ms.seq, i));
                if (v == -1 && PyErr_Occurred())
                    goto done;
                m = (int64_t)v;
            }
            if (BUF_LIT(b, "8 ") < 0 || buf_put(b, date, date_len) < 0
                || BUF_LIT(b, " km m") < 0 || buf_i64(b, m) < 0 || BUF_LIT(b, " \"") < 0
                || buf_put(b, id, len) < 0 || BUF_LIT(b, "\"\n") < 0)
                goto done;
        }
    }
    rc = 0;
done:
    machines_close(&ms);
    return rc;
}

/* The three record columns (times, kinds, jobs) held for reading, checked to be of one length
 * and not already being written: their count, or -1 with an exception set and nothing held
 * (what trace_chunk and trace_write both start with). */
static Py_ssize_t records_open(TraceEvents *self, Py_ssize_t lo, Py_buffer *tv, Py_buffer *kv,
                               Py_buffer *jv) {
    if (PyObject_GetBuffer(self->times, tv, PyBUF_SIMPLE) < 0)
        return -1;
    if (PyObject_GetBuffer(self->kinds, kv, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(tv);
        return -1;
    }
    if (PyObject_GetBuffer(self->jobs, jv, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(tv);
        PyBuffer_Release(kv);
        return -1;
    }
    Py_ssize_t count = tv->len / (Py_ssize_t)sizeof(double);
    if (kv->len != count || jv->len / (Py_ssize_t)sizeof(int64_t) != count || lo < 0)
        PyErr_SetString(PyExc_ValueError, "TraceEvents: records of different lengths");
    else if (self->busy)
        PyErr_SetString(PyExc_RuntimeError, "TraceEvents: already writing");
    else
        return count;
    PyBuffer_Release(tv);
    PyBuffer_Release(kv);
    PyBuffer_Release(jv);
    return -1;
}

/* chunk(lo, limit) -> (bytes, next): the lines of the records from `lo` on, stopping after the
 * record that brings the text to `limit` bytes or more (a chunk's size stays bounded whatever
 * the jobs' widths), and the first record not written. */
static PyObject *trace_chunk(TraceEvents *self, PyObject *args) {
    Py_ssize_t lo, limit;
    if (!PyArg_ParseTuple(args, "nn", &lo, &limit))
        return NULL;
    Py_buffer tv, kv, jv;
    Py_ssize_t count = records_open(self, lo, &tv, &kv, &jv);
    if (count < 0)
        return NULL;
    PyObject *result = NULL;
    const double *times = tv.buf;
    const signed char *kinds = kv.buf;
    const int64_t *jobs = jv.buf;
    Buf b;
    if (buf_init(&b, (limit < WRITE_BLOCK ? limit : WRITE_BLOCK) + 65536) < 0)
        goto out;
    self->busy = 1;
    Py_ssize_t r = lo;
    while (r < count && b.len < limit) {
        if (record(self, &b, r, times[r], kinds[r], jobs[r]) < 0) {
            self->busy = 0;
            buf_free(&b);
            goto out;
        }
        r++;
    }
    self->busy = 0;
    PyObject *text = buf_bytes(&b);
    if (text != NULL) {
        result = Py_BuildValue("(Nn)", text, r);
    }
out:
    PyBuffer_Release(&tv);
    PyBuffer_Release(&kv);
    PyBuffer_Release(&jv);
    return result;
}

/* One write(2) of up to `n` bytes (1 GiB at most) to the file descriptor, the GIL released
 * while the kernel writes; a write interrupted by a signal runs its handler (which may raise)
 * and is tried again.  The bytes written; -1 on a failed write, its errno in *err; -2 with the
 * handler's exception set.  (write_all and direct_flush's direct writes both use it.) */
static Py_ssize_t write_once(int fd, const char *p, Py_ssize_t n, int *err) {
    for (;;) {
        Py_ssize_t w;
        int e;
        Py_BEGIN_ALLOW_THREADS
        w = write(fd, p, (size_t)(n < (1 << 30) ? n : (1 << 30)));
        e = errno;
        Py_END_ALLOW_THREADS
        if (w >= 0)
            return w;
        if (e != EINTR) {
            *err = e;
            return -1;
        }
        if (PyErr_CheckSignals() < 0)
            return -2;
    }
}

/* All of `n` bytes to the file descriptor (write_once); -1 with OSError set on a failed
 * write, or with a signal handler's exception. */
static int write_all(int fd, const char *p, Py_ssize_t n) {
    while (n > 0) {
        int err = 0;
        Py_ssize_t w = write_once(fd, p, n, &err);
        if (w == -2)
            return -1;
        if (w < 0) {
            errno = err;
            PyErr_SetFromErrno(PyExc_OSError);
            return -1;
        }
        p += w;
        n -= w;
    }
    return 0;
}

/* The bytes of `b` from `*start` on (counted in *written), to the file descriptor `fd`,
 * whose offset is that of `b`'s byte `*start` (b's first byte is at a page boundary of the
 * file, the bytes before `*start` are in it; 0 on return): the end of the file's partial page
 * through the cache, then the whole pages with O_DIRECT (each at an offset and an address
 * that are multiples of ALIGN, `b` being page-aligned), straight from `b` to the disk,
 * without a copy into the page cache; the rest (a partial page) is moved to the start of `b`
 * (the next page of the file) and left there: the caller writes it later. `*flags` is the
 * descriptor's status flags, O_DIRECT added the first time (the caller restores them).  A
 * file system that refuses O_DIRECT (EINVAL: tmpfs on older kernels, some FUSE ones) gets
 * the same bytes through the cache, from then on (self->no_direct).  0, or -1 with OSError
 * set. */
static int direct_flush(TraceEvents *self, int fd, Buf *b, Py_ssize_t *start, int *flags,
                        long long *written) {
    Py_ssize_t end = b->len - b->len % ALIGN, from = *start;
    if (end == 0)
        return 0;
    if (from > 0) {  /* (the end of the file's partial page: through the cache) */
        if (write_all(fd, b->data + from, ALIGN - from) < 0)
            return -1;
        *written += ALIGN - from;
        from = ALIGN;
    }
    *start = 0;
    const char *p = b->data + from;
    Py_ssize_t n = end - from;
    if (n > 0 && !self->no_direct && !(*flags & O_DIRECT)) {
        if (fcntl(fd, F_SETFL, *flags | O_DIRECT) == 0)
            *flags |= O_DIRECT;
        else
            self->no_direct = 1;
    }
    while (n > 0 && (*flags & O_DIRECT)) {
        int err = 0;
        Py_ssize_t w = write_once(fd, p, n, &err);
        if (w == -2)
            return -1;
        if (w < 0 && err != EINVAL) {
            errno = err;
            PyErr_SetFromErrno(PyExc_OSError);
            return -1;
        }
        if (w > 0) {
            p += w;
            n -= w;
            *written += w;
            self->direct_bytes += w;
        }
        if (w <= 0 || w % ALIGN) {  /* refused, or a partial page: the rest through the cache */
            if (fcntl(fd, F_SETFL, *flags & ~O_DIRECT) != 0) {
                PyErr_SetFromErrno(PyExc_OSError);
                return -1;
            }
            *flags &= ~O_DIRECT;
            if (w < 0)
                self->no_direct = 1;
        }
    }
    if (n > 0) {
        if (write_all(fd, p, n) < 0)
            return -1;
        *written += n;
    }
    memmove(b->data, b->data + end, (size_t)(b->len - end));
    b->len -= end;
    return 0;
}

/* write(fd, lo, limit[, direct]) -> (next, written): the lines of the records from `lo` on,
 * written to the file descriptor `fd` (at its offset) by blocks of about WRITE_BLOCK bytes
 * (or `limit` if smaller) formatted in one buffer kept from call to call (no bytes object, no
 * copy through Python), stopping after the block that brings the bytes written by this call
 * to `limit` or more; the first record not written and the bytes written.  A failed write
 * raises OSError (the file then holds part of the lines: the caller discards it).
 *
 * With `direct` (a file of gigabytes: output/paje.py), blocks of DIRECT_BLOCK bytes go to the
 * disk by direct writes (`direct_flush`): the kernel's copy of every byte into the page
 * cache is most of the CPU a 13 GB trace costs (0.5 s a GB here, against 0.05 s direct).
 * The bytes before the first page boundary and after the last one go through the cache, so
 * the file is complete up to the offset returned at every return, and the descriptor's flags
 * are what they were. */
static PyObject *trace_write(TraceEvents *self, PyObject *args) {
    int fd, direct = 0;
    Py_ssize_t lo, limit;
    if (!PyArg_ParseTuple(args, "inn|p", &fd, &lo, &limit, &direct))
        return NULL;
    Py_buffer tv, kv, jv;
    Py_ssize_t count = records_open(self, lo, &tv, &kv, &jv);
    if (count < 0)
        return NULL;
    PyObject *result = NULL;
    const double *times = tv.buf;
    const signed char *kinds = kv.buf;
    const int64_t *jobs = jv.buf;
    Buf *b = &self->out;
    Py_ssize_t from = 0;  /* (direct) b's bytes before it are in the file already */
    int flags = 0;
    if (direct && !self->no_direct) {
        off_t at = lseek(fd, 0, SEEK_CUR);
        flags = fcntl(fd, F_GETFL);
        if (at < 0 || flags < 0) {
            direct = 0;
            flags = 0;
        } else {
            from = (Py_ssize_t)(at % ALIGN);
        }
    } else {
        direct = 0;
    }
    if (b->data != NULL && b->aligned != direct)
        buf_free(b);
    if (b->data == NULL
        && (direct ? buf_init_aligned(b, DIRECT_BLOCK + 65536 + ALIGN)
                   : buf_init(b, WRITE_BLOCK + 65536)) < 0)
        goto out;
    b->len = from;  /* (direct: b's first byte at a page boundary of the file) */
    self->busy = 1;
    Py_ssize_t most = direct ? DIRECT_BLOCK : WRITE_BLOCK;
    Py_ssize_t block = limit < most ? (limit > 2 * ALIGN ? limit : 2 * ALIGN) : most;
    if (!direct && limit < most)
        block = limit > 0 ? limit : 1;
    Py_ssize_t r = lo;
    long long written = 0;
    int failed = 0;
    while (r < count) {
        if (record(self, b, r, times[r], kinds[r], jobs[r]) < 0) {
            failed = 1;
            break;
        }
        r++;
        if (b->len >= block) {
            if (direct) {
                if (direct_flush(self, fd, b, &from, &flags, &written) < 0) {
                    failed = 1;
                    break;
                }
            } else {
                if (write_all(fd, b->data, b->len) < 0) {
                    failed = 1;
                    break;
                }
                written += b->len;
                b->len = 0;
            }
            if (written >= limit)
                break;
        }
    }
    if (direct && (flags & O_DIRECT) && fcntl(fd, F_SETFL, flags & ~O_DIRECT) != 0 && !failed) {
        PyErr_SetFromErrno(PyExc_OSError);
        failed = 1;
    }
    if (!failed && b->len > from) {
        if (write_all(fd, b->data + from, b->len - from) < 0)
            failed = 1;
        else
            written += b->len - from;
    }
    b->len = 0;
    if (b->cap > 8 * most) {  /* (grown by a huge record: not kept) */
        buf_free(b);
        b->cap = 0;
    }
    self->busy = 0;
    if (!failed)
        result = Py_BuildValue("(nL)", r, written);
out:
    PyBuffer_Release(&tv);
    PyBuffer_Release(&kv);
    PyBuffer_Release(&jv);
    return result;
}

static PyMethodDef trace_methods[] = {
    {"chunk", (PyCFunction)trace_chunk, METH_VARARGS,
     "chunk(lo, limit) -> (bytes, next): the lines of records lo.. (about limit bytes)"},
    {"write", (PyCFunction)trace_write, METH_VARARGS,
     "write(fd, lo, limit[, direct]) -> (next, written): the lines of records lo.. written to "
     "the file descriptor fd (about limit bytes; direct: whole pages with O_DIRECT)"},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef trace_members[] = {
    {"direct_bytes", T_LONGLONG, offsetof(TraceEvents, direct_bytes), READONLY,
     "bytes `write` wrote by direct writes (O_DIRECT), bypassing the page cache"},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject TraceEventsType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "batsim_py.output._ctext.TraceEvents",
    .tp_basicsize = sizeof(TraceEvents),
    .tp_dealloc = (destructor)trace_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "TraceEvents(n, ids, allocs, colors, unavailable, times, kinds, jobs): the Pajé "
              "trace's events replayed from PajeTrace's records (output/paje.py)",
    .tp_methods = trace_methods,
    .tp_members = trace_members,
    .tp_init = (initproc)trace_init,
    .tp_new = PyType_GenericNew,
};

/* ------------------------------------------------------------------ recording during a run */

/* The recorders' per-job calls of a plain run (sim/machines.py's MachineStates.job_starts and
 * job_ends while it keeps its log, output/paje.py's PajeTrace.job_starts and job_ends), as C
 * callables: the same appends to the same Python containers, the same machine states
 * flipped, in the same order, without a Python frame (about a microsecond a job event in
 * Python).  Anything but their common case is handed to `fallback`, the Python method, which
 * does all of it as before; a recorder switched off (`active` false: its owner left the log,
 * or got a listener) hands everything over. */

/* 1 with [*lo, *hi) when `alloc` is a range of step 1 whose bounds fit in a long long, else 0
 * (no exception set). */
static int unit_range(PyObject *alloc, long long *lo, long long *hi) {
    long long step;
    if (!PyRange_Check(alloc))
        return 0;
    if (range_fields_ok) {
        RangeFields *r = (RangeFields *)alloc;
        return small_int(r->step, &step) && step == 1 && small_int(r->start, lo)
               && small_int(r->stop, hi);
    }
    int err = 0;
    step = range_attr(alloc, str_step, &err);
    *lo = range_attr(alloc, str_start, &err);
    *hi = range_attr(alloc, str_stop, &err);
    if (err)
        PyErr_Clear();
    return !err && step == 1;
}

static int check_range_fields(void) {
    PyObject *r = PyObject_CallFunction((PyObject *)&PyRange_Type, "iii", 3, 11, 2);
    if (r == NULL)
        return -1;
    RangeFields *f = (RangeFields *)r;
    long long a, b, c, n;
    range_fields_ok = Py_TYPE(r)->tp_basicsize == (Py_ssize_t)sizeof(RangeFields)
                      && f->start && f->stop && f->step && f->length
                      && PyLong_CheckExact(f->start) && PyLong_CheckExact(f->stop)
                      && PyLong_CheckExact(f->step) && PyLong_CheckExact(f->length)
                      && small_int(f->start, &a) && small_int(f->stop, &b)
                      && small_int(f->step, &c) && small_int(f->length, &n)
                      && a == 3 && b == 11 && c == 2 && n == 4;
    Py_DECREF(r);
    return 0;
}

/* What the two recorders below (StateLog, JobLog) begin with: their tp_new and tp_call
 * (recorder_new, recorder_tp_call) read only this. */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;  /* NULL until tp_init */
} Recorder;

/* (an object not yet initialised has no containers: it hands every call to its fallback,
 * which is NULL then: refused) */
static PyObject *recorder_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    Recorder *self = (Recorder *)type->tp_alloc(type, 0);
    if (self != NULL)
        self->vectorcall = NULL;
    return (PyObject *)self;
}

static PyObject *recorder_tp_call(PyObject *self, PyObject *args, PyObject *kwds) {
    if (((Recorder *)self)->vectorcall == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "recorder not initialised");
        return NULL;
    }
    return PyVectorcall_Call(self, args, kwds);
}

/* CPython's array.array object and its item descriptor's first fields (checked at import
 * against arrays appended to both ways: `array_fields_ok`), so that a recorder stores a value
 * in the room its array already has instead of calling the array's bound `append` (whose
 * argument parsing per value was most of a recorder's cost: f_10k, 40 of 45 M instructions). */
typedef struct {
    PyObject_VAR_HEAD
    char *ob_item;
    Py_ssize_t allocated;
    const struct { char typecode; int itemsize; } *ob_descr;
    PyObject *weakreflist;
    Py_ssize_t ob_exports;
} ArrayFields;
static PyTypeObject *array_type = NULL;
static PyMethodDef *array_append = NULL;  /* array.append's method entry */
static int array_fields_ok = 0;  /* (module attribute FAST_ARRAYS, for tests) */

/* Store `value` at the end of the array whose bound `append` is `append`, when it is one
 * ('d' a float, 'b' or 'q' an int that fits) and it has room: 1 done, 0 not (nothing set). */
static int store_in_room(PyObject *append, PyObject *value) {
    if (!array_fields_ok || !PyCFunction_CheckExact(append)
        || ((PyCFunctionObject *)append)->m_ml != array_append)
        return 0;
    PyObject *arr = PyCFunction_GET_SELF(append);
    if (arr == NULL || !Py_IS_TYPE(arr, array_type))
        return 0;
    ArrayFields *a = (ArrayFields *)arr;
    Py_ssize_t n = Py_SIZE(arr);
    if (n >= a->allocated || a->ob_item == NULL || a->ob_exports > 0)
        return 0;  /* (the array's own append grows it, or refuses: a buffer is exported) */
    char code = a->ob_descr->typecode;
    if (code == 'd' && PyFloat_CheckExact(value)) {
        ((double *)a->ob_item)[n] = PyFloat_AS_DOUBLE(value);
    } else if ((code == 'b' || code == 'q') && PyLong_CheckExact(value)) {
        int overflow;
        long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (overflow || (v == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return 0;
        }
        if (code == 'q')
            ((long long *)a->ob_item)[n] = v;
        else if (v >= -128 && v <= 127)
            ((signed char *)a->ob_item)[n] = (signed char)v;
        else
            return 0;
    } else {
        return 0;
    }
    Py_SET_SIZE(arr, n + 1);
    return 1;
}

/* `append(value)` (a bound array.append, usually: stored directly when it can be). */
static int append_one(PyObject *append, PyObject *value) {
    if (store_in_room(append, value))
        return 0;
    PyObject *done = PyObject_CallOneArg(append, value);
    if (done == NULL)
        return -1;
    Py_DECREF(done);
    return 0;
}

/* Whether arrays are as ArrayFields says: for each type code, values stored by
 * `store_in_room` read back as the array's own appends would have left them. */
static int check_array_fields(void) {
    PyObject *module = PyImport_ImportModule("array");
    if (module == NULL)
        return -1;
    PyObject *cls = PyObject_GetAttrString(module, "array");
    Py_DECREF(module);
    if (cls == NULL)
        return -1;
    int ok = PyType_Check(cls)
             && ((PyTypeObject *)cls)->tp_basicsize == (Py_ssize_t)sizeof(ArrayFields);
    const char *codes[3] = {"d", "b", "q"};
    for (int i = 0; ok && i < 3; i++) {
        PyObject *arr = PyObject_CallFunction(cls, "s", codes[i]);
        PyObject *append = arr ? PyObject_GetAttrString(arr, "append") : NULL;
        PyObject *value = i == 0 ? PyFloat_FromDouble(2.5) : PyLong_FromLong(i == 1 ? -7 : 1L << 40);
        PyObject *back = NULL;
        if (arr == NULL || append == NULL || value == NULL) {
            Py_XDECREF(arr); Py_XDECREF(append); Py_XDECREF(value);
            Py_DECREF(cls);
            return -1;
        }
        ok = PyCFunction_CheckExact(append) && PyCFunction_GET_SELF(append) == arr
             && ((ArrayFields *)arr)->ob_descr->typecode == codes[i][0]
             && ((ArrayFields *)arr)->ob_descr->itemsize
                == (i == 0 ? (int)sizeof(double) : i == 1 ? 1 : (int)sizeof(long long));
        if (ok) {
            array_type = (PyTypeObject *)cls;
            array_append = ((PyCFunctionObject *)append)->m_ml;
            array_fields_ok = 1;
            PyObject *done = PyObject_CallOneArg(append, value);  /* (room for more) */
            ok = done != NULL;
            Py_XDECREF(done);
            ok = ok && store_in_room(append, value) && PySequence_Size(arr) == 2
                 && (back = PySequence_GetItem(arr, 1)) != NULL
                 && PyObject_RichCompareBool(back, value, Py_EQ) == 1;
            Py_XDECREF(back);
            array_fields_ok = 0;
        }
        PyErr_Clear();
        Py_DECREF(arr); Py_DECREF(append); Py_DECREF(value);
    }
    array_fields_ok = ok;
    if (!ok) {
        array_type = NULL;
        array_append = NULL;
        Py_DECREF(cls);
    }  /* (else the reference to array.array is kept for good) */
    return 0;
}

/* StateLog(state, from, to, append_date, log, end, fallback): called (alloc, now), sets the
 * machines of a range of step 1 in `state` (a bytearray) from `from` to `to` when every one
 * of them is in `from`, then appends now (an end: -(now + 0.0)) by `append_date` and alloc
 * to `log`; anything else is `fallback(alloc, now)`. */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *state, *append_date, *log, *fallback;
    int from, to, end, active;
} StateLog;

static PyObject *statelog_call(StateLog *self, PyObject *const *args, size_t nargsf,
                               PyObject *kwnames) {
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    long long lo, hi;
    if (!self->active || nargs != 2 || kwnames != NULL || !PyByteArray_CheckExact(self->state)
        || !unit_range(args[0], &lo, &hi) || !(0 <= lo && lo < hi)
        || hi > PyByteArray_GET_SIZE(self->state))
        return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
    unsigned char *state = (unsigned char *)PyByteArray_AS_STRING(self->state);
    for (long long m = lo; m < hi; m++)
        if (state[m] != self->from)
            return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
    memset(state + lo, self->to, (size_t)(hi - lo));
    PyObject *date = args[1];
    if (self->end) {
        double now = PyFloat_CheckExact(date) ? PyFloat_AS_DOUBLE(date) : PyFloat_AsDouble(date);
        if (now == -1.0 && PyErr_Occurred())
            return NULL;
        date = PyFloat_FromDouble(-(now + 0.0));
        if (date == NULL)
            return NULL;
    } else {
        Py_INCREF(date);
    }
    int rc = append_one(self->append_date, date);
    Py_DECREF(date);
    if (rc < 0)
        return NULL;
    if (PyList_Append(self->log, args[0]) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static int statelog_init(StateLog *self, PyObject *args, PyObject *kwds) {
    PyObject *state, *append_date, *log, *fallback;
    int from, to, end;
    if (!PyArg_ParseTuple(args, "O!iiOO!pO", &PyByteArray_Type, &state, &from, &to,
                          &append_date, &PyList_Type, &log, &end, &fallback))
        return -1;
    if (from < 0 || from > 255 || to < 0 || to > 255) {
        PyErr_SetString(PyExc_ValueError, "StateLog: states are bytes");
        return -1;
    }
    Py_INCREF(state); Py_XSETREF(self->state, state);
    Py_INCREF(append_date); Py_XSETREF(self->append_date, append_date);
    Py_INCREF(log); Py_XSETREF(self->log, log);
    Py_INCREF(fallback); Py_XSETREF(self->fallback, fallback);
    self->from = from;
    self->to = to;
    self->end = end;
    self->active = 1;
    self->vectorcall = (vectorcallfunc)statelog_call;
    return 0;
}

static int statelog_traverse(StateLog *self, visitproc visit, void *arg) {
    Py_VISIT(self->state);
    Py_VISIT(self->append_date);
    Py_VISIT(self->log);
    Py_VISIT(self->fallback);
    return 0;
}

static int statelog_clear(StateLog *self) {
    Py_CLEAR(self->state);
    Py_CLEAR(self->append_date);
    Py_CLEAR(self->log);
    Py_CLEAR(self->fallback);
    self->active = 0;
    return 0;
}

static void statelog_dealloc(StateLog *self) {
    PyObject_GC_UnTrack(self);
    statelog_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

_Static_assert(offsetof(StateLog, vectorcall) == offsetof(Recorder, vectorcall),
               "StateLog begins as a Recorder");

static PyMemberDef statelog_members[] = {
    {"active", T_INT, offsetof(StateLog, active), 0,
     "false: every call goes to the fallback (the owner keeps its books itself)"},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject StateLogType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "batsim_py.output._ctext.StateLog",
    .tp_basicsize = sizeof(StateLog),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "A machine-state log's job start or end (sim/machines.py), called (alloc, now)",
    .tp_vectorcall_offset = offsetof(StateLog, vectorcall),
    .tp_call = recorder_tp_call,
    .tp_traverse = (traverseproc)statelog_traverse,
    .tp_clear = (inquiry)statelog_clear,
    .tp_dealloc = (destructor)statelog_dealloc,
    .tp_members = statelog_members,
    .tp_init = (initproc)statelog_init,
    .tp_new = recorder_new,
};

/* JobLog(end, ordinal, job_ids, allocs, append_time, append_kind, append_job, fallback): the
 * Pajé recorder's job start, called (job_id, alloc, now): ordinal[job_id] = k = len(job_ids),
 * job_ids and allocs appended, then now, 0 and k by the three appends (output/paje.py's
 * PajeTrace.job_starts); or its job end, called (job_id, alloc, now[, unavailable]): now, 1
 * and ordinal.pop(job_id) appended; with machines `unavailable`, `fallback(...)`. */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *ordinal, *job_ids, *allocs, *append_time, *append_kind, *append_job, *fallback;
    PyObject *kind;  /* the int appended by append_kind */
    int end, active;
} JobLog;

static PyObject *joblog_call(JobLog *self, PyObject *const *args, size_t nargsf,
                             PyObject *kwnames) {
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (!self->active || kwnames != NULL || nargs < 3 || nargs > (self->end ? 4 : 3))
        return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
    if (nargs == 4) {
        int busy = PyObject_IsTrue(args[3]);
        if (busy < 0)
            return NULL;
        if (busy)
            return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
    }
    PyObject *job_id = args[0];
    if (!self->end) {
        PyObject *k = PyLong_FromSsize_t(PyList_GET_SIZE(self->job_ids));
        if (k == NULL)
            return NULL;
        int rc = PyDict_SetItem(self->ordinal, job_id, k) < 0
                 || PyList_Append(self->job_ids, job_id) < 0
                 || PyList_Append(self->allocs, args[1]) < 0
                 || append_one(self->append_time, args[2]) < 0
                 || append_one(self->append_kind, self->kind) < 0
                 || append_one(self->append_job, k) < 0;
        Py_DECREF(k);
        if (rc)
            return NULL;
        Py_RETURN_NONE;
    }
    if (append_one(self->append_time, args[2]) < 0
        || append_one(self->append_kind, self->kind) < 0)
        return NULL;
    PyObject *k = PyDict_GetItemWithError(self->ordinal, job_id);  /* (borrowed) */
    if (k == NULL) {
        if (!PyErr_Occurred()) {  /* (as dict.pop: KeyError(job_id)) */
            PyObject *key = PyTuple_Pack(1, job_id);
            if (key != NULL) {
                PyErr_SetObject(PyExc_KeyError, key);
                Py_DECREF(key);
            }
        }
        return NULL;
    }
    Py_INCREF(k);
    int rc = PyDict_DelItem(self->ordinal, job_id) < 0 || append_one(self->append_job, k) < 0;
    Py_DECREF(k);
    if (rc)
        return NULL;
    Py_RETURN_NONE;
}

static int joblog_init(JobLog *self, PyObject *args, PyObject *kwds) {
    int end;
    PyObject *o[7];
    if (!PyArg_ParseTuple(args, "pO!O!O!OOOO", &end, &PyDict_Type, &o[0], &PyList_Type, &o[1],
                          &PyList_Type, &o[2], &o[3], &o[4], &o[5], &o[6]))
        return -1;
    PyObject *kind = PyLong_FromLong(end ? 1 : 0);
    if (kind == NULL)
        return -1;
    PyObject **slots[7] = {&self->ordinal, &self->job_ids, &self->allocs, &self->append_time,
                           &self->append_kind, &self->append_job, &self->fallback};
    for (int i = 0; i < 7; i++) {
        Py_INCREF(o[i]);
        Py_XSETREF(*slots[i], o[i]);
    }
    Py_XSETREF(self->kind, kind);
    self->end = end;
    self->active = 1;
    self->vectorcall = (vectorcallfunc)joblog_call;
    return 0;
}

static int joblog_traverse(JobLog *self, visitproc visit, void *arg) {
    Py_VISIT(self->ordinal);
    Py_VISIT(self->job_ids);
    Py_VISIT(self->allocs);
    Py_VISIT(self->append_time);
    Py_VISIT(self->append_kind);
    Py_VISIT(self->append_job);
    Py_VISIT(self->fallback);
    Py_VISIT(self->kind);
    return 0;
}

static int joblog_clear(JobLog *self) {
    Py_CLEAR(self->ordinal);
    Py_CLEAR(self->job_ids);
    Py_CLEAR(self->allocs);
    Py_CLEAR(self->append_time);
    Py_CLEAR(self->append_kind);
    Py_CLEAR(self->append_job);
    Py_CLEAR(self->fallback);
    Py_CLEAR(self->kind);
    self->active = 0;
    return 0;
}

static void joblog_dealloc(JobLog *self) {
    PyObject_GC_UnTrack(self);
    joblog_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

_Static_assert(offsetof(JobLog, vectorcall) == offsetof(Recorder, vectorcall),
               "JobLog begins as a Recorder");

static PyMemberDef joblog_members[] = {
    {"active", T_INT, offsetof(JobLog, active), 0,
     "false: every call goes to the fallback"},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject JobLogType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "batsim_py.output._ctext.JobLog",
    .tp_basicsize = sizeof(JobLog),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "The Pajé recorder's job start or end (output/paje.py)",
    .tp_vectorcall_offset = offsetof(JobLog, vectorcall),
    .tp_call = recorder_tp_call,
    .tp_traverse = (traverseproc)joblog_traverse,
    .tp_clear = (inquiry)joblog_clear,
    .tp_dealloc = (destructor)joblog_dealloc,
    .tp_members = joblog_members,
    .tp_init = (initproc)joblog_init,
    .tp_new = recorder_new,
};

/* ------------------------------------------------------------------ jobs.csv */

/* A column of doubles: a list of numbers (taken as float() would) or a float64 buffer. */
typedef struct {
    PyObject *list;  /* borrowed */
    int has_view;
    Py_buffer view;
    const double *data;
} Column;

static int column_open(Column *c, PyObject *obj, Py_ssize_t n) {
    c->has_view = 0;
    c->list = NULL;
    if (PyList_Check(obj)) {
        if (PyList_GET_SIZE(obj) != n)
            goto bad;
        c->list = obj;
        return 0;
    }
    if (PyObject_GetBuffer(obj, &c->view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return -1;
    c->has_view = 1;
    const char *fmt = c->view.format ? c->view.format : "B";
    if (c->view.itemsize != sizeof(double) || (strcmp(fmt, "d") != 0 && strcmp(fmt, "<d") != 0
                                               && strcmp(fmt, "=d") != 0)
        || c->view.len != n * (Py_ssize_t)sizeof(double))
        goto bad;
    c->data = c->view.buf;
    return 0;
bad:
    if (c->has_view)
        PyBuffer_Release(&c->view);
    c->has_view = 0;
    PyErr_SetString(PyExc_ValueError, "jobs_rows: a column is not n numbers");
    return -1;
}

static void column_close(Column *c) {
    if (c->has_view)
        PyBuffer_Release(&c->view);
    c->has_view = 0;
}

static int column_fixed6(Buf *b, Column *c, Py_ssize_t i) {
    if (c->list == NULL)
        return buf_fixed6(b, c->data[i]);
    PyObject *item = PyList_GET_ITEM(c->list, i);
    double x = PyFloat_CheckExact(item) ? PyFloat_AS_DOUBLE(item) : PyFloat_AsDouble(item);
    if (x == -1.0 && PyErr_Occurred())
        return -1;
    return buf_fixed6(b, x);
}

static PyObject *list_item(PyObject *list, Py_ssize_t i) {
    return PyList_GET_ITEM(list, i);
}

/* jobs_rows(names, workloads, profiles, res, states, allocs, energies, metadata, format_alloc,
 *           doubles) -> bytes
 * The rows of jobs that ran: `name,workload,profile,%f,%d,%f,<success>,<state>,%f x6,<alloc>,
 * <energy>,"<metadata>"`.  Text columns: lists of str; res: list of int; states: the final
 * states; allocs: ranges (contiguous ones are written here) or anything `format_alloc`
 * formats; energies: None (every row -1.000000) or a list of str/None; doubles: a tuple of 8
 * columns (subtime, walltime, start: lists of numbers; runtime, finish, waiting, turnaround,
 * stretch: float64 arrays). */
static PyObject *jobs_rows(PyObject *module, PyObject *args) {
    PyObject *names, *workloads, *profiles, *res, *states, *allocs, *energies, *metadata;
    PyObject *format_alloc, *doubles;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!O!OO!OO!", &PyList_Type, &names, &PyList_Type,
                          &workloads, &PyList_Type, &profiles, &PyList_Type, &res,
                          &PyList_Type, &states, &PyList_Type, &allocs, &energies,
                          &PyList_Type, &metadata, &format_alloc, &PyTuple_Type, &doubles))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(names);
    if (PyList_GET_SIZE(workloads) != n || PyList_GET_SIZE(profiles) != n
        || PyList_GET_SIZE(res) != n || PyList_GET_SIZE(states) != n
        || PyList_GET_SIZE(allocs) != n || PyList_GET_SIZE(metadata) != n
        || (energies != Py_None && (!PyList_Check(energies) || PyList_GET_SIZE(energies) != n))
        || PyTuple_GET_SIZE(doubles) != 8) {
        PyErr_SetString(PyExc_ValueError, "jobs_rows: columns of different lengths");
        return NULL;
    }
    Column cols[8];
    int opened = 0;
    PyObject *result = NULL;
    Buf b;
    b.data = NULL;
    for (; opened < 8; opened++)
        if (column_open(&cols[opened], PyTuple_GET_ITEM(doubles, opened), n) < 0)
            goto out;
    if (buf_init(&b, n * 160 + 1024) < 0)
        goto out;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *state = list_item(states, i);
        int success = PyUnicode_Check(state)
                      && PyUnicode_CompareWithASCIIString(state, "COMPLETED_SUCCESSFULLY") == 0;
        if (buf_str(&b, list_item(names, i)) < 0 || BUF_LIT(&b, ",") < 0
            || buf_str(&b, list_item(workloads, i)) < 0 || BUF_LIT(&b, ",") < 0
            || buf_str(&b, list_item(profiles, i)) < 0 || BUF_LIT(&b, ",") < 0
            || column_fixed6(&b, &cols[0], i) < 0 || BUF_LIT(&b, ",") < 0
            || buf_intfmt(&b, list_item(res, i)) < 0 || BUF_LIT(&b, ",") < 0
            || column_fixed6(&b, &cols[1], i) < 0
            || (success ? BUF_LIT(&b, ",1,") : BUF_LIT(&b, ",0,")) < 0
            || buf_str(&b, state) < 0)
            goto fail;
        for (int c = 2; c < 8; c++)
            if (BUF_LIT(&b, ",") < 0 || column_fixed6(&b, &cols[c], i) < 0)
                goto fail;
        if (BUF_LIT(&b, ",") < 0)
            goto fail;
        PyObject *alloc = list_item(allocs, i);
        int done = 0;
        if (PyRange_Check(alloc)) {
            int err = 0;
            int64_t start = range_attr(alloc, str_start, &err);
            int64_t stop = range_attr(alloc, str_stop, &err);
            int64_t step = range_attr(alloc, str_step, &err);
            if (err)
                goto fail;
            if (step == 1 && stop > start) {
                if (buf_i64(&b, start) < 0)
                    goto fail;
                if (stop - start > 1 && (BUF_LIT(&b, "-") < 0 || buf_i64(&b, stop - 1) < 0))
                    goto fail;
                done = 1;
            }
        }
        if (!done) {
            PyObject *text = PyObject_CallOneArg(format_alloc, alloc);
            if (text == NULL)
                goto fail;
            int rc = buf_str(&b, text);
            Py_DECREF(text);
            if (rc < 0)
                goto fail;
        }
        if (BUF_LIT(&b, ",") < 0)
            goto fail;
        PyObject *energy = energies == Py_None ? Py_None : list_item(energies, i);
        if (energy == Py_None ? BUF_LIT(&b, "-1.000000") < 0 : buf_str(&b, energy) < 0)
            goto fail;
        if (BUF_LIT(&b, ",\"") < 0 || buf_str(&b, list_item(metadata, i)) < 0
            || BUF_LIT(&b, "\"\n") < 0)
            goto fail;
    }
    result = buf_bytes(&b);
    goto out;
fail:
    buf_free(&b);
out:
    for (int c = 0; c < opened; c++)
        column_close(&cols[c]);
    return result;
}

/* getattr(obj, name) for the records' and jobs' attributes (`name`: one of the interned
 * str_* above, alive as long as the module): a slot (a member descriptor, what a dataclass
 * with slots=True has) of a type with the generic getattr is read at its offset, the offset
 * cached per type and name (valid while the type's version tag is: a type changed or freed
 * gets a new tag), instead of a type look-up and a descriptor call per read; anything else
 * (a property, a type with its own getattr, an empty slot) is PyObject_GetAttr. */
typedef struct {
    PyTypeObject *type;
    unsigned int version;
    PyObject *name;
    Py_ssize_t offset;  /* -1: not a plain slot */
} SlotEntry;
static SlotEntry slot_cache[64];

static PyObject *get_attr(PyObject *obj, PyObject *name) {
    PyTypeObject *tp = Py_TYPE(obj);
    if (tp->tp_getattro == PyObject_GenericGetAttr
        && (tp->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG)) {
        SlotEntry *e = &slot_cache[((((size_t)tp) >> 4) ^ (((size_t)name) >> 4) * 31) & 63];
        if (e->type != tp || e->version != tp->tp_version_tag || e->name != name) {
            PyObject *d = _PyType_Lookup(tp, name);  /* (borrowed) */
            e->type = NULL;
            e->offset = -1;
            if (d != NULL && Py_IS_TYPE(d, &PyMemberDescr_Type)
                && PyObject_TypeCheck(obj, PyDescr_TYPE(d))) {
                PyMemberDef *m = ((PyMemberDescrObject *)d)->d_member;
                if (m->type == T_OBJECT_EX && !(m->flags & PY_AUDIT_READ))
                    e->offset = m->offset;
            }
            if (tp->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG) {
                e->type = tp;
                e->version = tp->tp_version_tag;
                e->name = name;
            }
        }
        if (e->offset >= 0) {
            PyObject *v = *(PyObject **)((char *)obj + e->offset);
            if (v != NULL) {
                Py_INCREF(v);
                return v;
            }
        }
    }
    return PyObject_GetAttr(obj, name);
}

/* A text column's value as UTF-8, or NULL with *plain = 0 when it is not a str or holds a
 * character the CSV standard quotes (`,` `"` CR LF: output/jobs_csv.py's csv_text). */
static const char *plain_text(PyObject *obj, Py_ssize_t *len, int *plain) {
    if (!PyUnicode_Check(obj)) {
        *plain = 0;
        return NULL;
    }
    const char *s = PyUnicode_AsUTF8AndSize(obj, len);
    if (s == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < *len; i++) {
        char c = s[i];
        if (c == ',' || c == '"' || c == '\r' || c == '\n') {
            *plain = 0;
            return NULL;
        }
    }
    return s;
}

/* One row of `jobs_rows_of` (the attributes of `rec` read here); 1 when the row needs the
 * Python path (a rejected job, a text column to quote), 0 when written, -1 on an error. */
static int record_row(Buf *b, PyObject *rec, Column *cols, Py_ssize_t i,
                      PyObject *format_alloc, PyObject *energy_text, PyObject *name_slot) {
    PyObject *job = NULL, *state = NULL, *v = NULL;
    int rc = -1;
    const char *text[3];
    Py_ssize_t lens[3];
    PyObject *texts[3] = {NULL, NULL, NULL};
    static PyObject **const names[3] = {&str_name, &str_workload, &str_profile};
    job = get_attr(rec, str_job);
    if (job == NULL)
        goto out;
    state = get_attr(rec, str_final_state);
    if (state == NULL)
        goto out;
    if (!PyUnicode_Check(state) || PyUnicode_CompareWithASCIIString(state, "REJECTED") == 0) {
        rc = 1;
        goto out;
    }
    for (int c = 2; c >= 0; c--) {  /* (the name last: it may be cut from the id) */
        int plain = 1;
        if (c == 0 && name_slot != NULL && PyObject_TypeCheck(job, PyDescr_TYPE(name_slot))) {
            /* The name's slot read directly (workload/model.py's Job: None when the name is
             * the id's end, `workload!name`: then cut from the id's UTF-8 here, without
             * the property's call), else the name's own text. */
            texts[0] = Py_TYPE(name_slot)->tp_descr_get(name_slot, job,
                                                         (PyObject *)Py_TYPE(job));
            if (texts[0] == NULL)
                goto out;
            if (texts[0] == Py_None) {
                Py_ssize_t id_len;
                const char *id;
                Py_DECREF(texts[0]);
                texts[0] = get_attr(job, str_id);  /* (kept: holds the UTF-8) */
                if (texts[0] == NULL)
                    goto out;
                if (!PyUnicode_Check(texts[0])) {
                    rc = 1;
                    goto out;
                }
                id = PyUnicode_AsUTF8AndSize(texts[0], &id_len);
                if (id == NULL)
                    goto out;
                if (id_len <= lens[1] || id[lens[1]] != '!' || memcmp(id, text[1], lens[1])) {
                    /* (not `workload!name`: the name as the job gives it) */
                    Py_SETREF(texts[0], get_attr(job, str_name));
                    goto read_text;
                }
                text[0] = id + lens[1] + 1;
                lens[0] = id_len - lens[1] - 1;
                for (Py_ssize_t j = 0; j < lens[0]; j++) {
                    char ch = text[0][j];
                    if (ch == ',' || ch == '"' || ch == '\r' || ch == '\n') {
                        rc = 1;
                        goto out;
                    }
                }
                continue;
            }
        } else {
            texts[c] = get_attr(job, *names[c]);
        }
    read_text:
        if (texts[c] == NULL)
            goto out;
        text[c] = plain_text(texts[c], &lens[c], &plain);
        if (!plain) {
            rc = 1;
            goto out;
        }
        if (text[c] == NULL)
            goto out;
    }
    for (int c = 0; c < 3; c++)
        if (buf_put(b, text[c], lens[c]) < 0 || BUF_LIT(b, ",") < 0)
            goto out;
#define FLOAT_ATTR(obj, attr)                                                     \
    do {                                                                          \
        v = get_attr((obj), (attr));                                      \
        if (v == NULL)                                                            \
            goto out;                                                             \
        double x = PyFloat_CheckExact(v) ? PyFloat_AS_DOUBLE(v) : PyFloat_AsDouble(v); \
        if (x == -1.0 && PyErr_Occurred())                                        \
            goto out;                                                             \
        Py_CLEAR(v);                                                              \
        if (buf_fixed6(b, x) < 0)                                                 \
            goto out;                                                             \
    } while (0)
    FLOAT_ATTR(job, str_subtime);
    if (BUF_LIT(b, ",") < 0)
        goto out;
    v = get_attr(job, str_res);
    if (v == NULL || buf_intfmt(b, v) < 0)
        goto out;
    Py_CLEAR(v);
    if (BUF_LIT(b, ",") < 0)
        goto out;
    FLOAT_ATTR(job, str_walltime);
    int success = PyUnicode_CompareWithASCIIString(state, "COMPLETED_SUCCESSFULLY") == 0;
    if ((success ? BUF_LIT(b, ",1,") : BUF_LIT(b, ",0,")) < 0 || buf_str(b, state) < 0
        || BUF_LIT(b, ",") < 0)
        goto out;
    FLOAT_ATTR(rec, str_starting_time);
#undef FLOAT_ATTR
    for (int c = 0; c < 5; c++)
        if (BUF_LIT(b, ",") < 0 || column_fixed6(b, &cols[c], i) < 0)
            goto out;
    if (BUF_LIT(b, ",") < 0)
        goto out;
    v = get_attr(rec, str_alloc);
    if (v == NULL)
        goto out;
    int done = 0;
    long long start, stop;
    if (unit_range(v, &start, &stop) && stop > start) {
        if (buf_i64(b, start) < 0)
            goto out;
        if (stop - start > 1 && (BUF_LIT(b, "-") < 0 || buf_i64(b, stop - 1) < 0))
            goto out;
        done = 1;
    }
    if (!done) {
        PyObject *alloc_text = PyObject_CallOneArg(format_alloc, v);
        if (alloc_text == NULL)
            goto out;
        int r = buf_str(b, alloc_text);
        Py_DECREF(alloc_text);
        if (r < 0)
            goto out;
    }
    Py_CLEAR(v);
    if (BUF_LIT(b, ",") < 0)
        goto out;
    v = get_attr(rec, str_energy);
    if (v == NULL)
        goto out;
    if (v == Py_None) {
        if (BUF_LIT(b, "-1.000000") < 0)
            goto out;
    } else {
        PyObject *joules = PyObject_CallOneArg(energy_text, v);
        if (joules == NULL)
            goto out;
        int r = buf_str(b, joules);
        Py_DECREF(joules);
        if (r < 0)
            goto out;
    }
    Py_CLEAR(v);
    v = get_attr(rec, str_metadata);
    if (v == NULL || BUF_LIT(b, ",\"") < 0 || buf_str(b, v) < 0 || BUF_LIT(b, "\"\n") < 0)
        goto out;
    rc = 0;
out:
    Py_XDECREF(job);
    Py_XDECREF(state);
    Py_XDECREF(v);
    for (int c = 0; c < 3; c++)
        Py_XDECREF(texts[c]);
    return rc;
}

/* jobs_rows_of(records, doubles, format_alloc, energy_text[, name_slot]) -> bytes or None
 * The rows `jobs_rows` writes, its columns read here from the records themselves (JobRecord:
 * job, final_state, starting_time, alloc, consumed_energy, metadata; the job's name,
 * workload, profile, subtime, res, walltime), but for `doubles`, a tuple of 5 float64 columns
 * (runtime, finish, waiting, turnaround, stretch), and the texts of non-contiguous
 * allocations and of energies (`format_alloc`, `energy_text`).  None when a record needs
 * output/jobs_csv.py's other paths: a rejected job, a text column needing CSV quotes.
 * `name_slot`: the descriptor of the jobs' name slot (workload/model.py's `_NAME_SLOT`), read
 * directly instead of the `name` property, or None (the property). */
static PyObject *jobs_rows_of(PyObject *module, PyObject *args) {
    PyObject *records, *doubles, *format_alloc, *energy_text, *name_slot = Py_None;
    if (!PyArg_ParseTuple(args, "O!O!OO|O", &PyList_Type, &records, &PyTuple_Type, &doubles,
                          &format_alloc, &energy_text, &name_slot))
        return NULL;
    if (name_slot == Py_None) {
        name_slot = NULL;
    } else if (!PyObject_TypeCheck(name_slot, &PyMemberDescr_Type)) {
        PyErr_SetString(PyExc_TypeError, "jobs_rows_of: name_slot must be a slot's descriptor");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(records);
    if (PyTuple_GET_SIZE(doubles) != 5) {
        PyErr_SetString(PyExc_ValueError, "jobs_rows_of: 5 columns of doubles expected");
        return NULL;
    }
    Column cols[5];
    int opened = 0;
    PyObject *result = NULL;
    Buf b;
    b.data = NULL;
    for (; opened < 5; opened++)
        if (column_open(&cols[opened], PyTuple_GET_ITEM(doubles, opened), n) < 0)
            goto out;
    if (buf_init(&b, n * 160 + 1024) < 0)
        goto out;
    for (Py_ssize_t i = 0; i < n; i++) {
        int rc = record_row(&b, PyList_GET_ITEM(records, i), cols, i, format_alloc,
                            energy_text, name_slot);
        if (rc != 0) {
            buf_free(&b);
            if (rc > 0) {
                Py_INCREF(Py_None);
                result = Py_None;
            }
            goto out;
        }
    }
    result = buf_bytes(&b);
out:
    for (int c = 0; c < opened; c++)
        column_close(&cols[c]);
    return result;
}

/* record_doubles(records, start, end, subtime): each record's starting_time, end_time and
 * its job's subtime, as float() takes them, into three writable float64 buffers of one value
 * per record (output/jobs_csv.py's `compute_times`: one C pass instead of three maps). */
static PyObject *record_doubles(PyObject *module, PyObject *args) {
    PyObject *records, *outs[3];
    if (!PyArg_ParseTuple(args, "O!OOO", &PyList_Type, &records, &outs[0], &outs[1], &outs[2]))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(records);
    Py_buffer views[3];
    int held = 0;
    PyObject *result = NULL;
    for (; held < 3; held++) {
        if (PyObject_GetBuffer(outs[held], &views[held],
                               PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) < 0)
            goto out;
        const char *fmt = views[held].format ? views[held].format : "B";
        if (views[held].itemsize != sizeof(double)
            || (strcmp(fmt, "d") != 0 && strcmp(fmt, "<d") != 0 && strcmp(fmt, "=d") != 0)
            || views[held].len != n * (Py_ssize_t)sizeof(double)) {
            PyBuffer_Release(&views[held]);
            PyErr_SetString(PyExc_ValueError, "record_doubles: buffers of n float64 expected");
            goto out;
        }
    }
    double *start = views[0].buf, *end = views[1].buf, *sub = views[2].buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *rec = PyList_GET_ITEM(records, i);
        PyObject *objs[3] = {get_attr(rec, str_starting_time),
                             get_attr(rec, str_end_time), NULL};
        PyObject *job = get_attr(rec, str_job);
        if (job != NULL) {
            objs[2] = get_attr(job, str_subtime);
            Py_DECREF(job);
        }
        double x[3];
        int bad = 0;
        for (int c = 0; c < 3; c++) {
            if (objs[c] == NULL) {
                bad = 1;
                continue;
            }
            x[c] = PyFloat_CheckExact(objs[c]) ? PyFloat_AS_DOUBLE(objs[c])
                                                : PyFloat_AsDouble(objs[c]);
            if (x[c] == -1.0 && PyErr_Occurred())
                bad = 1;
            Py_DECREF(objs[c]);
        }
        if (bad)
            goto out;
        start[i] = x[0];
        end[i] = x[1];
        sub[i] = x[2];
    }
    Py_INCREF(Py_None);
    result = Py_None;
out:
    for (int c = 0; c < held; c++)
        PyBuffer_Release(&views[c]);
    return result;
}

/* `%g` of x, exactly as Python prints it (six significant digits, correctly rounded half to
 * even on the exact binary value; fixed notation from 10**-4 to below 10**6 and scientific
 * beyond, trailing zeros and a bare point dropped).  Computed here for 1 <= |x| < 2**64
 * (every date but the first second's): a whole |x| below 10**6 is the integer it is, the
 * others are rounded with integers (x = m / 2**s exactly); below 1, beyond 2**64, nan and
 * inf, Python's own formatter (PyOS_double_to_string) prints them. */
static const double POW10[20] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
                                 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19};

static int buf_g6(Buf *b, double x) {
    double ax = fabs(x);
    if (ax < 1e6 && ax == floor(ax)) {  /* (not nan: a comparison with nan is false) */
        if (buf_reserve(b, 24) < 0)
            return -1;
        char *p = b->data + b->len;
        if (signbit(x))
            *p++ = '-';
        p = put_u64(p, (uint64_t)ax);
        b->len = p - b->data;
        return 0;
    }
    if (!(ax >= 1.0 && ax < TWO64)) {
        char *text = PyOS_double_to_string(x, 'g', 6, 0, NULL);
        if (text == NULL)
            return -1;
        int rc = buf_put(b, text, (Py_ssize_t)strlen(text));
        PyMem_Free(text);
        return rc;
    }
    int e = 0;  /* 10**e <= ax < 10**(e + 1) (powers of ten exact as doubles up to 1e22) */
    while (e < 19 && ax >= POW10[e + 1])
        e++;
    uint64_t q;  /* ax / 10**(e - 5) rounded: six digits (or 10**6 when rounded up) */
    if (e >= 5) {
        uint64_t whole = (uint64_t)ax;  /* floor: ax < 2**64 */
        int frac = (double)whole != ax;
        uint64_t p = 1;
        for (int i = 5; i < e; i++)
            p *= 10;
        if (p == 1) {  /* 10**5 <= ax < 10**6, not whole: round on the fraction */
            double f = ax - (double)whole;  /* (exact) */
            q = whole;
            if (f > 0.5 || (f == 0.5 && (q & 1)))
                q++;
        } else {
            q = whole / p;
            uint64_t r = whole % p, half = p / 2;  /* (p even) */
            if (r > half || (r == half && (frac || (q & 1))))
                q++;
        }
    } else {  /* 1 <= ax < 10**5, not whole: ax * 10**(5 - e) = m * 10**k / 2**s */
        uint64_t bits;
        memcpy(&bits, &ax, sizeof bits);
        int s = 1075 - (int)(bits >> 52);  /* 1 <= s <= 52: ax >= 1, not whole */
        uint64_t m = (bits & ((UINT64_C(1) << 52) - 1)) | (UINT64_C(1) << 52);
        unsigned __int128 n = m;
        for (int i = e; i < 5; i++)
            n *= 10;
        unsigned __int128 one = 1;
        unsigned __int128 rem = n & ((one << s) - 1), half = one << (s - 1);
        q = (uint64_t)(n >> s);
        if (rem > half || (rem == half && (q & 1)))
            q++;
    }
    if (q >= 1000000) {  /* rounded up to 10**6: one more digit before the point */
        q /= 10;
        e++;
    }
    char dig[6];
    for (int i = 5; i >= 0; i--) {
        dig[i] = (char)('0' + q % 10);
        q /= 10;
    }
    if (buf_reserve(b, 32) < 0)
        return -1;
    char *p = b->data + b->len;
    if (signbit(x))
        *p++ = '-';
    if (e >= 6) {  /* d[.ddddd]e+XX */
        int last = 5;
        while (last > 0 && dig[last] == '0')
            last--;
        *p++ = dig[0];
        if (last > 0) {
            *p++ = '.';
            memcpy(p, dig + 1, (size_t)last);
            p += last;
        }
        *p++ = 'e';
        *p++ = '+';
        if (e < 10)
            *p++ = '0';
        p = put_u64(p, (uint64_t)e);
    } else {  /* e + 1 digits, then the others but trailing zeros */
        int last = 5;
        while (last > e && dig[last] == '0')
            last--;
        memcpy(p, dig, (size_t)(e + 1));
        p += e + 1;
        if (last > e) {
            *p++ = '.';
            memcpy(p, dig + e + 1, (size_t)(last - e));
            p += last - e;
        }
    }
    b->len = p - b->data;
    return 0;
}

/* Each float64 value of the buffer `arg`, formatted by `format`, one a line: what g6_lines and
 * fixed6_lines return (`name` names the caller in the error on a buffer of another size). */
static PyObject *float_lines(PyObject *arg, int (*format)(Buf *, double), const char *name) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_C_CONTIGUOUS) < 0)
        return NULL;
    if (view.len % (Py_ssize_t)sizeof(double)) {
        PyBuffer_Release(&view);
        PyErr_Format(PyExc_ValueError, "%s: not a float64 buffer", name);
        return NULL;
    }
    Py_ssize_t n = view.len / (Py_ssize_t)sizeof(double);
    const double *xs = view.buf;
    Buf b;
    PyObject *result = NULL;
    if (buf_init(&b, n * 16 + 64) == 0) {
        Py_ssize_t i = 0;
        for (; i < n; i++)
            if (format(&b, xs[i]) < 0 || BUF_LIT(&b, "\n") < 0)
                break;
        if (i == n)
            result = buf_bytes(&b);
        else
            buf_free(&b);
    }
    PyBuffer_Release(&view);
    return result;
}

/* g6_lines(column) -> bytes: `%g` of each float64 value, one a line (tests). */
static PyObject *g6_lines(PyObject *module, PyObject *arg) {
    return float_lines(arg, buf_g6, "g6_lines");
}

/* state_rows(dates, which, texts) -> str: the rows of machine_states.csv, each `%g` of its
 * date (a float64 buffer) followed by texts[which[i]] (`which`: an int64 buffer; texts: a
 * list of str), as sim/machines.py's `_rows_text` writes them. */
static PyObject *state_rows(PyObject *module, PyObject *args) {
    PyObject *dates_obj, *which_obj, *texts;
    if (!PyArg_ParseTuple(args, "OOO!", &dates_obj, &which_obj, &PyList_Type, &texts))
        return NULL;
    Py_buffer dv, wv;
    if (PyObject_GetBuffer(dates_obj, &dv, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return NULL;
    if (PyObject_GetBuffer(which_obj, &wv, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyBuffer_Release(&dv);
        return NULL;
    }
    PyObject *result = NULL;
    const char *df = dv.format ? dv.format : "B", *wf = wv.format ? wv.format : "B";
    if (*df == '<' || *df == '=')
        df++;
    if (*wf == '<' || *wf == '=')
        wf++;
    Py_ssize_t n = dv.len / (Py_ssize_t)sizeof(double);
    if (dv.itemsize != 8 || strcmp(df, "d") != 0 || wv.itemsize != 8
        || (strcmp(wf, "q") != 0 && strcmp(wf, "l") != 0) || wv.len != dv.len) {
        PyErr_SetString(PyExc_ValueError, "state_rows: float64 dates and int64 indices expected");
        goto out;
    }
    const double *dates = dv.buf;
    const int64_t *which = wv.buf;
    Py_ssize_t nb_texts = PyList_GET_SIZE(texts);
    Buf b;
    if (buf_init(&b, n * 40 + 64) < 0)
        goto out;
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t k = which[i];
        if (k < 0 || k >= nb_texts) {
            PyErr_SetString(PyExc_IndexError, "state_rows: text index out of range");
            buf_free(&b);
            goto out;
        }
        if (buf_g6(&b, dates[i]) < 0 || buf_str(&b, PyList_GET_ITEM(texts, k)) < 0) {
            buf_free(&b);
            goto out;
        }
    }
    result = PyUnicode_DecodeUTF8(b.data, b.len, NULL);
    buf_free(&b);
out:
    PyBuffer_Release(&dv);
    PyBuffer_Release(&wv);
    return result;
}

/* fixed6_lines(column) -> bytes: `%f` of each float64 value, one a line (tests, and the
 * measure of the formatter alone). */
static PyObject *fixed6_lines(PyObject *module, PyObject *arg) {
    return float_lines(arg, buf_fixed6, "fixed6_lines");
}

/* ------------------------------------------------------------------ JobRecord */

/* output/jobs_csv.py's JobRecord, the row of a job that ended, as a C type: one is made per job
 * and lives until the end of the run. Its seven fields are members (T_OBJECT_EX at fixed
 * offsets: `get_attr` above reads them without a call, as it reads a slotted dataclass's), and
 * it is not tracked by the cyclic garbage collector: a record refers only to what it was
 * given (a workload's Job, strings, numbers, an allocation), never back to a record, so it
 * cannot be part of a cycle, and the collector's passes over the young objects no longer
 * scan the tens of thousands of records a run keeps (f_50k: one pass over 49,000). The
 * pure-Python dataclass stays the reference (BATSIM_PY_PURE, no C compiler); this type
 * behaves as it does: the same constructor (positional or keyword fields), attributes
 * (readable, writable), `==` on the fields of two records of the same class, no hash,
 * the dataclass's repr, `__match_args__`, copy and pickle (`__reduce__`), subclassing. */

#define RECORD_FIELDS 7

typedef struct {
    PyObject_HEAD
    PyObject *f[RECORD_FIELDS];  /* job, final_state, starting_time, end_time, alloc,
                                  * consumed_energy, metadata */
} JobRecordObject;

static char *record_names[RECORD_FIELDS + 1] = {
    "job", "final_state", "starting_time", "end_time", "alloc", "consumed_energy",
    "metadata", NULL};

static PyTypeObject JobRecordType;

static void record_dealloc(JobRecordObject *self) {
    for (int i = 0; i < RECORD_FIELDS; i++)
        Py_CLEAR(self->f[i]);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static void record_set(JobRecordObject *self, PyObject *const *values) {
    for (int i = 0; i < RECORD_FIELDS; i++) {
        Py_INCREF(values[i]);
        Py_XSETREF(self->f[i], values[i]);
    }
}

static int record_init(JobRecordObject *self, PyObject *args, PyObject *kwds) {
    PyObject *v[RECORD_FIELDS];
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOOOOO:JobRecord", record_names, &v[0],
                                     &v[1], &v[2], &v[3], &v[4], &v[5], &v[6]))
        return -1;
    record_set(self, v);
    return 0;
}

/* JobRecord(...) (the type itself: a subclass does not inherit tp_vectorcall): seven
 * positional fields, the usual call, made without an argument tuple; anything else takes
 * tp_new and tp_init. */
static PyObject *record_vectorcall(PyObject *type, PyObject *const *args, size_t nargsf,
                                   PyObject *kwnames) {
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs == RECORD_FIELDS && kwnames == NULL
        && (PyTypeObject *)type == &JobRecordType) {
        JobRecordObject *self = PyObject_New(JobRecordObject, &JobRecordType);
        if (self == NULL)
            return NULL;
        for (int i = 0; i < RECORD_FIELDS; i++) {
            Py_INCREF(args[i]);
            self->f[i] = args[i];
        }
        return (PyObject *)self;
    }
    PyObject *tuple = PyTuple_New(nargs);
    if (tuple == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < nargs; i++) {
        Py_INCREF(args[i]);
        PyTuple_SET_ITEM(tuple, i, args[i]);
    }
    PyObject *kwds = NULL;
    if (kwnames != NULL) {
        kwds = PyDict_New();
        for (Py_ssize_t i = 0; kwds != NULL && i < PyTuple_GET_SIZE(kwnames); i++) {
            if (PyDict_SetItem(kwds, PyTuple_GET_ITEM(kwnames, i), args[nargs + i]) < 0)
                Py_CLEAR(kwds);
        }
        if (kwds == NULL) {
            Py_DECREF(tuple);
            return NULL;
        }
    }
    /* (not PyObject_Call(type, ...): a type's call would come back here) */
    PyTypeObject *tp = (PyTypeObject *)type;
    PyObject *result = tp->tp_new(tp, tuple, kwds);
    if (result != NULL && tp->tp_init(result, tuple, kwds) < 0)
        Py_CLEAR(result);
    Py_DECREF(tuple);
    Py_XDECREF(kwds);
    return result;
}

/* The fields as a tuple (NULL with AttributeError for a deleted one, as the dataclass). */
static PyObject *record_tuple(JobRecordObject *self) {
    PyObject *t = PyTuple_New(RECORD_FIELDS);
    if (t == NULL)
        return NULL;
    for (int i = 0; i < RECORD_FIELDS; i++) {
        PyObject *v = PyObject_GetAttrString((PyObject *)self, record_names[i]);
        if (v == NULL) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, v);
    }
    return t;
}

static PyObject *record_richcompare(PyObject *a, PyObject *b, int op) {
    /* (the dataclass's __eq__: the fields of records of the very same class; `!=` is its
     * negation, as object's __ne__ makes it) */
    if ((op != Py_EQ && op != Py_NE) || Py_TYPE(a) != Py_TYPE(b))
        Py_RETURN_NOTIMPLEMENTED;
    PyObject *ta = record_tuple((JobRecordObject *)a);
    if (ta == NULL)
        return NULL;
    PyObject *tb = record_tuple((JobRecordObject *)b);
    if (tb == NULL) {
        Py_DECREF(ta);
        return NULL;
    }
    PyObject *result = PyObject_RichCompare(ta, tb, op);
    Py_DECREF(ta);
    Py_DECREF(tb);
    return result;
}

static PyObject *record_repr(JobRecordObject *self) {
    PyObject *qualname = PyObject_GetAttrString((PyObject *)Py_TYPE(self), "__qualname__");
    if (qualname == NULL)
        return NULL;
    PyObject *t = record_tuple(self);
    if (t == NULL) {
        Py_DECREF(qualname);
        return NULL;
    }
    PyObject *r = NULL;
    int entered = Py_ReprEnter((PyObject *)self);
    if (entered > 0) {
        r = PyUnicode_FromString("...");  /* (as dataclasses' recursive_repr) */
    } else if (entered == 0) {
        PyObject **v = &PyTuple_GET_ITEM(t, 0);
        r = PyUnicode_FromFormat("%U(job=%R, final_state=%R, starting_time=%R, end_time=%R, "
                                 "alloc=%R, consumed_energy=%R, metadata=%R)", qualname, v[0],
                                 v[1], v[2], v[3], v[4], v[5], v[6]);
        Py_ReprLeave((PyObject *)self);
    }
    Py_DECREF(t);
    Py_DECREF(qualname);
    return r;
}

static PyObject *record_reduce(JobRecordObject *self, PyObject *unused) {
    PyObject *t = record_tuple(self);
    if (t == NULL)
        return NULL;
    return Py_BuildValue("(ON)", (PyObject *)Py_TYPE(self), t);
}

static PyMethodDef record_methods[] = {
    {"__reduce__", (PyCFunction)record_reduce, METH_NOARGS, "for copy and pickle"},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef record_members[] = {
    {"job", T_OBJECT_EX, offsetof(JobRecordObject, f[0]), 0, NULL},
    {"final_state", T_OBJECT_EX, offsetof(JobRecordObject, f[1]), 0, NULL},
    {"starting_time", T_OBJECT_EX, offsetof(JobRecordObject, f[2]), 0, NULL},
    {"end_time", T_OBJECT_EX, offsetof(JobRecordObject, f[3]), 0, NULL},
    {"alloc", T_OBJECT_EX, offsetof(JobRecordObject, f[4]), 0, NULL},
    {"consumed_energy", T_OBJECT_EX, offsetof(JobRecordObject, f[5]), 0, NULL},
    {"metadata", T_OBJECT_EX, offsetof(JobRecordObject, f[6]), 0, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject JobRecordType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "batsim_py.output.jobs_csv.JobRecord",
    .tp_doc = "A job as it ended: what its row of jobs.csv needs (output/jobs_csv.py).",
    .tp_basicsize = sizeof(JobRecordObject),
    /* (no Py_TPFLAGS_HAVE_GC: see above) */
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)record_init,
    .tp_vectorcall = record_vectorcall,
    .tp_dealloc = (destructor)record_dealloc,
    .tp_repr = (reprfunc)record_repr,
    .tp_hash = PyObject_HashNotImplemented,
    .tp_richcompare = record_richcompare,
    .tp_methods = record_methods,
    .tp_members = record_members,
};

/* After PyType_Ready: the dataclass's class attributes that code may read. */
static int record_type_attributes(void) {
    PyObject *names = PyTuple_New(RECORD_FIELDS);
    if (names == NULL)
        return -1;
    for (int i = 0; i < RECORD_FIELDS; i++) {
        PyObject *name = PyUnicode_InternFromString(record_names[i]);
        if (name == NULL) {
            Py_DECREF(names);
            return -1;
        }
        PyTuple_SET_ITEM(names, i, name);
    }
    int rc = PyDict_SetItemString(JobRecordType.tp_dict, "__match_args__", names);
    Py_DECREF(names);
    PyType_Modified(&JobRecordType);
    return rc;
}


static PyObject *fixed6(PyObject *module, PyObject *arg) {
    double x = PyFloat_AsDouble(arg);
    if (x == -1.0 && PyErr_Occurred())
        return NULL;
    Buf b;
    if (buf_init(&b, 64) < 0 || buf_fixed6(&b, x) < 0) {
        buf_free(&b);
        return NULL;
    }
    PyObject *out = PyUnicode_DecodeASCII(b.data, b.len, NULL);
    buf_free(&b);
    return out;
}

static PyMethodDef module_methods[] = {
    {"jobs_rows", jobs_rows, METH_VARARGS, "the rows of jobs.csv of jobs that ran, as bytes"},
    {"jobs_rows_of", jobs_rows_of, METH_VARARGS,
     "the rows of jobs.csv of records of jobs that ran, as bytes (None: another path)"},
    {"record_doubles", record_doubles, METH_VARARGS,
     "record_doubles(records, start, end, subtime): the records' three dates into float64s"},
    {"fixed6_lines", fixed6_lines, METH_O, "'%f\\n' of each float64 of a buffer, as bytes"},
    {"fixed6", fixed6, METH_O, "'%f' % x"},
    {"g6_lines", g6_lines, METH_O, "'%g\\n' of each float64 of a buffer, as bytes"},
    {"state_rows", state_rows, METH_VARARGS,
     "state_rows(dates, which, texts) -> str: '%g' % dates[i] + texts[which[i]] for each i"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_ctext",
    "The native writer of the Pajé trace's events and jobs.csv's rows (output/_ctext.c).",
    -1, module_methods,
};

PyMODINIT_FUNC PyInit__ctext(void) {
    str_job = PyUnicode_InternFromString("job");
    str_final_state = PyUnicode_InternFromString("final_state");
    str_starting_time = PyUnicode_InternFromString("starting_time");
    str_alloc = PyUnicode_InternFromString("alloc");
    str_energy = PyUnicode_InternFromString("consumed_energy");
    str_metadata = PyUnicode_InternFromString("metadata");
    str_name = PyUnicode_InternFromString("name");
    str_workload = PyUnicode_InternFromString("workload");
    str_profile = PyUnicode_InternFromString("profile");
    str_subtime = PyUnicode_InternFromString("subtime");
    str_res = PyUnicode_InternFromString("res");
    str_walltime = PyUnicode_InternFromString("walltime");
    str_id = PyUnicode_InternFromString("id");
    str_end_time = PyUnicode_InternFromString("end_time");
    if (str_job == NULL || str_final_state == NULL || str_starting_time == NULL
        || str_alloc == NULL || str_energy == NULL || str_metadata == NULL || str_name == NULL
        || str_workload == NULL || str_profile == NULL || str_subtime == NULL
        || str_res == NULL || str_walltime == NULL || str_id == NULL
        || str_end_time == NULL)
        return NULL;
    str_start = PyUnicode_InternFromString("start");
    str_stop = PyUnicode_InternFromString("stop");
    str_step = PyUnicode_InternFromString("step");
    if (str_start == NULL || str_stop == NULL || str_step == NULL)
        return NULL;
    if (PyType_Ready(&TraceEventsType) < 0 || PyType_Ready(&StateLogType) < 0
        || PyType_Ready(&JobLogType) < 0 || check_range_fields() < 0
        || check_array_fields() < 0 || PyType_Ready(&JobRecordType) < 0
        || record_type_attributes() < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (m == NULL)
        return NULL;
    Py_INCREF(&TraceEventsType);
    Py_INCREF(&StateLogType);
    Py_INCREF(&JobLogType);
    Py_INCREF(&JobRecordType);
    if (PyModule_AddObject(m, "TraceEvents", (PyObject *)&TraceEventsType) < 0
        || PyModule_AddObject(m, "StateLog", (PyObject *)&StateLogType) < 0
        || PyModule_AddObject(m, "JobLog", (PyObject *)&JobLogType) < 0
        || PyModule_AddObject(m, "JobRecord", (PyObject *)&JobRecordType) < 0
        || PyModule_AddIntConstant(m, "API", API_VERSION) < 0
        || PyModule_AddIntConstant(m, "FAST_ARRAYS", array_fields_ok) < 0) {
        Py_DECREF(&TraceEventsType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
