/* io.c -- the input's bytes: FILE or stdin, read sequentially in large pieces (never a seek) and
 * pushed to whoever takes them (run.c's drive: a parser; vlen's and trace's own), or the rest of
 * a regular file mapped for the parallel-inflate helper. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <pthread.h>
#include <signal.h>

#include "cli.h"
#include "output.h"

int cli_open(const char *path, const char **label, char *err, size_t errlen) {
    *label = "-";
    if (!path || !strcmp(path, "-")) return 0;
    *label = path;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s", strerror(errno));
        return -1;
    }
    return fd;
}

volatile sig_atomic_t cli_interrupted;

/* A non-blocking input (event-loop runtimes hand their children such pipes and sockets) is
 * waited for, not failed.  A signal extract catches (cli_interrupted) ends the read. */
static ssize_t read_some(int fd, void *buf, size_t n) {
    for (;;) {
        if (cli_interrupted) {
            errno = EINTR;
            return -1;
        }
        ssize_t r = read(fd, buf, n);
        if (r >= 0) return r;
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
        struct pollfd pf = {fd, POLLIN, 0};
        if (poll(&pf, 1, -1) < 0 && errno != EINTR) return -1;
    }
}

/* The read buffer: one a thread, kept for the next input (a batch of small files would map and
 * unmap it for each), on a page boundary.  The kernel's copy from the page cache runs up to 4x
 * slower into a buffer that starts a few bytes (8 to 24) past the file's offset within its page
 * (its loads wait on its own stores to addresses 4 KiB apart), and malloc puts a block it maps
 * 16 bytes past a page: with the sandbox, whose set-up raises malloc's mapping threshold, the
 * buffer was such a block, and reading a 512 MiB .npy took 74 ms against 56 (bench/README.md,
 * "A plain .npy mapped"). */
static _Thread_local unsigned char *rbuf;

static unsigned char *read_buffer(void) {
    void *b = NULL;
    if (!rbuf && posix_memalign(&b, CLI_READ_ALIGN, CLI_READ_SIZE) == 0) rbuf = b;
    return rbuf;
}

void cli_read_buffer_free(void) {
    free(rbuf);
    rbuf = NULL;
}

int cli_read_loop(int fd, const char *prog, const char *label, uint64_t feed, cli_push_fn push, cli_eof_fn at_eof,
                  void *ctx) {
    return cli_read_loop_err(fd, prog, label, feed, push, at_eof, ctx, NULL, 0, NULL);
}

int cli_read_loop_err(int fd, const char *prog, const char *label, uint64_t feed, cli_push_fn push, cli_eof_fn at_eof,
                      void *ctx, char *err, size_t errlen, cli_divert_fn divert) {
#ifdef F_SETPIPE_SZ
    if (fd == 0) (void)fcntl(fd, F_SETPIPE_SZ, (int)CLI_PIPE_SIZE); /* a larger pipe where stdin is one */
#endif
    unsigned char *buf = read_buffer();
    int status = -1, eof = 0;
    uint64_t total = 0;
    if (!buf) {
        fprintf(ERR, "%s: out of memory\n", prog);
        status = 2;
    }
    while (status < 0) {
        ssize_t r = 0;
        if (!eof && divert && (status = divert(ctx, total)) >= 0) break;
        if (!eof) {
            r = read_some(fd, buf, CLI_READ_SIZE);
            if (r < 0) {
                /* a directory given where a file goes: say how a tree is read */
                const char *why = strerror(errno), *how = errno == EISDIR ? CLI_TREE_HINT : "";
                if (err) snprintf(err, errlen, "read: %s%s", why, how);
                else cli_say(prog, label, NULL, NULL, ": read: %s%s", why, how);
                status = 2;
                break;
            }
            if (r == 0) {
                eof = 1;
                at_eof(ctx);
            }
            total += (uint64_t)r;
        }
        size_t off = 0, len = (size_t)r;
        do {
            size_t n = len - off;
            if (feed && n > feed) n = (size_t)feed;
            npzs_in in = {buf + off, n, 0};
            status = push(ctx, &in);
            off += in.pos;
            if (status < 0 && in.pos < in.size) { /* cannot happen: NEED_INPUT means all was used */
                fprintf(ERR, "%s: internal error: input left over\n", prog);
                status = 2;
            }
        } while (off < len && status < 0);
        if (eof && status < 0) {
            fprintf(ERR, "%s: internal error: no verdict\n", prog);
            status = 2;
        }
    }
    return status;
}

/* ---- a regular file mapped ---------------------------------------------------------------
 * With workers (-j N), a regular file is read until a worker starts (a member large enough to
 * gain from one), and the rest of it is then mapped and pushed with npzs_par_stable_input: the
 * helper holds those bytes where they are, so the reading thread copies nothing and the scout
 * reaches the next members at once (bench/README.md).  Files with no such member are read as any
 * input: their memory is that of one thread.  With one thread, a file larger than one read is
 * mapped after it (run.c, map_whole): the CRC-32 reads the pages in place, the kernel copies
 * nothing, and the pages passed are dropped as the pushes go (cli_map_passed).
 *
 * Only where nothing but the CRC-32 reads a member's bytes (check and ls without --sha256 or a
 * policy: run.c's data_read).  A page of a private mapping nobody wrote follows the file, so a
 * byte the parser reads twice can differ between the reads: a stored member's bytes are read in
 * place by each check (the value checks, the CRC-32, the hash, each a pass of its own) and then by
 * the command (extract writes them from the DATA events); over a file rewritten meanwhile, extract
 * would write bytes the CRC-32 never covered, and check report a hash of bytes other than those it
 * checked.  Read, each byte is copied once into memory of the process's own, and every check and
 * the output see that copy.  The mapping stays until the helper's parser is reset or freed
 * (cli_unmap, called by run.c), since workers may still read it after the verdict.  A file that
 * shrinks while it is mapped raises SIGBUS on the pages past its new end: the handler maps zero
 * pages there and marks the file, which is then reported as an I/O failure (as a read error would
 * be, cli_map_changed), whatever the parser made of the zeros. */
#define MAPS 256 /* files mapped at once: one a thread (-P N) */
static struct {
    uintptr_t addr; /* 0: free (atomic) */
    size_t len;
    volatile sig_atomic_t bad;
} maps[MAPS];
static _Thread_local int my_map = -1;
static uintptr_t page_size;

static void on_sigbus(int sig, siginfo_t *si, void *uc) {
    (void)uc;
    uintptr_t a = (uintptr_t)si->si_addr, pg = page_size;
    for (int i = 0; i < MAPS; i++) {
        uintptr_t m = __atomic_load_n(&maps[i].addr, __ATOMIC_ACQUIRE);
        if (m && a >= m && a < m + maps[i].len) {
            uintptr_t from = a & ~(pg - 1);
            if (mmap((void *)from, m + maps[i].len - from, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
                MAP_FAILED)
                break;
            maps[i].bad = 1;
            return;
        }
    }
    signal(sig, SIG_DFL); /* not a mapped input's: the fault is re-raised as it was */
}

static void catch_sigbus_once(void) {
    page_size = (uintptr_t)sysconf(_SC_PAGESIZE);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, NULL);
}

/* The handler, installed once (the first file mapped, by whichever thread). */
static void catch_sigbus(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, catch_sigbus_once);
}

/* The thread's mapped file, unmapped (its helper's jobs are over: reset or freed). */
void cli_unmap(void) {
    if (my_map < 0) return;
    munmap((void *)maps[my_map].addr, maps[my_map].len);
    __atomic_store_n(&maps[my_map].addr, 0, __ATOMIC_RELEASE);
    my_map = -1;
}

int cli_map_file(int fd, uint64_t from, cli_map *m) {
    struct stat st;
    if (my_map >= 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 || (uint64_t)st.st_size <= from ||
        (uint64_t)st.st_size > SIZE_MAX)
        return -1;
    for (int i = 0; i < MAPS; i++) {
        uintptr_t none = 0;
        if (!__atomic_compare_exchange_n(&maps[i].addr, &none, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) continue;
        void *at = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (at == MAP_FAILED) {
            __atomic_store_n(&maps[i].addr, 0, __ATOMIC_RELEASE);
            return -1;
        }
        (void)madvise(at, (size_t)st.st_size, MADV_SEQUENTIAL);
#ifdef MADV_NOHUGEPAGE
        /* no 2 MiB mappings of the page cache's large folios at a fault: check's peak RSS on a
         * 512 MiB .npy was 6.4 MiB without it, 4.5 MiB with it (the kernel still maps a folio
         * whole: bench/README.md, "A plain .npy mapped") */
        (void)madvise(at, (size_t)st.st_size, MADV_NOHUGEPAGE);
#endif
        maps[i].len = (size_t)st.st_size;
        maps[i].bad = 0;
        catch_sigbus();
        __atomic_store_n(&maps[i].addr, (uintptr_t)at, __ATOMIC_RELEASE);
        m->b = at;
        m->len = (size_t)st.st_size;
        m->dropped = 0;
        m->slot = my_map = i;
        return 0;
    }
    return -1;
}

void cli_map_passed(cli_map *m, uint64_t passed) {
    size_t upto = (size_t)(passed < m->len ? passed : m->len) & ~(size_t)(page_size - 1);
    if (upto >= m->dropped + CLI_MAP_SLICE) {
        (void)madvise((void *)(uintptr_t)(m->b + m->dropped), upto - m->dropped, MADV_DONTNEED);
        m->dropped = upto;
    }
}

int cli_map_changed(const cli_map *m, int fd) {
    struct stat st;
    return maps[m->slot].bad || fstat(fd, &st) < 0 || (uint64_t)st.st_size != m->len;
}
