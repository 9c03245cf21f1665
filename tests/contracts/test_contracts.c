/* tests/contracts/test_contracts.c -- the preconditions of the proved decoders (the ACSL
 * `requires` that `make prove` checks at every call its drivers make) are checked at run time
 * too: linked against a library built with -DNPZS_CONTRACTS (the sanitizer build), each call that
 * breaks one aborts (in a child process), and calls that keep them return what they should.
 * Usage: test_contracts [--off] [--only SUBSTR] [--list] (--off: a library built without the
 * checks, where the broken calls are not made; the groups: kept, broken).  Last line
 * `contracts: N passed, M failed`. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NPZS_CHECK_MAIN
#include "../c/check.h"
#include "internal.h"
#include "zrec/zrec.h"

static uint8_t buf[70000];

/* fn in a child, its stderr (the assert's message) discarded: 1 when SIGABRT ended it */
static int aborts(void (*fn)(void)) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return 0;
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stderr)) _exit(3);
        fn();
        _exit(0);
    }
    int st = 0;
    if (waitpid(pid, &st, 0) != pid) return 0;
    return WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT;
}

/* each breaks one precondition, and only that one */
static void name_empty(void) {
    npzs__zerr e;
    (void)npzs__zr_name(buf, 0, 0, &e);
}
static void name_too_long(void) {
    npzs__zerr e;
    (void)npzs__zr_name(buf, 65536, 0, &e);
}
static void extra_null(void) {
    npzs__zerr e;
    const uint8_t *z;
    size_t zl;
    (void)npzs__zr_extra(NULL, 4, 1, &z, &zl, &e);
}
static void extra_too_long(void) {
    npzs__zerr e;
    const uint8_t *z;
    size_t zl;
    (void)npzs__zr_extra(buf, 65536, 1, &z, &zl, &e);
}
static void crc_null(void) { (void)npzs__crc32(0, NULL, 5); }
static void crc_with_null(void) { (void)npzs__crc32_with(0, 0, NULL, 1); }
static void crc_fold_null(void) { (void)npzs__crc32_fold(0, NULL, 1); }
static void sip_null(void) {
    uint64_t key[2] = {1, 2};
    (void)npzs__siphash13(key, NULL, 3);
}
static void locate_bad_size(void) {
    npzs__tailview v = {buf, NULL, 100, 0, 0, 99}; /* size is not base + alen + blen */
    npzs__zf_end e;
    (void)npzs__zf_locate(&v, 0, &e);
}
static void locate_null_span(void) {
    npzs__tailview v = {NULL, NULL, 100, 0, 0, 100};
    npzs__zf_end e;
    (void)npzs__zf_locate(&v, 0, &e);
}
static void utf8_null(void) { (void)npzs__utf8_valid(NULL, 2); }
static void header_null(void) {
    npzs_parser *p = npzs_new(NULL, NULL);
    npzs__hdr x = npzs__hdr_of(p);
    (void)npzs__parse_header(&x, NULL, 10, 0, 10);
}
static void header_bad_mode(void) {
    npzs_parser *p = npzs_new(NULL, NULL);
    npzs__hdr x = npzs__hdr_of(p);
    (void)npzs__parse_header_mode(&x, buf, 10, 0, 10, NPZS__HDR_FAST + 1);
}

static const struct {
    const char *name;
    void (*fn)(void);
} BROKEN[] = {
    {"npzs__zr_name with n == 0", name_empty},
    {"npzs__zr_name with n > 65535", name_too_long},
    {"npzs__zr_extra without bytes", extra_null},
    {"npzs__zr_extra with n > 65535", extra_too_long},
    {"npzs__crc32 without bytes", crc_null},
    {"npzs__crc32_with without bytes", crc_with_null},
    {"npzs__crc32_fold without bytes", crc_fold_null},
    {"npzs__siphash13 without bytes", sip_null},
    {"npzs__zf_locate with a size that is not base + alen + blen", locate_bad_size},
    {"npzs__zf_locate with a span without bytes", locate_null_span},
    {"npzs__utf8_valid without bytes", utf8_null},
    {"npzs__parse_header without bytes", header_null},
    {"npzs__parse_header_mode with an unknown mode", header_bad_mode},
};

/* calls that keep the contracts */
static void test_kept(void) {
    npzs__zerr e;
    const uint8_t *z;
    size_t zl;
    CHECK(npzs__zr_name((const uint8_t *)"a.npy", 5, 0, &e) == 0, "a.npy is a good name");
    CHECK(npzs__zr_name((const uint8_t *)"../a.npy", 8, 0, &e) != 0, "../a.npy is refused");
    memset(buf, 0, sizeof buf);
    CHECK(npzs__zr_name(buf, 65535, 0, &e) != 0, "a name of 65535 zero bytes is refused, not read past");
    CHECK(npzs__zr_extra(NULL, 0, 1, &z, &zl, &e) == 0 && z == NULL, "an empty extra field");
    CHECK(npzs__zr_extra(buf, 65535, 1, &z, &zl, &e) == 0, "65535 zero bytes of extra: empty fields and 3 zero bytes");
    buf[0] = 0x55;
    buf[2] = 0xFF;
    buf[3] = 0xFF; /* a field of 65535 bytes in 65535 bytes of extra */
    CHECK(npzs__zr_extra(buf, 65535, 1, &z, &zl, &e) != 0, "a field longer than the extra overruns");
    memset(buf, 0, sizeof buf);
    CHECK(npzs__crc32(0, (const uint8_t *)"123456789", 9) == 0xCBF43926u, "CRC-32 check value");
    CHECK(npzs__crc32(0x1234u, NULL, 0) == 0x1234u, "an empty CRC-32 without bytes");
    uint64_t key[2] = {0, 0};
    CHECK(npzs__siphash13(key, NULL, 0) == npzs__siphash13(key, buf, 0), "SipHash of nothing");
    npzs__tailview v = {buf, NULL, 22, 0, 0, 22};
    memcpy(buf, "PK\x05\x06", 4);
    npzs__zf_end fe;
    CHECK(npzs__zf_locate(&v, 0, &fe) == 0 && fe.eocd_off == 0, "an empty archive's end record");
    CHECK(npzs__utf8_valid((const uint8_t *)"\xC3\xA9", 2) == 1 && npzs__utf8_valid(NULL, 0) == 1, "UTF-8");
}

/* calls that break one each: each aborts (off: a library without the checks, the calls not made) */
static void test_broken(int off) {
    if (off) {
        for (size_t i = 0; i < sizeof BROKEN / sizeof BROKEN[0]; i++) CHECK(1, "%s", BROKEN[i].name);
        printf("(a build without NPZS_CONTRACTS: the %zu broken calls not made)\n", sizeof BROKEN / sizeof BROKEN[0]);
    } else {
        for (size_t i = 0; i < sizeof BROKEN / sizeof BROKEN[0]; i++)
            CHECK(aborts(BROKEN[i].fn), "%s aborts", BROKEN[i].name);
    }
}

int main(int argc, char **argv) {
    if (check_args(&argc, argv)) return 2;
    int off = argc > 1 && strcmp(argv[1], "--off") == 0;
    if (check_group("kept")) test_kept();
    if (check_group("broken")) test_broken(off);
    return check_done("contracts");
}
