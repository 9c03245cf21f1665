/* policy.h -- policies: their JSON reader (json.c), the compiled policy (compile.c), a member's key
 * to its spec (keys.c), the run state a parser keeps while it enforces one (enforce.c), the value
 * checks on array data (values.c) and SHA-256 (bytes/sha256.c): the parts internal.h includes. */
#ifndef NPZS_POLICY_H
#define NPZS_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "npzstream.h"
#include "../bytes/bytes.h"

#define NPZS_JSON_MAX_DEPTH 64          /* nesting of a policy's JSON */
#define NPZS_POLICY_MAX_TEXT (1u << 20) /* bytes of a policy's JSON */
#define NPZS_POLICY_MAX_MEM (64u << 20) /* bytes a compiled policy may hold */
#define NPZS_SNIFF_BYTES 16             /* a blob's first bytes that its sniff reads */

/* ---- the arena everything of a policy lives in ------------------------------------------------ */
typedef struct npzs__pblock {
    struct npzs__pblock *next;
    size_t used, size;
    _Alignas(8) uint8_t data[];
} npzs__pblock;
typedef struct npzs__sortent { /* a name being sorted: its first 8 bytes (big-endian, 0-padded) */
    uint64_t head;
    const void *item; /* what it names */
} npzs__sortent;
typedef struct npzs__parena {
    npzs_allocator al;
    npzs__pblock *head;
    size_t used, cap;
    npzs__sortent *sort; /* the sorts' scratch (sort_cap entries), reused: sorts do not nest */
    size_t sort_cap;
    uint64_t work; /* comparisons made compiling (sorts, searches): what the tests count */
} npzs__parena;
void *npzs__parena_alloc(npzs__parena *a, size_t n);
void npzs__parena_free(npzs__parena *a);

/* Sorting names (json.c): the reader's duplicate keys, the compiler's exact keys, field names and
 * the patterns' literals.  npzs__sort_room gives room for n entries (2n: the sort's scratch is the
 * second half), NULL out of memory; the caller sets each entry's item, npzs__sort_names sorts the
 * n first by name(item) (bytewise, a prefix first), stably: O(n log n) comparisons, most of them
 * on the heads alone. */
typedef const char *(*npzs__item_name)(const void *item, uint32_t *len);
npzs__sortent *npzs__sort_room(npzs__parena *a, size_t n);
void npzs__sort_names(npzs__parena *a, npzs__sortent *e, size_t n, npzs__item_name name);
int npzs__bytes_cmp(const char *x, size_t xn, const char *y, size_t yn);
/* A set of names kept as indices sorted by name, found by binary search (O(log n) comparisons a
 * name): name i of the set at ctx; npzs__find_name says where the name (key, kn) is in
 * ix[0 .. n) (1), or would go (0): *at.  *work counts the comparisons. */
typedef const char *(*npzs__set_name)(const void *ctx, uint32_t i, uint32_t *len);
int npzs__find_name(const uint32_t *ix, size_t n, npzs__set_name name, const void *ctx, const char *key, size_t kn,
                    size_t *at, uint64_t *work);

/* ---- json.c: a JSON value --------------------------------------------------------------------- */
enum { NPZS_J_NULL = 1, NPZS_J_FALSE, NPZS_J_TRUE, NPZS_J_NUM, NPZS_J_STR, NPZS_J_ARR, NPZS_J_OBJ };
typedef struct npzs__jv {
    uint8_t t;
    uint8_t frac;                /* NUM: written with a fraction or an exponent */
    uint32_t len;                /* STR: decoded bytes; NUM: text bytes; ARR, OBJ: children */
    uint64_t at;                 /* offset of the value in the text */
    const char *s;               /* STR: decoded UTF-8, NUL-terminated; NUM: the text (not terminated) */
    struct npzs__jv *kid, *next; /* ARR, OBJ: the first child; the next sibling */
    const char *key;             /* a member of an object: its key, decoded, NUL-terminated */
    uint32_t key_len;
    uint64_t key_at;
} npzs__jv;
/* The value of the n bytes at s, in the arena; NULL with *why and *at (a byte offset) on a fault. */
npzs__jv *npzs__json_read(npzs__parena *a, const uint8_t *s, size_t n, const char **why, uint64_t *at);

/* ---- a compiled policy (compile.c) -------------------------------------------------------------- */
/* A dtype the policy allows: a dtype.str (STR: one dtype), a NumPy name (CLASS: either byte order,
 * perhaps any size or unit), a structured layout (FIELDS) or, as a field's type, a subarray (SUB). */
enum { NPZS_PDT_STR = 1, NPZS_PDT_CLASS, NPZS_PDT_FIELDS, NPZS_PDT_SUB };
struct npzs__pfield;
typedef struct npzs__pdtype {
    uint8_t kind;     /* NPZS_PDT_* */
    char code;        /* CLASS: the type code ('f', 'i', 'u', 'c', 'b', 'U', 'S', 'V', 'M', 'm') */
    uint64_t size;    /* CLASS: the itemsize; 0: any.  FIELDS: the itemsize, when has_itemsize */
    const char *unit; /* CLASS 'M', 'm': "[ns]"...; NULL: any unit */
    const char *str;  /* STR: dtype.str exactly */
    uint32_t nfields; /* FIELDS: in the descr's order */
    struct npzs__pfield *fields;
    uint8_t has_offsets;  /* FIELDS: offsets given (else packed: each field where the last ended) */
    uint8_t has_itemsize; /* FIELDS: itemsize given (else the end of the last field, or with
                                   offsets the largest end, as NumPy's) */
    uint32_t ndim;        /* SUB: the subarray's shape */
    uint64_t *shape;
    struct npzs__pdtype *base; /* SUB: its element type */
} npzs__pdtype;
typedef struct npzs__pfield {
    const char *name;
    uint32_t name_len;
    const char *title; /* NULL: no title */
    uint32_t title_len;
    uint64_t offset;   /* when the list has offsets */
    npzs__pdtype type; /* a field with a shape: a SUB */
} npzs__pfield;

enum { NPZS_PSH_FIXED = 1, NPZS_PSH_VAR, NPZS_PSH_ANY, NPZS_PSH_REST };
typedef struct npzs__pdim {
    uint8_t kind; /* NPZS_PSH_* */
    uint64_t v;   /* FIXED: the length; VAR: the dimension's index in policy->dims */
} npzs__pdim;

typedef struct npzs__pbound { /* one end of a range, as each kind of element compares with it */
    uint8_t on;
    double d;           /* float64 elements */
    float f;            /* float16, float32 elements */
    int64_t i;          /* signed integers (saturated: an integer bound rounded inwards) */
    uint64_t u;         /* unsigned integers */
    int none_i, none_u; /* no signed / unsigned value satisfies it (a bound beyond the type) */
} npzs__pbound;

enum { NPZS_PK_ANY = 0, NPZS_PK_ARRAY, NPZS_PK_BLOB };
typedef struct npzs__pspec {
    const char *key; /* the key or glob pattern, UTF-8, NUL-terminated */
    uint32_t key_len;
    uint8_t glob, optional, kind;
    uint8_t order;  /* 0 any, 1 little, 2 big */
    int8_t fortran; /* -1 any, else 0 or 1 */
    uint8_t finite, has_shape, has_sha;
    uint32_t ndt; /* 0: any dtype */
    npzs__pdtype *dt;
    uint32_t nshape;
    npzs__pdim *shape;
    uint64_t elem_min, elem_max;
    uint64_t max_bytes; /* UINT64_MAX: no cap */
    npzs__pbound lo, hi;
    uint8_t sha[32];
    unsigned sniffs; /* blobs: the sniff kinds allowed (bits 1 << NPZS_SNIFF_*); 0: any */
} npzs__pspec;

typedef struct npzs__pdimdef {
    const char *name;
    uint32_t name_len;
    uint64_t min, max;
} npzs__pdimdef;

/* The patterns' index (keys.c): each pattern filed under one literal it needs, the
 * literals the words of an Aho-Corasick automaton. */
typedef struct npzs__pglob { /* a pattern */
    uint32_t spec;           /* its spec */
    uint32_t min, max;       /* the code points a key it matches has (max UINT32_MAX: a '*') */
    uint32_t last;           /* one past its last ']' (0: none), for glob_match */
} npzs__pglob;
typedef struct npzs__pnode { /* a node of the automaton: a prefix of one or more literals */
    uint32_t kid;            /* its children: the nodes kid .. kid + nkid - 1, by byte */
    uint32_t fail;           /* the node of its longest proper suffix (0: the root) */
    uint32_t group;          /* the patterns filed under it (0: none) */
    uint32_t any, end;       /* the first node on its suffix chain (itself included) with patterns
                                   whose literal may be anywhere / must end the key (0: none) */
    uint16_t nkid;
    uint8_t byte; /* the byte into it */
} npzs__pnode;
typedef struct npzs__pgroup {        /* the patterns of one literal: gids[at ..], in the policy's order, */
    uint32_t at, nstart, nend, nany; /* those whose literal starts the key, ends it, is anywhere */
} npzs__pgroup;
/* A lookup's scratch, in the parser (a compiled policy is shared read-only). */
typedef struct npzs__pmatch {
    uint8_t *seen;               /* ngroup: a group's "anywhere" patterns were tried on this key */
    uint8_t gen;                 /* this key's mark in seen (cleared when it wraps) */
    uint64_t tried, steps, glob; /* what the tests count: patterns tried, steps of the automaton
                                   (and the exact keys' search), steps of glob_match */
} npzs__pmatch;

struct npzs_policy {
    npzs__parena a;
    uint32_t nspecs; /* members: in the JSON's order */
    npzs__pspec *specs;
    uint32_t nexact; /* the specs that are not globs, sorted by key */
    uint32_t *exact;
    uint32_t nglob; /* the specs that are globs, in the JSON's order */
    npzs__pglob *globs;
    uint32_t nbare, *bare;  /* the patterns without a literal character: tried on every key */
    uint32_t nnode, ngroup; /* the automaton (nnode 0: no pattern has a literal) */
    npzs__pnode *nodes;
    npzs__pgroup *groups;
    uint32_t *gids;
    uint32_t nrequired;
    npzs__pspec *array; /* "array": a .npy's */
    uint32_t ndims;
    npzs__pdimdef *dims;
    uint8_t format; /* 0 any, else NPZS_FORMAT_* */
    uint8_t allow_other;
    uint8_t hash_all;         /* "hash": "sha256" */
    unsigned blob_sniffs;     /* allow_blobs: 0 none, else the kinds allowed (bits) */
    uint32_t max_members;     /* 0: none */
    uint64_t max_total_bytes; /* UINT64_MAX: none */
};

/* The policy's state for one input, in the parser (enforce.c). */
typedef struct npzs__pstate {
    const npzs_policy *pol;
    void *mem; /* one allocation through the parser's hooks: the arrays below */
    size_t mem_size;
    uint64_t *dimval;        /* ndims: the bound values */
    uint8_t *dimset, *seen;  /* ndims: bound; nspecs: an exact spec's member was seen */
    uint32_t *dimfrom;       /* ndims: the member that bound it */
    const npzs__pspec *spec; /* the current member's (NULL: none applies) */
    npzs__pmatch match;      /* its seen: the arrays' last (ngroup bytes) */
} npzs__pstate;

/* The spec for a member's key (without ".npy"): an exact key, else the first pattern in the
 * policy's order that matches (fnmatchcase), through the index; NULL when none.  *index: the
 * spec's.  For the tests: npzs__glob_match is one pattern against one key. */
const npzs__pspec *npzs__pol_spec_for(const npzs_policy *pol, const uint8_t *key, size_t n, uint32_t *index,
                                      npzs__pmatch *m);
int npzs__glob_match(const uint8_t *pat, size_t pn, const uint8_t *s, size_t sn, uint64_t *steps);
/* compile.c: the name a policy gives the scalar dtype of kind code and size bytes ("float32"), or NULL */
const char *npzs__pdtype_name(char code, uint64_t size);
/* keys.c, for compile.c: the patterns' index, made once (0, or -1 out of memory); name i of the
 * policy's specs (its exact keys' set) */
int npzs__keys_index(npzs_policy *pol);
const char *npzs__spec_name(const void *ctx, uint32_t i, uint32_t *len);

/* ---- values.c: the checks on an array's elements, as its data streams ---------------------------- */
/* FLOAT: float16/32/64 or bfloat16, each part of a complex number; NAT: a datetime64 or
 * timedelta64 (NaT: INT64_MIN); BOOL: 0 or 1 (any other byte is True, as NumPy reads it). */
enum { NPZS_VK_FLOAT = 1, NPZS_VK_SINT, NPZS_VK_UINT, NPZS_VK_BOOL, NPZS_VK_NAT };
typedef struct npzs__vcheck {
    uint8_t on;
    uint8_t w;   /* bytes of an element checked (a complex number is two floats) */
    uint8_t cls; /* NPZS_VK_* */
    uint8_t big; /* big-endian */
    uint8_t finite;
    uint8_t bf16; /* FLOAT, w 2: bfloat16 (else float16) */
    npzs__pbound lo, hi;
    uint8_t carry[8]; /* the first bytes of an element cut by a chunk's end */
    uint8_t carry_len;
} npzs__vcheck;
/* The n bytes at s, the array data's bytes from position pos (pos % w == carry_len): returns how
 * many of them are fine; fewer than n when an element fails, the count then ending with that
 * element, whose first byte is at array data position *bad_at, *rule its rule (enum npzs_rule). */
size_t npzs__values_scan(npzs__vcheck *v, const uint8_t *s, size_t n, uint64_t pos, uint64_t *bad_at, int *rule);

#endif
