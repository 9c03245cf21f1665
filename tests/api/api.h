/* tests/api/api.h -- what the API suite's files share: the driver that pushes one input through a
 * parser and folds what it gives into a digest (driver.c), its switches, and each file's groups
 * (run by main.c).  See main.c for what the suite checks. */
#ifndef NPZS_TESTS_API_H
#define NPZS_TESTS_API_H

#include <stddef.h>
#include <stdint.h>

#include "../c/check.h"
#include "common.h" /* fuzz/common.c: fz_run, fz_header_paths, the archive builders */
#include "internal.h"
#include "npzstream.h"

/* ---- the driver (driver.c) ---- */

/* headers compared between the fast and the general parser path, and how many took the fast one */
extern int check_paths;
extern long headers_seen, headers_fast;
/* into_mode: every array's data goes to a destination named with npzs_data_into; the events
 * must be the same, every DATA chunk at dst + pos; direct_bytes counts what inflate wrote there */
extern int into_mode;
extern int seq_mode; /* parse() calls npzs_npy_sequence */
/* npzs_events: parse() asks for ev_mask when mask_on; drive() hashes only the events in ev_mask
 * (END always), and with mask_on any other event delivered breaks the run's progress flag */
extern int mask_on;
extern unsigned ev_mask;
extern uint64_t direct_bytes, into_bad;

/* the digest of a run */
typedef struct run {
    uint64_t h;  /* events, data merged */
    int verdict; /* 1 END, <0 error */
    uint64_t err_off;
    long err_member;
    int events;
    int progress_ok;
    int zero_copy_ok;
} run;

uint64_t mix(uint64_t h, const void *p, size_t n);
#define MIXV(h, v) ((h) = mix((h), &(v), sizeof(v)))
const char *tree_check(const npzs_array_info *a, uint64_t *h);
uint64_t info_hash(const npzs_array_info *a, const char **why);
run drive(npzs_parser *p, const uint8_t *buf, size_t len, const size_t *sched, size_t nsched);
run parse(const uint8_t *buf, size_t len, const size_t *sched, size_t nsched, const npzs_limits *lim, check_alloc *cnt);
int same(const run *a, const run *b);
size_t rnd(size_t n);
uint8_t *npy_v(const char *t, int version, size_t data, size_t *len);
uint8_t *npy_of(const char *t, size_t data, size_t *len);

/* ---- the groups ---- */

/* files.c: every input file (test_path walks a directory, each file a group named by its path) */
long test_path(const char *path);
void test_files_summary(void);
/* input.c */
void test_many_members(void);
void test_changing_input(void);
void test_gathered_inflate(void);
void test_limit_numbers(void);
/* par.c: stable 0 copies the input, 1 holds it by reference from the first byte, 2 from the
 * second push on */
void test_par_input(int stable);
/* contract.c */
void test_contract(void);
void test_events_call(void);
/* names.c */
void test_siphash(void);
void test_zr_name(void);
/* dtype.c */
void test_deep_descr(void);
void test_array_size_rule(void);
void test_dtype_tree(void);
void test_header_memo(void);
/* tree.c */
void test_big_tree(void);
void test_tree_grows(void);
void test_pools_first(void);
void test_pool_full(void);
/* sequence.c */
void test_sequence(void);

#endif
