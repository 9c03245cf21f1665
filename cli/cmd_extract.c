/* cmd_extract.c -- `npzstream extract`: members out, and only after the archive's verdict.
 *
 * Files are never written in place.  A member goes to a private temporary file in the output's
 * directory (an unnamed O_TMPFILE where the file system has it, else a new name opened with
 * O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600); only after END is it linked and renamed over OUT, which
 * before that is never opened, truncated or followed (a symlink at OUT is replaced, its target
 * untouched).  On rejection the temporary file goes away; a process killed before the verdict
 * leaves no OUT (at most the named temporary file of the fallback).
 *
 * --all -d DIR stages every member in a private directory beside DIR (".DIR.npzstream-XXXX" in
 * DIR's parent, which is made like `mkdir -p` when missing).  After END: when DIR does not exist,
 * the staging directory is renamed to DIR, one atomic step; when it does, every member is moved
 * in without replacing a file (renameat2 RENAME_NOREPLACE), or with --force replacing it, the
 * file it replaces kept aside until all are in, and any failure moves everything back: all or
 * nothing.  SIGINT, SIGTERM, SIGHUP and SIGPIPE stop the read, remove the staging directory and
 * end the process with the signal.  SIGKILL leaves the staging directory, beside DIR, never in it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "output.h"
#include "sandbox.h"

void usage_extract(FILE *f) {
    fprintf(f,
            "usage: npzstream extract KEY [-o OUT] [OPTIONS] [FILE|-]\n"
            "       npzstream extract --all -d DIR [OPTIONS] [FILE|-]\n"
            "Streams member KEY of an .npz (the np.load key 'x' or the name 'x.npy') to OUT or\n"
            "stdout: an array as a standalone .npy (its header and data), any other member as its\n"
            "raw bytes.  The archive is read to its end, and OUT is written only then: the member\n"
            "goes to a private temporary file in OUT's directory, renamed over OUT after the verdict\n"
            "(OUT is never opened or followed before; if the archive is rejected, OUT is not touched).\n"
            "To stdout the bytes go out as they come: on rejection a message says to discard them.\n"
            "  -o, --output OUT      write to OUT instead of stdout ('-' is stdout)\n"
            "  --all                 every member, into DIR, in one pass, all or nothing\n"
            "  -d, --directory DIR   where --all writes (made when missing, as unzip -d does): each\n"
            "                        member under its name, with '%%', '/', '\\', control bytes and a\n"
            "                        leading '.' written as %%XX (so a key 'a/b' becomes the file\n"
            "                        'a%%2Fb.npy'; no subdirectory is made)\n"
            "  --force               --all: replace files DIR already has (else that is an error and\n"
            "                        nothing is written)\n"
            "%s"
            "Exit status: 0 extracted and the archive accepted, 1 rejected (invalid or unsafe\n"
            "input), 2 usage or I/O error, or KEY is not in a valid archive.\n",
            limits_help());
}

/* ---- private files in a directory --------------------------------------------------------- */

/* A file being written: fd, and its temporary name (empty for an O_TMPFILE one). */
typedef struct staged {
    int fd;
    char tmp[64];
} staged;

static unsigned long long tick(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (unsigned long long)ts.tv_nsec ^ ((unsigned long long)ts.tv_sec << 20) ^
           ((unsigned long long)getpid() << 40);
}

/* A new private file in dirfd: 0 or -1 (errno set). */
static int stage_open(int dirfd, staged *s) {
    s->tmp[0] = 0;
#ifdef O_TMPFILE
    s->fd = openat(dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    if (s->fd >= 0) return 0;
    if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL && errno != ENOENT) return -1;
#endif
    unsigned long long r = tick();
    for (int k = 0; k < 100; k++, r = r * 6364136223846793005ULL + 1442695040888963407ULL) {
        snprintf(s->tmp, sizeof s->tmp, ".npzstream-%016llx.tmp", r);
        s->fd = openat(dirfd, s->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (s->fd >= 0 || errno != EEXIST) return s->fd >= 0 ? 0 : -1;
    }
    return -1;
}

/* The verdict is in: make the private file dirfd/name (replacing what is there).  0 or -1. */
static int stage_commit(int dirfd, staged *s, const char *name) {
    mode_t um = umask(0);
    umask(um);
    if (fchmod(s->fd, 0666 & ~um) < 0 || fsync(s->fd) < 0) return -1;
    if (!s->tmp[0]) { /* O_TMPFILE: give it a name, then move that name over OUT */
        char proc[64];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", s->fd);
        unsigned long long r = tick();
        for (int k = 0;; k++, r = r * 6364136223846793005ULL + 1442695040888963407ULL) {
            snprintf(s->tmp, sizeof s->tmp, ".npzstream-%016llx.tmp", r);
            if (linkat(AT_FDCWD, proc, dirfd, s->tmp, AT_SYMLINK_FOLLOW) == 0) break;
            if (errno != EEXIST || k == 100) {
                s->tmp[0] = 0;
                return -1;
            }
        }
    }
    if (renameat(dirfd, s->tmp, dirfd, name) < 0) return -1;
    s->tmp[0] = 0;
    return 0;
}

/* Drop a private file (rejection, failure): nothing is left of it. */
static void stage_drop(int dirfd, staged *s) {
    if (s->fd >= 0) close(s->fd);
    s->fd = -1;
    if (s->tmp[0]) unlinkat(dirfd, s->tmp, 0);
    s->tmp[0] = 0;
}

/* OUT's directory (opened) and last component. */
static int split_out(const char *target, char **base) {
    const char *slash = strrchr(target, '/');
    *base = strdup(slash ? slash + 1 : target);
    if (!*base || !**base) {
        free(*base);
        *base = NULL;
        errno = EISDIR;
        return -1;
    }
    if (!slash) return open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    size_t n = (size_t)(slash - target);
    char *dir = n ? strndup(target, n) : strdup("/");
    if (!dir) return -1;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(dir);
    return fd;
}

/* ---- the events ------------------------------------------------------------------------------ */

typedef struct ex_ctx {
    const char *key, *out_path; /* out_path NULL: stdout */
    int all;
    int dirfd; /* OUT's directory, or DIR's staging directory for --all */
    int state; /* 0 looking, 1 writing the member, 2 member written */
    int fd;    /* where the member goes: stdout, or cur.fd */
    staged cur;
    uint64_t written;
    /* --all: the members staged so far, under their file names */
    char **names;
    size_t n, cap;
} ex_ctx;

static int write_all(ex_ctx *c, const void *buf, size_t n) {
    const unsigned char *b = buf;
    while (n) {
        ssize_t w = write(c->fd, b, n);
        if (w < 0) {
            if (errno == EINTR && !cli_interrupted) continue;
            fprintf(stderr, "npzstream: %s: write: %s\n", c->out_path ? c->out_path : "stdout", strerror(errno));
            return -1;
        }
        b += w;
        n -= (size_t)w;
        c->written += (uint64_t)w;
    }
    return 0;
}

/* Does the member name match KEY (np.load's key: the name without ".npy", or the name)? */
static int key_matches(const char *key, const char *name, size_t len) {
    size_t kl = strlen(key);
    if (kl == len && memcmp(key, name, len) == 0) return 1;
    return len > 4 && kl == len - 4 && memcmp(name + kl, ".npy", 4) == 0 && memcmp(key, name, kl) == 0;
}

/* A member's file name for --all: its name with '%', '/', '\', control bytes and a leading '.'
 * as %XX (one to one, so two members never meet in one file). */
static char *file_name(const char *name, size_t len) {
    char *o = malloc(3 * len + 1);
    if (!o) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char b = (unsigned char)name[i];
        if (b == '%' || b == '/' || b == '\\' || b < 0x20 || b == 0x7F || (i == 0 && b == '.'))
            k += (size_t)sprintf(o + k, "%%%02X", b);
        else o[k++] = (char)b;
    }
    o[k] = 0;
    return o;
}

static int begin_all(ex_ctx *c, const npzs_event *ev) {
    char **nn = table_room(c->names, &c->cap, c->n, sizeof *c->names, 16);
    if (!nn) return -1;
    c->names = nn;
    char *fn = file_name(ev->name, ev->name_len);
    if (!fn) return -1;
    c->cur.tmp[0] = 0;
    c->cur.fd = openat(c->dirfd, fn, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (c->cur.fd < 0) {
        cli_say("npzstream", fn, NULL, NULL, ": %s", strerror(errno));
        free(fn);
        return -1;
    }
    c->names[c->n++] = fn;
    c->fd = c->cur.fd;
    c->state = 1;
    return 0;
}

static int ex_cb(void *ctx, const npzs_event *ev) {
    ex_ctx *c = ctx;
    switch (ev->type) {
    case NPZS_EV_MEMBER_BEGIN:
        if (c->all && ev->name) return begin_all(c, ev);
        if (c->state == 0 && ev->name && key_matches(c->key, ev->name, ev->name_len)) {
            if (c->out_path) {
                if (stage_open(c->dirfd, &c->cur) < 0) {
                    fprintf(stderr, "npzstream: %s: cannot create a temporary file beside it: %s\n", c->out_path,
                            strerror(errno));
                    return -1;
                }
                c->fd = c->cur.fd;
            } else {
                c->fd = 1;
            }
            c->state = 1;
        }
        break;
    case NPZS_EV_HEADER:
        if (c->state == 1) /* the member's own preamble and header, byte for byte */
            return write_all(c, ev->array->header, ev->array->header_size);
        break;
    case NPZS_EV_DATA:
    case NPZS_EV_BLOB:
        if (c->state == 1) return write_all(c, ev->data, ev->len);
        break;
    case NPZS_EV_MEMBER_END:
        if (c->state == 1) c->state = 2;
        if (c->all) {
            if (close(c->cur.fd) < 0) return -1;
            c->cur.fd = -1;
            c->state = 0;
        }
        break;
    default: break;
    }
    return 0;
}

/* ---- --all: the commit, all or nothing ---------------------------------------------------------- */

/* Move dfd/from to tfd/to without replacing anything: 0, or -1 (EEXIST when to exists). */
static int move_noreplace(int dfd, const char *from, int tfd, const char *to) {
#if defined(SYS_renameat2)
    if (syscall(SYS_renameat2, dfd, from, tfd, to, 1 /* RENAME_NOREPLACE */) == 0) return 0;
    if (errno != ENOSYS && errno != EINVAL) return -1;
#endif
    if (linkat(dfd, from, tfd, to, 0) < 0) return -1; /* EEXIST when it exists */
    return unlinkat(dfd, from, 0);
}

/* Every staged file into DIR (outfd), DIR existing.  A name DIR has is an error unless force; then
 * the old file is moved aside into the staging directory first (as ".old-<name>") and dropped only
 * when every member is in.  On any failure everything moved goes back.  0 or 2. */
static int commit_into(ex_ctx *c, int outfd, const char *dir, int force) {
    struct stat st;
    for (size_t i = 0; i < c->n; i++) {
        if (fstatat(outfd, c->names[i], &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (!force || S_ISDIR(st.st_mode)) {
            cli_say("npzstream", dir, "/", c->names[i], " exists%s; nothing written",
                    S_ISDIR(st.st_mode) ? " and is a directory" : " (--force replaces it)");
            return 2;
        }
    }
    size_t moved = 0, aside = 0;
    unsigned char *old = calloc(c->n ? c->n : 1, 1);
    int rc = old ? 0 : 2;
    for (; rc == 0 && moved < c->n; moved++) {
        const char *nm = c->names[moved];
        char kept[4200];
        snprintf(kept, sizeof kept, ".old-%s", nm);
        if (force && fstatat(outfd, nm, &st, AT_SYMLINK_NOFOLLOW) == 0) {
            if (renameat(outfd, nm, c->dirfd, kept) < 0) {
                rc = 2;
                break;
            }
            old[moved] = 1;
            aside++;
        }
        if (move_noreplace(c->dirfd, nm, outfd, nm) < 0) {
            if (old[moved]) renameat(c->dirfd, kept, outfd, nm);
            old[moved] = 0;
            rc = 2;
            break;
        }
    }
    if (rc) { /* back: what was moved into DIR, then what was moved aside */
        cli_say("npzstream", dir, "/", moved < c->n ? c->names[moved] : "", ": %s; nothing written", strerror(errno));
        while (moved-- > 0) {
            const char *nm = c->names[moved];
            char kept[4200];
            snprintf(kept, sizeof kept, ".old-%s", nm);
            renameat(outfd, nm, c->dirfd, nm);
            if (old && old[moved]) renameat(c->dirfd, kept, outfd, nm);
        }
    } else {
        for (size_t i = 0; i < c->n; i++)
            if (old[i]) {
                char kept[4200];
                snprintf(kept, sizeof kept, ".old-%s", c->names[i]);
                unlinkat(c->dirfd, kept, 0);
            }
        fsync(outfd);
    }
    free(old);
    return rc;
}

static void drop_all(ex_ctx *c) {
    if (c->cur.fd >= 0) close(c->cur.fd);
    c->cur.fd = -1;
    for (size_t i = 0; i < c->n; i++) unlinkat(c->dirfd, c->names[i], 0);
}

/* `mkdir -p` of path (its last component included); 0 or -1. */
static int make_dirs(char *path) {
    for (char *s = path + 1; *s; s++) {
        if (*s != '/') continue;
        *s = 0;
        int r = mkdir(path, 0777);
        *s = '/';
        if (r < 0 && errno != EEXIST) return -1;
    }
    return mkdir(path, 0777) < 0 && errno != EEXIST ? -1 : 0;
}

/* The signals that end the process: the read stops (io.c sees cli_interrupted), the staging
 * goes, and the process ends with the signal. */
static void on_signal(int sig) { cli_interrupted = sig; }

static void catch_signals(void) {
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal; /* no SA_RESTART: a blocked read returns EINTR */
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaction(sigs[i], &sa, NULL);
}

static void end_by_signal(void) {
    int sig = cli_interrupted;
    if (!sig) return;
    signal(sig, SIG_DFL);
    raise(sig);
}

/* ---- the command ------------------------------------------------------------------------------ */

/* The command's words: KEY (or --all -d DIR), -o OUT, --force, the shared options and FILE (into
 * *path).  -1 to go on, or the exit status (0 after --help; 2, the message printed). */
static int extract_args(int argc, char **argv, opts *op, ex_ctx *c, const char **path, const char **dir, int *force) {
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int r;
        if (!strcmp(a, "-o") || !strcmp(a, "--output") || !strcmp(a, "-d") || !strcmp(a, "--directory")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "npzstream: %s needs a %s\n", a,
                        a[1] == 'o' || a[2] == 'o' ? "file name" : "directory");
                return 2;
            }
            if (a[1] == 'o' || a[2] == 'o') c->out_path = argv[++i];
            else *dir = argv[++i];
        } else if (!strncmp(a, "--output=", 9)) {
            c->out_path = a + 9;
        } else if (!strncmp(a, "--directory=", 12)) {
            *dir = a + 12;
        } else if (!strcmp(a, "--all")) {
            c->all = 1;
        } else if (!strcmp(a, "--force")) {
            *force = 1;
        } else if ((r = parse_limit(op, argc, argv, &i)) != 0) {
            if (r < 0) return 2;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage_extract(stdout);
            return 0;
        } else if (!strcmp(a, "--")) {
            for (i++; i < argc; i++) {
                if (!c->key && !c->all) c->key = argv[i];
                else if (!*path) *path = argv[i];
                else {
                    fprintf(stderr, "npzstream: only one FILE\n");
                    return 2;
                }
            }
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "npzstream: unknown option %s\n", a);
            usage_extract(stderr);
            return 2;
        } else if (!c->key && !c->all) {
            c->key = a;
        } else if (*path) {
            fprintf(stderr, "npzstream: only one FILE\n");
            return 2;
        } else {
            *path = a;
        }
    }
    if (op->parallel > 1) {
        fprintf(stderr, "npzstream: -P is for check and ls (extract reads one archive)\n");
        return 2;
    }
    if (c->all ? (!*dir || c->key || c->out_path) : (!c->key || *dir)) {
        fprintf(stderr, c->all ? "npzstream: extract --all needs -d DIR (and no KEY or -o)\n"
                               : "npzstream: extract needs a KEY (or --all -d DIR)\n");
        usage_extract(stderr);
        return 2;
    }
    if (c->out_path && (!*c->out_path || !strcmp(c->out_path, "-"))) c->out_path = NULL;
    if (!c->all && !c->out_path && isatty(1)) {
        fprintf(stderr, "npzstream: refusing to write binary data to a terminal: use -o OUT or redirect\n");
        return 2;
    }
    return -1;
}

/* --all's private staging directory beside DIR, in DIR's parent. */
typedef struct all_dir {
    char *dirc, *parent;   /* DIR without its trailing slashes, and its parent */
    const char *leaf;      /* DIR's last component (in dirc) */
    int parentfd, existed; /* existed: DIR was there (the members are moved in one by one) */
    char stage[4200];      /* the staging directory's name in the parent; "" once it is DIR */
} all_dir;

/* The staging directory made (its fd in c->dirfd), DIR's parent made like `mkdir -p` when
 * missing: 0, or 2 (the message printed, everything released). */
static int all_begin(all_dir *a, const char *dir, ex_ctx *c) {
    a->dirc = strdup(dir);
    size_t dl = a->dirc ? strlen(a->dirc) : 0;
    while (dl > 1 && a->dirc[dl - 1] == '/') a->dirc[--dl] = 0;
    const char *slash = a->dirc ? strrchr(a->dirc, '/') : NULL;
    a->parent = !a->dirc           ? NULL
                : !slash           ? strdup(".")
                : slash == a->dirc ? strdup("/")
                                   : strndup(a->dirc, (size_t)(slash - a->dirc));
    a->leaf = !a->dirc ? "" : slash ? slash + 1 : a->dirc;
    a->parentfd = -1;
    struct stat st;
    if (!a->dirc || !a->parent || !*a->leaf || !strcmp(a->leaf, ".") || !strcmp(a->leaf, "..")) {
        fprintf(stderr, "npzstream: -d %s: a directory name is needed\n", dir);
    } else if ((a->existed = stat(a->dirc, &st) == 0) && !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "npzstream: %s: not a directory\n", dir);
    } else if (make_dirs(a->parent) < 0 || (a->parentfd = open(a->parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
        fprintf(stderr, "npzstream: %s: %s\n", a->parent, strerror(errno));
    } else {
        unsigned long long r = tick();
        for (int k = 0; k < 100; k++, r = r * 6364136223846793005ULL + 1442695040888963407ULL) {
            snprintf(a->stage, sizeof a->stage, ".%.4000s.npzstream-%016llx", a->leaf, r);
            if (mkdirat(a->parentfd, a->stage, 0700) == 0 || errno != EEXIST) break;
        }
        c->dirfd = openat(a->parentfd, a->stage, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (c->dirfd >= 0) return 0;
        fprintf(stderr, "npzstream: %s: cannot make a private directory beside it: %s\n", dir, strerror(errno));
        close(a->parentfd);
    }
    free(a->dirc);
    free(a->parent);
    return 2;
}

/* After the verdict (status): every member into DIR, all or nothing (the staging directory
 * renamed to DIR when DIR did not exist, else commit_into); what is left of the staging
 * directory removed.  Returns the status. */
static int all_end(all_dir *a, ex_ctx *c, int status, const char *dir, int force) {
    mode_t um = umask(0);
    umask(um);
    if (status == 0) {
        for (size_t i = 0; i < c->n && status == 0; i++)
            if (fchmodat(c->dirfd, c->names[i], 0666 & ~um, 0) < 0) status = 2;
    }
    if (status == 0 && !a->existed) { /* one step: the staging directory becomes DIR */
        fsync(c->dirfd);
        if (fchmod(c->dirfd, 0777 & ~um) == 0 && renameat(a->parentfd, a->stage, a->parentfd, a->leaf) == 0) {
            a->stage[0] = 0;
            fsync(a->parentfd);
        } else if (errno == EEXIST || errno == ENOTEMPTY) {
            a->existed = 1; /* DIR appeared meanwhile: moved in one by one */
        } else {
            fprintf(stderr, "npzstream: %s: %s\n", dir, strerror(errno));
            status = 2;
        }
    }
    if (status == 0 && a->existed) {
        int outfd = open(a->dirc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (outfd < 0) {
            fprintf(stderr, "npzstream: %s: %s\n", dir, strerror(errno));
            status = 2;
        } else {
            status = commit_into(c, outfd, dir, force);
            close(outfd);
        }
    }
    if (status != 0) {
        drop_all(c);
        if (c->n && status != 2) fprintf(stderr, "npzstream: %s: nothing written (the archive was rejected)\n", dir);
    }
    if (a->stage[0]) { /* what is left: empty after a commit, or everything after a failure */
        drop_all(c);
        unlinkat(a->parentfd, a->stage, AT_REMOVEDIR);
    }
    close(a->parentfd);
    free(a->dirc);
    free(a->parent);
    return status;
}

/* After the verdict (status), one member: renamed over OUT (base, in c->dirfd) when accepted, else
 * dropped; to stdout, what was written said to be discarded.  Returns the status. */
static int one_end(ex_ctx *c, const char *base, int status) {
    if (c->out_path) {
        if (status == 0 && stage_commit(c->dirfd, &c->cur, base) < 0) {
            fprintf(stderr, "npzstream: %s: %s\n", c->out_path, strerror(errno));
            status = 2;
        }
        if (status != 0 && c->state != 0)
            fprintf(stderr, "npzstream: %s: not written (%s after the member was read)\n", c->out_path,
                    status == 1 ? "the archive was rejected" : "extraction failed");
        if (status != 0) stage_drop(c->dirfd, &c->cur);
        else close(c->cur.fd);
    } else if (status != 0 && c->state != 0) {
        fprintf(stderr, "npzstream: %s: the %" PRIu64 " bytes written to stdout must be discarded\n",
                status == 1 ? "the archive was rejected" : "extraction failed", c->written);
    }
    return status;
}

static int extract_run(int argc, char **argv, opts *op) {
    const char *path = NULL, *dir = NULL;
    int force = 0;
    ex_ctx c;
    memset(&c, 0, sizeof c);
    c.fd = c.cur.fd = c.dirfd = -1;
    int st = extract_args(argc, argv, op, &c, &path, &dir, &force);
    if (st >= 0) return st;
    char *base = NULL;
    all_dir a;
    if (c.all) {
        if (all_begin(&a, dir, &c) != 0) return 2;
        catch_signals();
    } else if (c.out_path) {
        c.dirfd = split_out(c.out_path, &base);
        if (c.dirfd < 0) {
            fprintf(stderr, "npzstream: %s: %s\n", c.out_path, strerror(errno));
            free(base);
            return 2;
        }
        catch_signals();
    }
    const char *label;
    int fd;
    npzs_parser *p = open_parser(path, op, &label, &fd);
    int status = 2;
    /* confined once the input is open: writes only beneath the destination (OUT's directory, or
     * DIR's parent, where the staging directory is), none when the member goes to stdout */
    int wfd = c.all ? a.parentfd : c.dirfd;
    cli_confine_spec sb = {.prog = "npzstream",
                           .write_dirfds = &wfd,
                           .n_write_dirfds = wfd >= 0,
                           .hashing = op->sha256,
                           .off = op->no_sandbox};
    if (p && cli_confine(&sb) == 0) status = drive(p, fd, label, op, 1, ex_cb, &c, NULL, 0);
    if (status == 0 && !c.all && c.state != 2) {
        if (npzs_format_of(p) == NPZS_FORMAT_NPY)
            cli_say("npzstream", label, NULL, NULL, ": a plain .npy has no members: nothing to extract");
        else cli_say("npzstream", label, ": ", c.key, ": no such member");
        status = 2;
    }
    if (status == 0 && c.all && npzs_format_of(p) == NPZS_FORMAT_NPY) {
        cli_say("npzstream", label, NULL, NULL, ": a plain .npy has no members: nothing to extract");
        status = 2;
    }
    if (status == 1) error_line(label, p);
    status = c.all ? all_end(&a, &c, status, dir, force) : one_end(&c, base, status);
    for (size_t i = 0; i < c.n; i++) free(c.names[i]);
    free(c.names);
    free(base);
    if (c.dirfd >= 0) close(c.dirfd);
    parser_free(p);
    if (p && fd) close(fd);
    end_by_signal();
    return status;
}

int cmd_extract(int argc, char **argv) {
    opts op;
    opts_init(&op);
    int status = extract_run(argc, argv, &op);
    opts_free(&op);
    return status;
}
