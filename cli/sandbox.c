/* sandbox.c -- see sandbox.h; what is confined and why each choice: SECURITY.md, "The sandbox".
 *
 * Two layers, each applied where it exists and skipped where it does not:
 *   - Landlock (Linux 5.13+, raw system calls: no library is needed for three calls): which files
 *     may still be opened, and how.  Every access right the kernel knows is handled, and only the
 *     listed inputs (read), the listed directories (read) and extract's destination (write) are
 *     granted.  From ABI 4 TCP bind/connect are handled too (no rule: refused), from ABI 6 signals
 *     to other processes and abstract unix sockets.
 *   - seccomp (libseccomp, Debian's libseccomp-dev: it knows every architecture's system call
 *     numbers and argument layouts, which a hand-written BPF program would have to repeat): an
 *     allow-list of the calls a parse needs; everything else fails with EPERM, so a refusal is an
 *     error the command reports (exit 2), never a silent kill or an unnoticed "ok".  Opening files
 *     for writing, exec, sockets and new processes are outside the list; threads (clone with
 *     CLONE_THREAD) are in it; clone3, whose flags sit in memory a filter cannot read, fails with
 *     ENOSYS, on which glibc falls back to clone, whose flags it can.
 * Landlock first, then seccomp: the filter refuses the Landlock calls. */
#define _GNU_SOURCE
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "npzstream.h"

#ifdef NPZS_HAVE_SECCOMP
#include <seccomp.h>
#endif

/* the sanitizer build: LeakSanitizer stops the world at exit from a traced helper process */
#if defined(__SANITIZE_ADDRESS__)
#define SB_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SB_SANITIZER 1
#endif
#endif

/* ---- Landlock ----------------------------------------------------------------------------------- */

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

/* the kernel's ABI (include/uapi/linux/landlock.h), spelled here: the installed headers may be
 * older than the running kernel */
#define LL_CREATE_RULESET_VERSION 1u
#define LL_RULE_PATH_BENEATH 1
struct ll_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net; /* ABI 4 */
    uint64_t scoped;             /* ABI 6 */
};
struct ll_path_beneath {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

#define LL_FS_EXECUTE (1ull << 0)
#define LL_FS_WRITE_FILE (1ull << 1)
#define LL_FS_READ_FILE (1ull << 2)
#define LL_FS_READ_DIR (1ull << 3)
#define LL_FS_REMOVE_DIR (1ull << 4)
#define LL_FS_REMOVE_FILE (1ull << 5)
#define LL_FS_MAKE_DIR (1ull << 7)
#define LL_FS_MAKE_REG (1ull << 8)
#define LL_FS_ABI1 ((1ull << 13) - 1) /* EXECUTE .. MAKE_SYM */
#define LL_FS_REFER (1ull << 13)      /* ABI 2 */
#define LL_FS_TRUNCATE (1ull << 14)   /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ull << 15)  /* ABI 5 */
/* the rights a rule on a file (not a directory) may carry */
#define LL_FS_FILE (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)
#define LL_NET_BIND_TCP (1ull << 0)
#define LL_NET_CONNECT_TCP (1ull << 1)
#define LL_SCOPE_ABSTRACT_UNIX (1ull << 0)
#define LL_SCOPE_SIGNAL (1ull << 1)

/* extract's destination: files made, written, renamed and removed beneath it (never run) */
#define LL_FS_WRITE_TREE \
    (LL_FS_WRITE_FILE | LL_FS_READ_DIR | LL_FS_REMOVE_DIR | LL_FS_REMOVE_FILE | LL_FS_MAKE_DIR | LL_FS_MAKE_REG | \
     LL_FS_REFER | LL_FS_TRUNCATE)

/* The kernel's Landlock ABI version, or -1 (errno: ENOSYS not built in, EOPNOTSUPP turned off). */
static long ll_abi(void) { return syscall(SYS_landlock_create_ruleset, NULL, (size_t)0, LL_CREATE_RULESET_VERSION); }

static struct ll_ruleset_attr ll_handled(long abi, size_t *size) {
    struct ll_ruleset_attr a = {LL_FS_ABI1, 0, 0};
    *size = sizeof a.handled_access_fs;
    if (abi >= 2) a.handled_access_fs |= LL_FS_REFER;
    if (abi >= 3) a.handled_access_fs |= LL_FS_TRUNCATE;
    if (abi >= 4) {
        a.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
        *size = offsetof(struct ll_ruleset_attr, scoped);
    }
    if (abi >= 5) a.handled_access_fs |= LL_FS_IOCTL_DEV;
    if (abi >= 6) {
        a.scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL;
        *size = sizeof a;
    }
    return a;
}

/* One rule: `want` beneath fd (a directory), or on it (a file: the rights a file can carry).  A
 * rule that cannot be added only narrows what is allowed (the file then cannot be opened: a read
 * error), so its failure is not an error here. */
static void ll_rule_fd(int rs, int fd, uint64_t want, uint64_t handled) {
    struct stat st;
    if (fstat(fd, &st) != 0) return;
    if (!S_ISDIR(st.st_mode)) want &= LL_FS_FILE;
    struct ll_path_beneath pb = {want & handled, fd};
    if (pb.allowed_access) (void)syscall(SYS_landlock_add_rule, rs, LL_RULE_PATH_BENEATH, &pb, 0u);
}

/* The same for a name; a name that does not resolve gets no rule (its open fails as it would). */
static void ll_rule_path(int rs, const char *path, uint64_t file_want, uint64_t dir_want, uint64_t handled) {
    if (!path || !strcmp(path, "-")) return; /* stdin: open already */
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st;
    if (fstat(fd, &st) == 0) ll_rule_fd(rs, fd, S_ISDIR(st.st_mode) ? dir_want : file_want, handled);
    close(fd);
}

/* 1 applied, 0 not in this kernel, -1 failed (errno). */
static int ll_apply(const cli_confine_spec *s) {
    long abi = ll_abi();
    if (abi < 1) return 0;
    size_t size;
    struct ll_ruleset_attr a = ll_handled(abi, &size);
    int rs = (int)syscall(SYS_landlock_create_ruleset, &a, size, 0u);
    if (rs < 0) return -1;
    uint64_t h = a.handled_access_fs;
    /* a listed name: read if it is a file; a directory given as a FILE only opens (reading it
     * then fails as without a sandbox: "Is a directory") */
    for (size_t i = 0; i < s->n_read_files; i++) ll_rule_path(rs, s->read_files[i], LL_FS_READ_FILE, LL_FS_READ_DIR, h);
    for (size_t i = 0; i < s->n_read_dirs; i++)
        ll_rule_path(rs, s->read_dirs[i], LL_FS_READ_FILE, LL_FS_READ_FILE | LL_FS_READ_DIR, h);
    for (size_t i = 0; i < s->n_write_dirfds; i++) ll_rule_fd(rs, s->write_dirfds[i], LL_FS_WRITE_TREE, h);
#ifdef SB_SANITIZER
    /* LeakSanitizer at exit reads /proc/self/maps and /proc/self/task */
    ll_rule_path(rs, "/proc", LL_FS_READ_FILE, LL_FS_READ_FILE | LL_FS_READ_DIR, h);
#endif
    int rc = (int)syscall(SYS_landlock_restrict_self, rs, 0u);
    int e = errno;
    close(rs);
    errno = e;
    return rc == 0 ? 1 : -1;
}

/* ---- seccomp ------------------------------------------------------------------------------------ */

#ifdef NPZS_HAVE_SECCOMP
/* What a parse needs, whatever the glibc: reads and writes on open descriptors, the file's
 * metadata, memory (malloc's brk/mmap/munmap/madvise, the mapping of -j N), threads' futexes and
 * signals, time.  Both the old and the new name of a call are listed (stat and newfstatat,
 * getdents and getdents64): glibc versions differ in which they use; one an architecture lacks is
 * skipped. */
static const int SC_ALLOW[] = {
    SCMP_SYS(read),
    SCMP_SYS(readv),
    SCMP_SYS(pread64),
    SCMP_SYS(preadv),
    SCMP_SYS(preadv2),
    SCMP_SYS(write),
    SCMP_SYS(writev),
    SCMP_SYS(pwrite64),
    SCMP_SYS(pwritev),
    SCMP_SYS(pwritev2),
    SCMP_SYS(close),
    SCMP_SYS(close_range),
    SCMP_SYS(dup),
    SCMP_SYS(dup2),
    SCMP_SYS(dup3),
    SCMP_SYS(fcntl),
    SCMP_SYS(lseek),
    SCMP_SYS(fstat),
    SCMP_SYS(stat),
    SCMP_SYS(lstat),
    SCMP_SYS(newfstatat),
    SCMP_SYS(statx),
    SCMP_SYS(fstatfs),
    SCMP_SYS(getdents),
    SCMP_SYS(getdents64),
    SCMP_SYS(readlink),
    SCMP_SYS(readlinkat),
    SCMP_SYS(access),
    SCMP_SYS(faccessat),
    SCMP_SYS(faccessat2),
    SCMP_SYS(getcwd),
    SCMP_SYS(fsync),
    SCMP_SYS(fdatasync),
    SCMP_SYS(poll),
    SCMP_SYS(ppoll),
    SCMP_SYS(select),
    SCMP_SYS(pselect6),
    SCMP_SYS(brk),
    SCMP_SYS(munmap),
    SCMP_SYS(mremap),
    SCMP_SYS(madvise),
    SCMP_SYS(futex),
    SCMP_SYS(set_robust_list),
    SCMP_SYS(get_robust_list),
    SCMP_SYS(rseq),
    SCMP_SYS(set_tid_address),
    SCMP_SYS(sched_yield),
    SCMP_SYS(sched_getaffinity),
    SCMP_SYS(getcpu),
    SCMP_SYS(clock_gettime),
    SCMP_SYS(clock_getres),
    SCMP_SYS(gettimeofday),
    SCMP_SYS(time),
    SCMP_SYS(clock_nanosleep),
    SCMP_SYS(nanosleep),
    SCMP_SYS(getpid),
    SCMP_SYS(gettid),
    SCMP_SYS(getppid),
    SCMP_SYS(getuid),
    SCMP_SYS(geteuid),
    SCMP_SYS(getgid),
    SCMP_SYS(getegid),
    SCMP_SYS(getrandom),
    SCMP_SYS(sysinfo),
    SCMP_SYS(uname),
    SCMP_SYS(umask),
    SCMP_SYS(getrlimit),
    SCMP_SYS(rt_sigaction),
    SCMP_SYS(rt_sigprocmask),
    SCMP_SYS(rt_sigreturn),
    SCMP_SYS(sigaltstack),
    SCMP_SYS(restart_syscall),
    SCMP_SYS(exit),
    SCMP_SYS(exit_group),
};
/* extract's: made, renamed and removed beneath its destination (Landlock says where) */
static const int SC_WRITE[] = {
    SCMP_SYS(creat),  SCMP_SYS(mkdir),  SCMP_SYS(mkdirat),  SCMP_SYS(unlink),    SCMP_SYS(unlinkat),
    SCMP_SYS(rmdir),  SCMP_SYS(rename), SCMP_SYS(renameat), SCMP_SYS(renameat2), SCMP_SYS(link),
    SCMP_SYS(linkat), SCMP_SYS(fchmod), SCMP_SYS(fchmodat), SCMP_SYS(ftruncate),
};
#ifdef SB_SANITIZER
/* LeakSanitizer's stop-the-world at exit: a helper made by clone (CLONE_UNTRACED, without
 * CLONE_THREAD) attaches to every thread with ptrace and signals them; never in a release build */
static const int SC_SANITIZER[] = {
    SCMP_SYS(ptrace), SCMP_SYS(prctl), SCMP_SYS(wait4), SCMP_SYS(waitid), SCMP_SYS(kill), SCMP_SYS(tgkill),
};
#endif

#define SC_OPEN_WRITE_FLAGS ((uint64_t)(O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND))
/* (O_TMPFILE needs O_WRONLY or O_RDWR: refused with them) */

/* argument `arg` equal to v (libseccomp's SCMP_An(SCMP_CMP_EQ, v) leaves datum_b to the
 * initializer's default, which clang's -Wmissing-field-initializers names) */
static struct scmp_arg_cmp sc_eq(unsigned arg, uint64_t v) {
    struct scmp_arg_cmp c = {arg, SCMP_CMP_EQ, v, 0};
    return c;
}

static void sc_allow_all(scmp_filter_ctx ctx, const int *nr, size_t n) {
    /* a call this architecture lacks is refused by libseccomp here: it stays refused */
    for (size_t i = 0; i < n; i++) (void)seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr[i], 0);
}

/* 1 applied, -1 failed (errno). */
static int sc_apply(const cli_confine_spec *s) {
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
    if (!ctx) {
        errno = ENOMEM;
        return -1;
    }
    /* a binary search over the call numbers rather than a list: each call a program makes passes
     * through the filter (libseccomp 2.5+; older ones keep the list) */
    (void)seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
    int writes = s->n_write_dirfds > 0;
    sc_allow_all(ctx, SC_ALLOW, sizeof SC_ALLOW / sizeof SC_ALLOW[0]);
    if (writes) sc_allow_all(ctx, SC_WRITE, sizeof SC_WRITE / sizeof SC_WRITE[0]);
    /* opening: for reading only, unless the command writes (extract: Landlock limits where) */
    if (writes) {
        seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(openat), 0);
        seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(open), 0);
    } else {
        seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(openat), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, SC_OPEN_WRITE_FLAGS, 0));
        seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(open), 1, SCMP_A1(SCMP_CMP_MASKED_EQ, SC_OPEN_WRITE_FLAGS, 0));
    }
    /* openat2's flags are in memory: ENOSYS, so that a caller falls back to openat */
    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2), 0);
    /* memory, never executable (libcrypto, the one library loaded late, is loaded before) */
    seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, (uint64_t)PROT_EXEC, 0));
    seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, (uint64_t)PROT_EXEC, 0));
    /* isatty (stdio's buffering, extract's terminal check); close-on-exec and blocking mode of a
     * descriptor (Python's os.set_inheritable, os.set_blocking): nothing else */
    seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1, sc_eq(1, (uint64_t)TCGETS));
    seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1, sc_eq(1, (uint64_t)FIOCLEX));
    seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1, sc_eq(1, (uint64_t)FIONCLEX));
    seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1, sc_eq(1, (uint64_t)FIONBIO));
    /* limits read, never set */
    seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prlimit64), 1, sc_eq(2, 0));
    /* threads, not processes: clone's flags are an argument the filter reads */
    seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
                     SCMP_A0(SCMP_CMP_MASKED_EQ, (uint64_t)CLONE_THREAD, (uint64_t)CLONE_THREAD));
#ifdef SB_SANITIZER
    sc_allow_all(ctx, SC_SANITIZER, sizeof SC_SANITIZER / sizeof SC_SANITIZER[0]);
    seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
                     SCMP_A0(SCMP_CMP_MASKED_EQ, (uint64_t)CLONE_UNTRACED, (uint64_t)CLONE_UNTRACED));
#else
    /* signals to this process only (raise, abort, pthread_kill) */
    uint64_t pid = (uint64_t)getpid();
    seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(kill), 1, sc_eq(0, pid));
    seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1, sc_eq(0, pid));
#endif
    /* clone3's flags are in memory: ENOSYS, on which glibc makes its threads with clone */
    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    int rc = seccomp_load(ctx);
    seccomp_release(ctx);
    if (rc < 0) {
        errno = -rc;
        return -1;
    }
    return 1;
}
#endif

/* ---- the test hook ------------------------------------------------------------------------------ */

static void probe_say(const char *what, int ok, int err) {
    if (ok) fprintf(stderr, "npzstream: sandbox probe %s: allowed\n", what);
    else fprintf(stderr, "npzstream: sandbox probe %s: refused (%s)\n", what, strerror(err));
}

/* a new process made and reaped: 1, or 0 (errno) */
static int probe_reap(pid_t pid) {
    if (pid < 0) return 0;
    if (pid == 0) _exit(0);
    (void)waitpid(pid, NULL, 0);
    return 1;
}

static void *probe_thread_fn(void *arg) { return arg; }

struct probe_clone_args { /* clone3's, first version (64 bytes) */
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};

static void probe_one(const char *item) {
    int ok = 0;
    errno = 0;
    if (!strncmp(item, "read=", 5)) {
        int fd = open(item + 5, O_RDONLY | O_CLOEXEC);
        ok = fd >= 0;
        if (ok) close(fd);
        probe_say("read", ok, errno);
    } else if (!strncmp(item, "write=", 6)) {
        int fd = open(item + 6, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        ok = fd >= 0 && write(fd, "x", 1) == 1;
        int e = errno;
        if (fd >= 0) close(fd);
        probe_say("write", ok, e);
    } else if (!strcmp(item, "exec")) {
        fflush(NULL);
        execl("/bin/echo", "echo", "npzstream-sandbox-probe-exec", (char *)NULL);
        probe_say("exec", 0, errno); /* returns only when refused */
    } else if (!strcmp(item, "socket") || !strcmp(item, "socket-unix")) {
        int fd = socket(item[6] ? AF_UNIX : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ok = fd >= 0;
        int e = errno;
        if (ok) close(fd);
        probe_say(item, ok, e);
    } else if (!strcmp(item, "fork")) {
        fflush(NULL);
        ok = probe_reap(fork());
        probe_say("fork", ok, errno);
    } else if (!strcmp(item, "vfork")) {
        fflush(NULL);
        ok = probe_reap(vfork());
        probe_say("vfork", ok, errno);
    } else if (!strcmp(item, "clone3")) {
        struct probe_clone_args ca;
        memset(&ca, 0, sizeof ca);
        ca.exit_signal = SIGCHLD;
        fflush(NULL);
        ok = probe_reap((pid_t)syscall(SYS_clone3, &ca, sizeof ca));
        probe_say("clone3", ok, errno);
    } else if (!strcmp(item, "mmap-exec")) {
        void *m = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        ok = m != MAP_FAILED;
        int e = errno;
        if (ok) munmap(m, 4096);
        probe_say("mmap-exec", ok, e);
    } else if (!strcmp(item, "thread")) {
        pthread_t t;
        int e = pthread_create(&t, NULL, probe_thread_fn, NULL);
        if (e == 0) pthread_join(t, NULL);
        probe_say("thread", e == 0, e);
    } else {
        fprintf(stderr, "npzstream: sandbox probe %s: unknown\n", item);
    }
}

static void probe_all(void) {
    const char *env = getenv(CLI_SANDBOX_PROBE_ENV);
    if (!env || !*env) return;
    char *list = strdup(env), *save = NULL;
    if (!list) return;
    for (char *it = strtok_r(list, ",", &save); it; it = strtok_r(NULL, ",", &save)) probe_one(it);
    free(list);
}

/* ---- the entry point ---------------------------------------------------------------------------- */

int cli_confine(const cli_confine_spec *s) {
    const char *prog = s->prog ? s->prog : "npzstream";
    if (!s->off) {
        if (s->hashing) (void)npzs_sha256_built(); /* libcrypto loaded while it still can be */
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
            fprintf(stderr, "%s: sandbox: no_new_privs: %s (--no-sandbox runs unconfined)\n", prog, strerror(errno));
            return -1;
        }
        if (ll_apply(s) < 0) {
            fprintf(stderr, "%s: sandbox: Landlock: %s (--no-sandbox runs unconfined)\n", prog, strerror(errno));
            return -1;
        }
#ifdef NPZS_HAVE_SECCOMP
        if (sc_apply(s) < 0) {
            fprintf(stderr, "%s: sandbox: seccomp: %s (--no-sandbox runs unconfined)\n", prog, strerror(errno));
            return -1;
        }
#endif
    }
    probe_all();
    return 0;
}

void cli_sandbox_info(FILE *f) {
#ifdef NPZS_HAVE_SECCOMP
    const struct scmp_version *v = seccomp_version();
    if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0 && errno == EINVAL)
        fprintf(f, "seccomp: not in this kernel (check, ls, extract and scan run without the system-call filter)\n");
    else
        fprintf(f, "seccomp: on (libseccomp %u.%u.%u): an allow-list; other system calls fail with EPERM\n",
                v ? v->major : 0, v ? v->minor : 0, v ? v->micro : 0);
#else
    fprintf(f, "seccomp: not in this build (built without libseccomp-dev): no system-call filter\n");
#endif
    long abi = ll_abi();
    if (abi >= 1)
        fprintf(f, "landlock: on (ABI %ld): files%s%s\n", abi, abi >= 4 ? ", TCP bind and connect" : "",
                abi >= 6 ? ", signals and abstract unix sockets" : "");
    else
        fprintf(f, "landlock: not in this kernel (%s): any file the user can read may be opened\n",
                errno == EOPNOTSUPP ? "turned off" : "not built in");
#ifdef SB_SANITIZER
    fprintf(f,
            "sanitizer build: LeakSanitizer's helper (clone with CLONE_UNTRACED, ptrace, signals) and /proc allowed\n");
#endif
}
