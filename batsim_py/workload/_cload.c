/* The native loader of large workloads: the per-job and per-profile work of reading a Batsim
 * JSON workload, at C speed.
 *
 * The pure-Python reader (workload/reader.py, jobs.py, profiles.py) is the reference: every
 * function here either returns exactly what the Python path returns for the same input, or
 * None, and the Python path then decides (and raises the errors: nothing here raises a
 * WorkloadError).  It is used only when it was built (setup.py) and BATSIM_PY_PURE is not set
 * (workload/native.py).  tests/workload/test_native_loader.py compares both.
 *
 * - numbers_agree(bytes): whether every number of a JSON text reads the same with orjson (the
 *   fast decoder) as with json and batsim_py.rapidjson_number (the reference), and the nesting
 *   is shallow enough for json: then orjson's result is json's.
 * - scan_jobs(...): the Job records of a workload's plain jobs array, read from its text (no
 *   object per job but the Job).
 * - uniform_jobs(...): the Job records of a block of job objects that all have the same keys
 *   in the same order and the same exact number types (workload/jobs.py, `_uniform_jobs`).
 * - delay_profiles(...): the DelayProfile records of the plain delay profiles of a workload
 *   (workload/profiles.py, `parse_profile`'s first lines).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define API_VERSION 1 /* checked by workload/native.py: a stale build is not used */

/* Deeper documents go to json, whose recursion limit (about 1,000 levels less the caller's
 * stack) decides whether they are "nesting too deep"; orjson would accept them. */
#define MAX_DEPTH 200

/* ------------------------------------------------------------------ numbers_agree */

/* Whether a JSON number token reads the same in orjson and in the reference reader:
 * - an integer of at most 18 digits (orjson turns integers beyond 64 bits into floats; json
 *   keeps them as Python ints);
 * - a number with a fraction or an exponent whose digits (at most 15: a significand below
 *   2**53) times a power of ten between 1e-22 and 1e22 (exact doubles): RapidJSON's one
 *   multiplication or division is then correctly rounded, as orjson's and float()'s results
 *   are.  Longer ones may differ from the correctly rounded value (rapidjson_number.py). */
static PyObject *numbers_agree(PyObject *self, PyObject *arg) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    const unsigned char *p = (const unsigned char *)view.buf;
    const unsigned char *end = p + view.len;
    int depth = 0;
    int ok = 1;
    while (p < end && ok) {
        unsigned char c = *p;
        if (c == '"') { /* a string: skip to its closing quote (one not escaped) */
            p++;
            for (;;) {
                const unsigned char *q = memchr(p, '"', (size_t)(end - p));
                if (q == NULL) {
                    p = end; /* unterminated: orjson refuses it */
                    break;
                }
                const unsigned char *b = q;
                while (b > p && b[-1] == '\\')
                    b--;
                p = q + 1;
                if (((q - b) & 1) == 0)
                    break; /* an even run of backslashes escapes itself, not the quote */
            }
        } else if (c == '-' || (c >= '0' && c <= '9')) { /* (digits are in numbers only) */
            if (c == '-')
                p++;
            int digits = 0, frac = 0, is_float = 0;
            while (p < end && *p >= '0' && *p <= '9') {
                digits++;
                p++;
            }
            if (p < end && *p == '.') {
                is_float = 1;
                p++;
                while (p < end && *p >= '0' && *p <= '9') {
                    digits++;
                    frac++;
                    p++;
                }
            }
            long exp = 0;
            if (p < end && (*p == 'e' || *p == 'E')) {
                is_float = 1;
                p++;
                int minus = 0, exp_digits = 0;
                if (p < end && (*p == '+' || *p == '-')) {
                    minus = *p == '-';
                    p++;
                }
                while (p < end && *p >= '0' && *p <= '9') {
                    if (exp_digits < 6)
                        exp = exp * 10 + (*p - '0');
                    exp_digits++;
                    p++;
                }
                if (exp_digits > 5)
                    ok = 0;
                if (minus)
                    exp = -exp;
            }
            if (is_float) {
                long scale = exp - frac;
                if (digits > 15 || scale < -22 || scale > 22)
                    ok = 0;
            } else if (digits > 18) {
                ok = 0;
            }
        } else {
            if (c == '[' || c == '{') {
                if (++depth > MAX_DEPTH)
                    ok = 0;
            } else if (c == ']' || c == '}') {
                depth--;
            }
            p++;
        }
    }
    PyBuffer_Release(&view);
    return PyBool_FromLong(ok);
}

/* ------------------------------------------------------------------ helpers */

/* Store `value` in slot `descr` (a member descriptor of the object's type) of `obj`. */
static inline int set_slot(PyObject *descr, PyObject *obj, PyObject *value) {
    return Py_TYPE(descr)->tp_descr_set(descr, obj, value);
}

/* The slot descriptors of `type` named by tuple `slots` (n of them), checked. */
static int check_slots(PyObject *type, PyObject *slots, Py_ssize_t n) {
    if (!PyType_Check(type) || !PyTuple_Check(slots) || PyTuple_GET_SIZE(slots) != n) {
        PyErr_SetString(PyExc_TypeError, "expected a type and a tuple of its slot descriptors");
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *d = PyTuple_GET_ITEM(slots, i);
        if (Py_TYPE(d) != &PyMemberDescr_Type || Py_TYPE(d)->tp_descr_set == NULL) {
            PyErr_SetString(PyExc_TypeError, "a slot descriptor is not a member descriptor");
            return -1;
        }
    }
    return 0;
}

/* A new object of `type` (as object.__new__(type)), its slots empty. */
static inline PyObject *new_object(PyTypeObject *type) {
    return type->tp_alloc(type, 0);
}

#define EXACT 9007199254740992LL /* 2**53: every integer up to it is exactly a double */

/* Kind of a number column: 0 unseen, 1 ints within +-2**53, 2 finite floats. Returns -1
 * for anything else (the Python path decides). */
static inline int number_kind(PyObject *v) {
    if (PyLong_CheckExact(v)) {
        int overflow;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow || x < -EXACT || x > EXACT)
            return -1;
        return 1;
    }
    if (PyFloat_CheckExact(v))
        return isfinite(PyFloat_AS_DOUBLE(v)) ? 2 : -1;
    return -1;
}

/* ------------------------------------------------------------------ uniform_jobs */

enum { K_ID, K_SUBTIME, K_WALLTIME, K_RES, K_PROFILE, K_OTHER };

static int key_kind(PyObject *key) {
    if (PyUnicode_CompareWithASCIIString(key, "id") == 0)
        return K_ID;
    if (PyUnicode_CompareWithASCIIString(key, "subtime") == 0)
        return K_SUBTIME;
    if (PyUnicode_CompareWithASCIIString(key, "walltime") == 0)
        return K_WALLTIME;
    if (PyUnicode_CompareWithASCIIString(key, "res") == 0)
        return K_RES;
    if (PyUnicode_CompareWithASCIIString(key, "profile") == 0)
        return K_PROFILE;
    return K_OTHER;
}

/* Whether dict `obj` has exactly the keys `keys` (n of them), in that order. */
static inline int same_keys(PyObject *obj, PyObject **keys, Py_ssize_t n) {
    if (!PyDict_CheckExact(obj) || PyDict_GET_SIZE(obj) != n)
        return 0;
    Py_ssize_t pos = 0, j = 0;
    PyObject *key, *value;
    while (PyDict_Next(obj, &pos, &key, &value)) {
        if (key != keys[j]) {
            if (!PyUnicode_CheckExact(key) || PyUnicode_Compare(key, keys[j]) != 0) {
                if (PyErr_Occurred())
                    PyErr_Clear();
                return 0;
            }
        }
        j++;
    }
    return j == n;
}

/* uniform_jobs(raw_jobs, workload, Job, slots, shape_of) -> list of Job | None
 *
 * `slots`: Job's member descriptors of id, workload, name, subtime, walltime, res, profile,
 * json_form; `shape_of(keys, int_subtimes, int_walltimes)`: the JobShape of these jobs.
 * None when the block is not uniform (see jobs.py, `_uniform_jobs`, which this mirrors). */
static PyObject *uniform_jobs(PyObject *self, PyObject *args) {
    PyObject *raw, *workload, *type, *slots, *shape_of;
    if (!PyArg_ParseTuple(args, "O!UOOO", &PyList_Type, &raw, &workload, &type, &slots,
                          &shape_of))
        return NULL;
    if (check_slots(type, slots, 8) < 0)
        return NULL;
    PyObject **sl = &PyTuple_GET_ITEM(slots, 0);
    Py_ssize_t n = PyList_GET_SIZE(raw);
    if (n == 0 || PyUnicode_FindChar(workload, 0, 0, PyUnicode_GET_LENGTH(workload), 1) != -1)
        Py_RETURN_NONE; /* ("\0" in the workload's name: the Python path decides) */
    PyObject *first = PyList_GET_ITEM(raw, 0);
    if (!PyDict_CheckExact(first))
        Py_RETURN_NONE;
    Py_ssize_t nkeys = PyDict_GET_SIZE(first);
    PyObject *keys = PyDict_Keys(first);
    if (keys == NULL)
        return NULL;
    PyObject *result = NULL, *out = NULL, *prefix = NULL, *walls = NULL, *sizes = NULL;
    PyObject *minus_one = NULL, *keys_tuple = NULL, *shape = NULL;
    PyObject **kv = &PyList_GET_ITEM(keys, 0);
    int kinds[64];
    int has[K_OTHER + 1] = {0};
    Py_ssize_t nothers = 0;
    if (nkeys > 64)
        goto none;
    for (Py_ssize_t j = 0; j < nkeys; j++) {
        if (!PyUnicode_CheckExact(kv[j]))
            goto none;
        if (PyUnicode_CompareWithASCIIString(kv[j], "smpi_ranks_to_hosts_mapping") == 0)
            goto none;
        kinds[j] = key_kind(kv[j]);
        has[kinds[j]] = 1;
        nothers += kinds[j] == K_OTHER;
    }
    if (!has[K_ID] || !has[K_SUBTIME] || !has[K_RES] || !has[K_PROFILE])
        goto none;

    /* First pass: the keys of every job, the kinds of its values. */
    int id_kind = 0, sub_kind = 0, wall_kind = 0; /* id: 1 int, 2 str */
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *obj = PyList_GET_ITEM(raw, i);
        if (!same_keys(obj, kv, nkeys))
            goto none;
        Py_ssize_t pos = 0, j = 0;
        PyObject *key, *v;
        while (PyDict_Next(obj, &pos, &key, &v)) {
            int k;
            switch (kinds[j++]) {
            case K_ID:
                k = PyLong_CheckExact(v) ? 1 : PyUnicode_CheckExact(v) ? 2 : -1;
                if (k < 0 || (id_kind && k != id_kind))
                    goto none;
                id_kind = k;
                break;
            case K_SUBTIME:
                k = number_kind(v);
                if (k < 0 || (sub_kind && k != sub_kind))
                    goto none;
                sub_kind = k;
                break;
            case K_WALLTIME:
                k = number_kind(v);
                if (k < 0 || (wall_kind && k != wall_kind))
                    goto none;
                wall_kind = k;
                /* -1 (no walltime) or > 0 */
                if (k == 1) {
                    long long w = PyLong_AsLongLong(v);
                    if (w != -1 && w <= 0)
                        goto none;
                } else {
                    double w = PyFloat_AS_DOUBLE(v);
                    if (w != -1.0 && !(w > 0.0))
                        goto none;
                }
                break;
            case K_RES:
                if (!PyLong_CheckExact(v))
                    goto none;
                {
                    int overflow;
                    long long r = PyLong_AsLongLongAndOverflow(v, &overflow);
                    if (overflow < 0 || (!overflow && r < 0))
                        goto none;
                }
                break;
            case K_PROFILE:
                if (!PyUnicode_CheckExact(v))
                    goto none;
                break;
            default:
                break;
            }
        }
    }

    keys_tuple = PyList_AsTuple(keys);
    if (keys_tuple == NULL)
        goto done;
    shape = PyObject_CallFunction(shape_of, "Oii", keys_tuple, sub_kind == 1,
                                  has[K_WALLTIME] && wall_kind == 1);
    if (shape == NULL)
        goto done;
    prefix = PyUnicode_FromFormat("%U!", workload);
    walls = PyDict_New();
    sizes = PyDict_New();
    minus_one = PyFloat_FromDouble(-1.0);
    out = PyList_New(n);
    if (prefix == NULL || walls == NULL || sizes == NULL || minus_one == NULL || out == NULL)
        goto done;
    PyTypeObject *job_type = (PyTypeObject *)type;

    /* Second pass: the jobs. */
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *obj = PyList_GET_ITEM(raw, i);
        PyObject *id = NULL, *subtime = NULL, *res = NULL, *profile = NULL;
        PyObject *wall = minus_one, *others = NULL;
        if (nothers) {
            others = PyTuple_New(nothers);
            if (others == NULL)
                goto done;
        }
        Py_ssize_t pos = 0, j = 0, o = 0;
        PyObject *key, *v;
        while (PyDict_Next(obj, &pos, &key, &v)) {
            switch (kinds[j++]) {
            case K_ID:
                id = v;
                break;
            case K_SUBTIME:
                subtime = v;
                break;
            case K_WALLTIME:
                wall = v;
                break;
            case K_RES:
                res = v;
                break;
            case K_PROFILE:
                profile = v;
                break;
            default:
                Py_INCREF(v);
                PyTuple_SET_ITEM(others, o++, v);
            }
        }
        PyObject *name = id_kind == 1 ? PyObject_Str(id) : (Py_INCREF(id), id);
        if (name == NULL) {
            Py_XDECREF(others);
            goto done;
        }
        /* the common kind of id: a non-empty name without '!' nor the workload's name */
        Py_ssize_t len = PyUnicode_GET_LENGTH(name);
        int plain = len > 0 && PyUnicode_FindChar(name, '!', 0, len, 1) == -1;
        if (plain) {
            int holds = PyUnicode_Contains(name, workload);
            if (holds < 0) {
                Py_DECREF(name);
                Py_XDECREF(others);
                goto done;
            }
            plain = !holds;
        }
        if (!plain) {
            Py_DECREF(name);
            Py_XDECREF(others);
            goto none;
        }
        PyObject *full_id = PyUnicode_Concat(prefix, name);
        Py_DECREF(name);
        PyObject *sub = sub_kind == 1 ? PyFloat_FromDouble(PyLong_AsDouble(subtime))
                                      : (Py_INCREF(subtime), subtime);
        /* one float per distinct walltime, one int per distinct size above 256 */
        PyObject *w = wall == minus_one ? minus_one : PyDict_GetItemWithError(walls, wall);
        if (w == NULL && !PyErr_Occurred()) {
            PyObject *f = PyFloat_CheckExact(wall) ? (Py_INCREF(wall), wall)
                                                   : PyFloat_FromDouble(PyLong_AsDouble(wall));
            if (f != NULL && PyDict_SetItem(walls, wall, f) == 0)
                w = f;
            Py_XDECREF(f); /* (the dict holds it) */
        }
        int overflow;
        long long r = PyLong_AsLongLongAndOverflow(res, &overflow);
        PyObject *size = (overflow || r > 256) ? PyDict_SetDefault(sizes, res, res) : res;
        Py_INCREF(profile);
        PyUnicode_InternInPlace(&profile);
        PyObject *form;
        if (nothers) {
            form = PyTuple_Pack(2, shape, others);
        } else {
            Py_INCREF(shape);
            form = shape;
        }
        Py_XDECREF(others);
        PyObject *job = (full_id && sub && w && size && form) ? new_object(job_type) : NULL;
        int failed = job == NULL
            || set_slot(sl[0], job, full_id) < 0 || set_slot(sl[1], job, workload) < 0
            || set_slot(sl[2], job, Py_None) < 0 || set_slot(sl[3], job, sub) < 0
            || set_slot(sl[4], job, w) < 0 || set_slot(sl[5], job, size) < 0
            || set_slot(sl[6], job, profile) < 0 || set_slot(sl[7], job, form) < 0;
        Py_XDECREF(full_id);
        Py_XDECREF(sub);
        Py_DECREF(profile);
        Py_XDECREF(form);
        if (failed) {
            Py_XDECREF(job);
            goto done;
        }
        PyList_SET_ITEM(out, i, job);
    }
    result = out;
    out = NULL;
    goto done;
none:
    result = Py_None;
    Py_INCREF(result);
done:
    Py_DECREF(keys);
    Py_XDECREF(keys_tuple);
    Py_XDECREF(shape);
    Py_XDECREF(out);
    Py_XDECREF(prefix);
    Py_XDECREF(walls);
    Py_XDECREF(sizes);
    Py_XDECREF(minus_one);
    return result;
}

/* ------------------------------------------------------------------ delay_profiles */

static PyObject *s_type, *s_delay, *s_ret; /* interned keys, made at import */

/* delay_profiles(raw_profiles, DelayProfile, slots) -> dict | None
 *
 * `slots`: DelayProfile's member descriptors of name, ret, description, delay.  For each
 * profile of dict `raw_profiles`, in order: its DelayProfile when it is a plain delay profile
 * (a dict whose "type" is "delay", "ret" an int or absent, "delay" a finite number > 0: what
 * profiles.py's `parse_profile` takes its short path for), else None (the Python parser
 * decides). None instead of the dict when `raw_profiles` is not a dict. */
static PyObject *delay_profiles(PyObject *self, PyObject *args) {
    PyObject *raw, *type, *slots;
    if (!PyArg_ParseTuple(args, "OOO", &raw, &type, &slots))
        return NULL;
    if (check_slots(type, slots, 4) < 0)
        return NULL;
    if (!PyDict_CheckExact(raw))
        Py_RETURN_NONE;
    PyObject **sl = &PyTuple_GET_ITEM(slots, 0);
    PyObject *out = PyDict_New();
    PyObject *zero = PyLong_FromLong(0);
    if (out == NULL || zero == NULL)
        goto fail;
    Py_ssize_t pos = 0;
    PyObject *name, *obj;
    while (PyDict_Next(raw, &pos, &name, &obj)) {
        PyObject *profile = Py_None;
        Py_INCREF(profile);
        PyObject *kind, *delay, *ret;
        double d = 0.0;
        int fast = PyDict_CheckExact(obj)
            && (kind = PyDict_GetItemWithError(obj, s_type)) != NULL
            && PyUnicode_CheckExact(kind) && PyUnicode_Compare(kind, s_delay) == 0
            && (delay = PyDict_GetItemWithError(obj, s_delay)) != NULL;
        if (fast) {
            ret = PyDict_GetItemWithError(obj, s_ret);
            if (ret == NULL)
                ret = zero;
            fast = PyLong_CheckExact(ret);
        }
        if (PyErr_Occurred()) { /* (a key's comparison failed: the Python path decides) */
            PyErr_Clear();
            fast = 0;
        }
        if (fast) {
            if (PyFloat_CheckExact(delay)) {
                d = PyFloat_AS_DOUBLE(delay);
                fast = d > 0.0 && d < INFINITY;
            } else if (PyLong_CheckExact(delay)) {
                d = PyLong_AsDouble(delay); /* (> 0 and < 2**1023, as the Python test) */
                if (d == -1.0 && PyErr_Occurred()) {
                    PyErr_Clear();
                    fast = 0;
                } else {
                    fast = d > 0.0 && d < 0x1p1023;
                }
            } else {
                fast = 0;
            }
        }
        if (fast) {
            PyObject *value = PyFloat_CheckExact(delay) ? (Py_INCREF(delay), delay)
                                                        : PyFloat_FromDouble(d);
            PyObject *record = value ? new_object((PyTypeObject *)type) : NULL;
            if (record == NULL || set_slot(sl[0], record, name) < 0
                || set_slot(sl[1], record, ret) < 0 || set_slot(sl[2], record, obj) < 0
                || set_slot(sl[3], record, value) < 0) {
                Py_XDECREF(value);
                Py_XDECREF(record);
                Py_DECREF(profile);
                goto fail;
            }
            Py_DECREF(value);
            Py_SETREF(profile, record);
        }
        int failed = PyDict_SetItem(out, name, profile) < 0;
        Py_DECREF(profile);
        if (failed)
            goto fail;
    }
    Py_DECREF(zero);
    return out;
fail:
    Py_XDECREF(out);
    Py_XDECREF(zero);
    return NULL;
}

/* ------------------------------------------------------------------ a small interning table */

/* One object per distinct short byte string (a profile name, a double's or an int's bytes),
 * found without making a Python object first: an open-addressing table of inline keys. */
#define INLINE 24

typedef struct {
    uint64_t hash;
    Py_ssize_t n; /* -1: empty */
    unsigned char key[INLINE];
    PyObject *obj; /* owned */
} Entry;

typedef struct {
    Entry *entries;
    size_t mask, used;
} Table;

static int table_init(Table *t) {
    t->mask = 1023;
    t->used = 0;
    t->entries = PyMem_Malloc(sizeof(Entry) * (t->mask + 1));
    if (t->entries == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i <= t->mask; i++)
        t->entries[i].n = -1;
    return 0;
}

static void table_free(Table *t) {
    if (t->entries == NULL)
        return;
    for (size_t i = 0; i <= t->mask; i++)
        if (t->entries[i].n >= 0)
            Py_DECREF(t->entries[i].obj);
    PyMem_Free(t->entries);
    t->entries = NULL;
}

static inline uint64_t hash_bytes(const unsigned char *s, Py_ssize_t n) {
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (Py_ssize_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 1099511628211ULL;
    return h ^ (h >> 29);
}

/* The entry of key s[0:n] (n <= INLINE): found, or the empty one where it belongs (n < 0). */
static inline Entry *table_slot(Table *t, const unsigned char *s, Py_ssize_t n, uint64_t h) {
    size_t i = (size_t)h & t->mask;
    for (;;) {
        Entry *e = &t->entries[i];
        if (e->n < 0 || (e->hash == h && e->n == n && memcmp(e->key, s, (size_t)n) == 0))
            return e;
        i = (i + 1) & t->mask;
    }
}

/* Double the table (its entries moved to their new places); -1 and MemoryError, the table
 * unchanged, when it cannot. */
static int table_grow(Table *t) {
    size_t old_mask = t->mask;
    Entry *old = t->entries;
    Entry *entries = PyMem_Malloc(sizeof(Entry) * (old_mask * 2 + 2));
    if (entries == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    t->entries = entries;
    t->mask = old_mask * 2 + 1;
    for (size_t i = 0; i <= t->mask; i++)
        t->entries[i].n = -1;
    for (size_t i = 0; i <= old_mask; i++) {
        if (old[i].n >= 0) {
            Entry *f = table_slot(t, old[i].key, old[i].n, old[i].hash);
            *f = old[i];
        }
    }
    PyMem_Free(old);
    return 0;
}

/* Makes the object of key s[0:n]: a new reference, or NULL with an exception set. */
typedef PyObject *(*MakeFn)(const unsigned char *s, Py_ssize_t n, void *ctx);

/* The one object of key s[0:n] (n <= INLINE), borrowed (the table owns it): the one kept, or
 * else the one make(s, n, ctx) returns, kept from then on; NULL with an exception set.
 * The table grows *before* anything is made, so that on any failure the table holds nothing
 * new and the caller has nothing to release: the object is never owned twice (a growth that
 * failed after the object was put used to be released by the caller and again by table_free). */
static PyObject *table_keep(Table *t, const unsigned char *s, Py_ssize_t n, MakeFn make,
                            void *ctx) {
    uint64_t h = hash_bytes(s, n);
    Entry *e = table_slot(t, s, n, h);
    if (e->n >= 0)
        return e->obj;
    if ((t->used + 1) * 2 > t->mask) { /* (at most half full: probes stay short) */
        if (table_grow(t) < 0)
            return NULL;
        e = table_slot(t, s, n, h);
    }
    PyObject *obj = make(s, n, ctx);
    if (obj == NULL)
        return NULL;
    e->hash = h;
    e->n = n;
    memcpy(e->key, s, (size_t)n);
    e->obj = obj;
    t->used++;
    return obj;
}

/* The makers of table_keep's three tables: a float from a double's bytes, an int from a long
 * long's bytes, an interned name from its bytes (also added to the set `ctx`, the profiles
 * used). */
static PyObject *make_float(const unsigned char *s, Py_ssize_t n, void *ctx) {
    double v;
    (void)n, (void)ctx;
    memcpy(&v, s, 8);
    return PyFloat_FromDouble(v);
}

static PyObject *make_int(const unsigned char *s, Py_ssize_t n, void *ctx) {
    long long v;
    (void)n, (void)ctx;
    memcpy(&v, s, 8);
    return PyLong_FromLongLong(v);
}

static PyObject *make_name(const unsigned char *s, Py_ssize_t n, void *used) {
    PyObject *v = PyUnicode_FromStringAndSize((const char *)s, n);
    if (v == NULL)
        return NULL;
    PyUnicode_InternInPlace(&v);
    if (PySet_Add((PyObject *)used, v) < 0) {
        Py_DECREF(v);
        return NULL;
    }
    return v;
}

/* ------------------------------------------------------------------ scan_jobs */

/* The jobs of a workload's text, read straight from its bytes (no dict per job), for the
 * plainest and most common layout: every job object has the same keys in the same order, and
 * only the five keys batsim-py keeps (id, subtime, walltime, res, profile), with plain values
 * (an integer or escape-free ASCII string id, numbers of one kind per key, an escape-free ASCII
 * profile name).  Anything else, anywhere in the array, and the caller reads the whole text as
 * before, and so does a number that the reference might read differently (token_agrees: the
 * others' correctly rounded strtod value is the reference's). */

typedef struct {
    const unsigned char *p, *end;
} Cursor;

static inline void skip_ws(Cursor *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\n' || *c->p == '\r' || *c->p == '\t'))
        c->p++;
}

static inline int expect(Cursor *c, unsigned char ch) {
    skip_ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

/* A string without escapes, of printable ASCII: its bytes [*s, *s + *n). */
static inline int plain_string(Cursor *c, const unsigned char **s, Py_ssize_t *n) {
    skip_ws(c);
    if (c->p >= c->end || *c->p != '"')
        return 0;
    const unsigned char *q = ++c->p;
    while (q < c->end && *q != '"') {
        if (*q == '\\' || *q < 0x20 || *q >= 0x7f)
            return 0;
        q++;
    }
    if (q >= c->end)
        return 0;
    *s = c->p;
    *n = q - c->p;
    c->p = q + 1;
    return 1;
}

/* A JSON number token: its bytes, and whether it is an integer (no fraction, no exponent).
 * Strict JSON grammar: no leading zeros, digits after '.', 'e' and the exponent's sign. */
static inline int number_token(Cursor *c, const unsigned char **s, Py_ssize_t *n, int *integer) {
    skip_ws(c);
    const unsigned char *q = c->p, *end = c->end;
    *s = q;
    if (q < end && *q == '-')
        q++;
    if (q >= end || *q < '0' || *q > '9')
        return 0;
    if (*q == '0') {
        q++;
    } else {
        while (q < end && *q >= '0' && *q <= '9')
            q++;
    }
    *integer = 1;
    if (q < end && *q == '.') {
        *integer = 0;
        q++;
        if (q >= end || *q < '0' || *q > '9')
            return 0;
        while (q < end && *q >= '0' && *q <= '9')
            q++;
    }
    if (q < end && (*q == 'e' || *q == 'E')) {
        *integer = 0;
        q++;
        if (q < end && (*q == '+' || *q == '-'))
            q++;
        if (q >= end || *q < '0' || *q > '9')
            return 0;
        while (q < end && *q >= '0' && *q <= '9')
            q++;
    }
    *n = q - *s;
    c->p = q;
    return 1;
}

/* Whether number token s[0:n] reads the same in orjson, strtod and the reference (the rule of
 * numbers_agree). */
static int token_agrees(const unsigned char *s, Py_ssize_t n, int integer) {
    int digits = 0, frac = 0, seen_dot = 0;
    Py_ssize_t i = *s == '-';
    for (; i < n && s[i] != 'e' && s[i] != 'E'; i++) {
        if (s[i] == '.') {
            seen_dot = 1;
            continue;
        }
        digits++;
        frac += seen_dot;
    }
    if (integer)
        return digits <= 18;
    long exp = 0;
    int minus = 0, exp_digits = 0;
    if (i < n) { /* the exponent */
        i++;
        if (s[i] == '+' || s[i] == '-')
            minus = s[i++] == '-';
        for (; i < n; i++, exp_digits++)
            if (exp_digits < 6)
                exp = exp * 10 + (s[i] - '0');
    }
    if (exp_digits > 5)
        return 0;
    long scale = (minus ? -exp : exp) - frac;
    return digits <= 15 && scale >= -22 && scale <= 22;
}

/* The value of an integer token of at most 18 digits (token_agrees refused longer ones). */
static inline long long int_value(const unsigned char *s, Py_ssize_t n) {
    int minus = *s == '-';
    long long v = 0;
    for (Py_ssize_t i = minus; i < n; i++)
        v = v * 10 + (s[i] - '0');
    return minus ? -v : v;
}

/* The double of a number token (correctly rounded, as the reference for checked tokens). */
static inline double double_value(const unsigned char *s, Py_ssize_t n) {
    char buf[64];
    if (n >= (Py_ssize_t)sizeof(buf))
        return NAN; /* (not a checked token) */
    memcpy(buf, s, (size_t)n);
    buf[n] = '\0';
    return PyOS_string_to_double(buf, NULL, NULL);
}

/* Skip one JSON value of the top-level object (not validated: orjson reads it afterwards).
 * Returns 0 at the end of the text. */
static int skip_value(Cursor *c) {
    int depth = 0;
    skip_ws(c);
    while (c->p < c->end) {
        unsigned char ch = *c->p;
        if (ch == '"') {
            const unsigned char *q = c->p + 1;
            for (;;) {
                q = memchr(q, '"', (size_t)(c->end - q));
                if (q == NULL)
                    return 0;
                const unsigned char *b = q;
                while (b[-1] == '\\')
                    b--;
                q++;
                if (((q - 1 - b) & 1) == 0)
                    break;
            }
            c->p = q;
            if (depth == 0)
                return 1;
            continue;
        }
        if (ch == '[' || ch == '{') {
            depth++;
        } else if (ch == ']' || ch == '}') {
            if (depth == 0)
                return 1; /* (the end of the enclosing object: not ours) */
            depth--;
            if (depth == 0) {
                c->p++;
                return 1;
            }
        } else if (depth == 0 && (ch == ',' || ch == ' ' || ch == '\n' || ch == '\r'
                                  || ch == '\t')) {
            return 1; /* the end of a number or literal */
        }
        c->p++;
    }
    return 0;
}

/* A top-level key: its bytes, without escapes (an escaped key might spell "jobs"), and the
 * colon after it. */
static int top_key(Cursor *c, int *is_jobs) {
    skip_ws(c);
    if (c->p >= c->end || *c->p != '"')
        return 0;
    const unsigned char *k = ++c->p;
    while (c->p < c->end && *c->p != '"') {
        if (*c->p == '\\')
            return 0;
        c->p++;
    }
    if (c->p >= c->end)
        return 0;
    *is_jobs = c->p - k == 4 && memcmp(k, "jobs", 4) == 0;
    c->p++;
    if (!expect(c, ':'))
        return 0;
    skip_ws(c);
    return 1;
}

/* Move the cursor to the array value of the top-level key "jobs" (0: not an object, no such
 * key, an escaped key, a malformed text). */
static int find_jobs(Cursor *c) {
    if (!expect(c, '{'))
        return 0;
    for (;;) {
        int is_jobs;
        if (!top_key(c, &is_jobs))
            return 0;
        if (is_jobs)
            return c->p < c->end && *c->p == '[';
        if (!skip_value(c))
            return 0;
        if (!expect(c, ','))
            return 0;
    }
}

/* Whether the top-level keys after the jobs array are neither "jobs" nor escaped (the text
 * after them is left to orjson). */
static int other_keys(Cursor *c) {
    for (;;) {
        if (expect(c, '}'))
            return 1;
        int is_jobs;
        if (!expect(c, ',') || !top_key(c, &is_jobs) || is_jobs || !skip_value(c))
            return 0;
    }
}

typedef struct {
    const unsigned char *s;
    Py_ssize_t n;
    int integer;
} Token;

/* scan_jobs(data, workload, Job, slots, shape_of) -> (start, stop, jobs, used, distinct) | None
 *
 * The Job records of the top-level "jobs" array of JSON text `data` (bytes), as parse_jobs
 * makes them; `start`, `stop`: the array's byte span
 * (the caller reads the rest of the text with it replaced by []); `used`: the set of the
 * profile names; `distinct`: whether the ids are integers in increasing order (hence
 * distinct).  None when the array is not of the plain layout (see above). */
static PyObject *scan_jobs(PyObject *self, PyObject *args) {
    Py_buffer view;
    PyObject *workload, *type, *slots, *shape_of;
    if (!PyArg_ParseTuple(args, "y*UOOO", &view, &workload, &type, &slots, &shape_of))
        return NULL;
    PyObject *result = NULL, *out = NULL;
    PyObject *minus_one = NULL, *keys = NULL, *shape = NULL, *used = NULL;
    Token *row = NULL;
    Table ptab = {NULL, 0, 0}, wtab = {NULL, 0, 0}, stab = {NULL, 0, 0};
    const unsigned char *start, *stop;
    Cursor c = {(const unsigned char *)view.buf, (const unsigned char *)view.buf + view.len};
    if (check_slots(type, slots, 8) < 0)
        goto done;
    PyObject **sl = &PyTuple_GET_ITEM(slots, 0);
    /* (an ASCII workload name, as "w0": its bytes are its characters) */
    if (!PyUnicode_IS_ASCII(workload) || PyUnicode_GET_LENGTH(workload) == 0
        || PyUnicode_FindChar(workload, 0, 0, PyUnicode_GET_LENGTH(workload), 1) != -1
        || !find_jobs(&c))
        goto none;
    start = c.p;
    const char *wl = (const char *)PyUnicode_1BYTE_DATA(workload);
    Py_ssize_t wl_len = PyUnicode_GET_LENGTH(workload);

    /* The first job's keys. */
    Cursor a = {start + 1, c.end};
    const unsigned char *kstart[64];
    Py_ssize_t klen[64];
    int kinds[64];
    int has[K_OTHER + 1] = {0};
    Py_ssize_t nkeys = 0;
    if (!expect(&a, '{'))
        goto none;
    for (;;) {
        if (nkeys == 64 || !plain_string(&a, &kstart[nkeys], &klen[nkeys]) || !expect(&a, ':'))
            goto none;
        PyObject *key = PyUnicode_FromStringAndSize((const char *)kstart[nkeys], klen[nkeys]);
        if (key == NULL)
            goto done;
        int k = key_kind(key);
        Py_DECREF(key);
        if (k == K_OTHER || has[k])
            goto none; /* (other keys, or a key twice: the general path) */
        has[k] = 1;
        kinds[nkeys++] = k;
        if (!skip_value(&a))
            goto none;
        if (expect(&a, ','))
            continue;
        if (expect(&a, '}'))
            break;
        goto none;
    }
    if (!has[K_ID] || !has[K_SUBTIME] || !has[K_RES] || !has[K_PROFILE])
        goto none;
    keys = PyTuple_New(nkeys);
    if (keys == NULL)
        goto done;
    for (Py_ssize_t j = 0; j < nkeys; j++) {
        PyObject *key = PyUnicode_FromStringAndSize((const char *)kstart[j], klen[j]);
        if (key == NULL)
            goto done;
        PyUnicode_InternInPlace(&key);
        PyTuple_SET_ITEM(keys, j, key);
    }

    used = PySet_New(NULL);
    minus_one = PyFloat_FromDouble(-1.0);
    out = PyList_New(0);
    row = PyMem_Malloc(sizeof(Token) * (size_t)nkeys);
    if (!used || !minus_one || !out || !row) {
        if (row == NULL)
            PyErr_NoMemory();
        goto done;
    }
    if (table_init(&ptab) < 0 || table_init(&wtab) < 0 || table_init(&stab) < 0)
        goto done;
    PyTypeObject *job_type = (PyTypeObject *)type;
    int id_int = -1, sub_int = -1, wall_int = -1, increasing = 1;
    long long last_id = 0;
    Cursor j = {start + 1, c.end};
    if (expect(&j, ']'))
        goto none; /* (no job) */
    for (;;) {
        /* one job object: its tokens, key by key */
        if (!expect(&j, '{'))
            goto none;
        for (Py_ssize_t k = 0; k < nkeys; k++) {
            const unsigned char *ks;
            Py_ssize_t kn;
            if (!plain_string(&j, &ks, &kn) || kn != klen[k] || memcmp(ks, kstart[k], kn) != 0
                || !expect(&j, ':'))
                goto none;
            Token *t = &row[k];
            t->integer = 0;
            skip_ws(&j);
            if (j.p < j.end && *j.p == '"') {
                if ((kinds[k] != K_ID && kinds[k] != K_PROFILE)
                    || !plain_string(&j, &t->s, &t->n))
                    goto none;
                t->integer = -1; /* (a string) */
            } else if (kinds[k] == K_PROFILE || !number_token(&j, &t->s, &t->n, &t->integer)
                       || !token_agrees(t->s, t->n, t->integer)) {
                goto none; /* (a number that the reference may read differently) */
            }
            if (!expect(&j, k + 1 < nkeys ? ',' : '}'))
                goto none;
        }
        /* the job */
        PyObject *id = NULL, *sub = NULL, *wall = minus_one, *res = NULL;
        PyObject *profile = NULL;
        int ok = 1;
        for (Py_ssize_t k = 0; k < nkeys && ok; k++) {
            Token *t = &row[k];
            switch (kinds[k]) {
            case K_ID:
                if (id_int < 0)
                    id_int = t->integer == 1;
                if ((t->integer == 1) != id_int || t->integer == 0 || t->n == 0
                    || (t->n == 2 && t->s[0] == '-' && t->s[1] == '0')) {
                    ok = 0; /* (kinds of ids mixed, a float id, an empty name, "-0") */
                    break;
                }
                if (id_int) {
                    long long v = int_value(t->s, t->n);
                    if (out != NULL && PyList_GET_SIZE(out) > 0 && v <= last_id)
                        increasing = 0;
                    last_id = v;
                } else if (memchr(t->s, '!', (size_t)t->n) != NULL) {
                    ok = 0;
                    break;
                }
                if (memmem(t->s, (size_t)t->n, wl, (size_t)wl_len) != NULL) {
                    ok = 0; /* (the name holds the workload's: the general path) */
                    break;
                }
                id = PyUnicode_New(wl_len + 1 + t->n, 127);
                if (id == NULL)
                    goto job_failed;
                memcpy(PyUnicode_1BYTE_DATA(id), wl, (size_t)wl_len);
                PyUnicode_1BYTE_DATA(id)[wl_len] = '!';
                memcpy(PyUnicode_1BYTE_DATA(id) + wl_len + 1, t->s, (size_t)t->n);
                break;
            case K_SUBTIME:
            case K_WALLTIME: {
                int *kind = kinds[k] == K_SUBTIME ? &sub_int : &wall_int;
                if (t->integer < 0 || (*kind >= 0 && *kind != t->integer)) {
                    ok = 0;
                    break;
                }
                *kind = t->integer;
                double v;
                if (t->integer) {
                    long long x = int_value(t->s, t->n);
                    if (x < -EXACT || x > EXACT) {
                        ok = 0;
                        break;
                    }
                    v = (double)x;
                } else {
                    v = double_value(t->s, t->n);
                    if (v == -1.0 && PyErr_Occurred()) {
                        PyErr_Clear(); /* (not a number token: the general path) */
                        ok = 0;
                        break;
                    }
                    if (!isfinite(v)) {
                        ok = 0;
                        break;
                    }
                }
                if (kinds[k] == K_SUBTIME) {
                    sub = PyFloat_FromDouble(v);
                    if (sub == NULL)
                        goto job_failed;
                    break;
                }
                if (v != -1.0 && !(v > 0.0)) {
                    ok = 0;
                    break;
                }
                {  /* one float per distinct walltime (borrowed: the table keeps it) */
                    unsigned char bits[8];
                    memcpy(bits, &v, 8);
                    wall = table_keep(&wtab, bits, 8, make_float, NULL);
                    if (wall == NULL)
                        goto job_failed;
                }
                break;
            }
            case K_RES:
                if (t->integer != 1 || t->s[0] == '-') {
                    ok = 0;
                    break;
                }
                {
                    long long r = int_value(t->s, t->n);
                    if (r <= 256) {
                        res = PyLong_FromLongLong(r); /* (shared by Python) */
                        if (res == NULL)
                            goto job_failed;
                        break;
                    }
                    unsigned char bits[8];  /* one int per distinct size above 256 */
                    memcpy(bits, &r, 8);
                    res = table_keep(&stab, bits, 8, make_int, NULL);
                    if (res == NULL)
                        goto job_failed;
                    Py_INCREF(res);
                }
                break;
            case K_PROFILE:
                if (t->n > INLINE) { /* (long names: interned each time) */
                    profile = PyUnicode_FromStringAndSize((const char *)t->s, t->n);
                    if (profile == NULL)
                        goto job_failed;
                    PyUnicode_InternInPlace(&profile);
                    if (PySet_Add(used, profile) < 0)
                        goto job_failed;
                    break;
                }
                /* one interned name per distinct profile, found from its bytes */
                profile = table_keep(&ptab, t->s, t->n, make_name, used);
                if (profile == NULL)
                    goto job_failed;
                Py_INCREF(profile);
                break;
            }
        }
        if (!ok) {
            Py_XDECREF(id);
            Py_XDECREF(sub);
            Py_XDECREF(res);
            Py_XDECREF(profile);
            goto none;
        }
        if (shape == NULL) {
            shape = PyObject_CallFunction(shape_of, "Oii", keys, sub_int == 1, wall_int == 1);
            if (shape == NULL)
                goto job_failed;
        }
        PyObject *job = new_object(job_type);
        if (job == NULL || set_slot(sl[0], job, id) < 0 || set_slot(sl[1], job, workload) < 0
            || set_slot(sl[2], job, Py_None) < 0 || set_slot(sl[3], job, sub) < 0
            || set_slot(sl[4], job, wall) < 0 || set_slot(sl[5], job, res) < 0
            || set_slot(sl[6], job, profile) < 0 || set_slot(sl[7], job, shape) < 0
            || PyList_Append(out, job) < 0) {
            Py_XDECREF(job);
            goto job_failed;
        }
        Py_DECREF(job);
        Py_DECREF(id);
        Py_DECREF(sub);
        Py_DECREF(res);
        Py_DECREF(profile);
        if (expect(&j, ','))
            continue;
        if (expect(&j, ']'))
            break;
        goto none;
    job_failed:
        Py_XDECREF(id);
        Py_XDECREF(sub);
        Py_XDECREF(res);
        Py_XDECREF(profile);
        goto done;
    }
    stop = j.p;
    if (!other_keys(&j))
        goto none;
    result = Py_BuildValue("nnOOO", (Py_ssize_t)(start - (const unsigned char *)view.buf),
                           (Py_ssize_t)(stop - (const unsigned char *)view.buf), out, used,
                           (id_int == 1 && increasing) ? Py_True : Py_False);
    goto done;
none:
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&view);
    PyMem_Free(row);
    Py_XDECREF(keys);
    Py_XDECREF(shape);
    Py_XDECREF(out);
    Py_XDECREF(used);
    Py_XDECREF(minus_one);
    table_free(&ptab);
    table_free(&wtab);
    table_free(&stab);
    return result;
}

/* ------------------------------------------------------------------ module */

static PyMethodDef methods[] = {
    {"numbers_agree", numbers_agree, METH_O,
     "whether every number of a JSON text reads the same in orjson as in the reference"},
    {"uniform_jobs", uniform_jobs, METH_VARARGS,
     "the Job records of a block of uniform job objects, or None"},
    {"scan_jobs", scan_jobs, METH_VARARGS,
     "the Job records of a workload's plain jobs array, read from its text, or None"},
    {"delay_profiles", delay_profiles, METH_VARARGS,
     "each profile's DelayProfile when it is a plain delay profile, else None"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_cload",
    "The native loader of large workloads (see workload/native.py).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__cload(void) {
    s_type = PyUnicode_InternFromString("type");
    s_delay = PyUnicode_InternFromString("delay");
    s_ret = PyUnicode_InternFromString("ret");
    if (s_type == NULL || s_delay == NULL || s_ret == NULL)
        return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (m != NULL && PyModule_AddIntConstant(m, "API", API_VERSION) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
