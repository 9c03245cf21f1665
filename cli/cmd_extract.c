/* cmd_extract.c -- `npzstream extract`: members out, and only after the archive's verdict.
 *
 * Files are never written in place.  A member goes to a private temporary file in the output's
 * directory (an unnamed O_TMPFILE where the file system has it, else a new name opened with
 * O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600); only after END is it linked and renamed over OUT, which
 * before that is never opened, truncated or followed (a symlink at OUT is replaced, its target
 * untouched).  On rejection the temporary file goes away; a process killed before the verdict
 * leaves no OUT (at most the named temporary file of the fallback).  --all -d DIR stages every
 * member in a private directory inside DIR and renames them into DIR after END: all or nothing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

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
            "  -d, --directory DIR   where --all writes: each member under its name, with '%%', '/',\n"
            "                        '\\', control bytes and a leading '.' written as %%XX (so a key\n"
            "                        'a/b' becomes the file 'a%%2Fb.npy'; no subdirectory is made)\n"
            "%s"
            "Exit status: 0 extracted and the archive accepted, 1 rejected (invalid or unsafe\n"
            "input), 2 usage or I/O error, or KEY is not in a valid archive.\n", LIMITS_HELP);
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
    return (unsigned long long)ts.tv_nsec ^ ((unsigned long long)ts.tv_sec << 20) ^ ((unsigned long long)getpid() << 40);
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
            if (errno != EEXIST || k == 100) { s->tmp[0] = 0; return -1; }
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
    if (!*base || !**base) { free(*base); *base = NULL; errno = EISDIR; return -1; }
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
    int dirfd;                  /* OUT's directory, or DIR's staging directory for --all */
    int state;                  /* 0 looking, 1 writing the member, 2 member written */
    int fd;                     /* where the member goes: stdout, or cur.fd */
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
            if (errno == EINTR) continue;
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
        else
            o[k++] = (char)b;
    }
    o[k] = 0;
    return o;
}

static int begin_all(ex_ctx *c, const npzs_event *ev) {
    if (c->n == c->cap) {
        size_t nc = c->cap ? 2 * c->cap : 16;
        char **nn = realloc(c->names, nc * sizeof *nn);
        if (!nn) return -1;
        c->names = nn;
        c->cap = nc;
    }
    char *fn = file_name(ev->name, ev->name_len);
    if (!fn) return -1;
    c->cur.tmp[0] = 0;
    c->cur.fd = openat(c->dirfd, fn, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (c->cur.fd < 0) {
        fprintf(stderr, "npzstream: %s: %s\n", fn, strerror(errno));
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
    default:
        break;
    }
    return 0;
}

/* --all after END: every staged file into DIR. 0 or 2. */
static int commit_all(ex_ctx *c, int outfd, const char *dir) {
    mode_t um = umask(0);
    umask(um);
    for (size_t i = 0; i < c->n; i++) {
        if (fchmodat(c->dirfd, c->names[i], 0666 & ~um, 0) < 0 || renameat(c->dirfd, c->names[i], outfd, c->names[i]) < 0) {
            fprintf(stderr, "npzstream: %s/%s: %s\n", dir, c->names[i], strerror(errno));
            return 2;
        }
    }
    return 0;
}

static void drop_all(ex_ctx *c) {
    if (c->cur.fd >= 0) close(c->cur.fd);
    for (size_t i = 0; i < c->n; i++) unlinkat(c->dirfd, c->names[i], 0);
}

/* ---- the command ------------------------------------------------------------------------------ */

static int extract_run(int argc, char **argv, opts *op) {
    const char *path = NULL, *dir = NULL;
    ex_ctx c;
    memset(&c, 0, sizeof c);
    c.fd = c.cur.fd = c.dirfd = -1;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int r;
        if (!strcmp(a, "-o") || !strcmp(a, "--output") || !strcmp(a, "-d") || !strcmp(a, "--directory")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "npzstream: %s needs a %s\n", a, a[1] == 'o' || a[2] == 'o' ? "file name" : "directory");
                return 2;
            }
            if (a[1] == 'o' || a[2] == 'o') c.out_path = argv[++i];
            else dir = argv[++i];
        } else if (!strncmp(a, "--output=", 9)) {
            c.out_path = a + 9;
        } else if (!strncmp(a, "--directory=", 12)) {
            dir = a + 12;
        } else if (!strcmp(a, "--all")) {
            c.all = 1;
        } else if ((r = parse_limit(op, argc, argv, &i)) != 0) {
            if (r < 0) return 2;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage_extract(stdout);
            return 0;
        } else if (!strcmp(a, "--")) {
            for (i++; i < argc; i++) {
                if (!c.key && !c.all) c.key = argv[i];
                else if (!path) path = argv[i];
                else { fprintf(stderr, "npzstream: only one FILE\n"); return 2; }
            }
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "npzstream: unknown option %s\n", a);
            usage_extract(stderr);
            return 2;
        } else if (!c.key && !c.all) {
            c.key = a;
        } else if (path) {
            fprintf(stderr, "npzstream: only one FILE\n");
            return 2;
        } else {
            path = a;
        }
    }
    if (c.all ? (!dir || c.key || c.out_path) : (!c.key || dir)) {
        fprintf(stderr, c.all ? "npzstream: extract --all needs -d DIR (and no KEY or -o)\n"
                              : "npzstream: extract needs a KEY (or --all -d DIR)\n");
        usage_extract(stderr);
        return 2;
    }
    if (c.out_path && (!*c.out_path || !strcmp(c.out_path, "-"))) c.out_path = NULL;
    if (!c.all && !c.out_path && isatty(1)) {
        fprintf(stderr, "npzstream: refusing to write binary data to a terminal: use -o OUT or redirect\n");
        return 2;
    }
    char *base = NULL, stage_dir[64] = "";
    int outfd = -1;
    if (c.all) { /* a private staging directory inside DIR */
        outfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (outfd < 0) { fprintf(stderr, "npzstream: %s: %s\n", dir, strerror(errno)); return 2; }
        unsigned long long r = tick();
        for (int k = 0; k < 100; k++, r = r * 6364136223846793005ULL + 1442695040888963407ULL) {
            snprintf(stage_dir, sizeof stage_dir, ".npzstream-%016llx", r);
            if (mkdirat(outfd, stage_dir, 0700) == 0 || errno != EEXIST) break;
        }
        c.dirfd = openat(outfd, stage_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (c.dirfd < 0) {
            fprintf(stderr, "npzstream: %s: cannot make a private directory in it: %s\n", dir, strerror(errno));
            close(outfd);
            return 2;
        }
    } else if (c.out_path) {
        c.dirfd = split_out(c.out_path, &base);
        if (c.dirfd < 0) {
            fprintf(stderr, "npzstream: %s: %s\n", c.out_path, strerror(errno));
            free(base);
            return 2;
        }
    }
    const char *label;
    int fd;
    npzs_parser *p = start(path, op, &label, &fd);
    int status = 2;
    if (p) status = drive(p, fd, label, op, 1, ex_cb, &c, NULL, 0);
    if (status == 0 && !c.all && c.state != 2) {
        if (npzs_format_of(p) == NPZS_FORMAT_NPY)
            fprintf(stderr, "npzstream: %s: a plain .npy has no members: nothing to extract\n", label);
        else
            fprintf(stderr, "npzstream: %s: %s: no such member\n", label, c.key);
        status = 2;
    }
    if (status == 0 && c.all && npzs_format_of(p) == NPZS_FORMAT_NPY) {
        fprintf(stderr, "npzstream: %s: a plain .npy has no members: nothing to extract\n", label);
        status = 2;
    }
    if (status == 1) error_line(label, p);
    if (c.all) {
        if (status == 0) status = commit_all(&c, outfd, dir);
        if (status != 0) {
            drop_all(&c);
            if (c.n) fprintf(stderr, "npzstream: %s: nothing written (%s)\n", dir,
                             status == 1 ? "the archive was rejected" : "extraction failed");
        }
        unlinkat(outfd, stage_dir, AT_REMOVEDIR);
        close(outfd);
    } else if (c.out_path) {
        if (status == 0 && stage_commit(c.dirfd, &c.cur, base) < 0) {
            fprintf(stderr, "npzstream: %s: %s\n", c.out_path, strerror(errno));
            status = 2;
        }
        if (status != 0 && c.state != 0)
            fprintf(stderr, "npzstream: %s: not written (%s after the member was read)\n", c.out_path,
                    status == 1 ? "the archive was rejected" : "extraction failed");
        if (status != 0) stage_drop(c.dirfd, &c.cur);
        else close(c.cur.fd);
    } else if (status != 0 && c.state != 0) {
        fprintf(stderr, "npzstream: %s: the %" PRIu64 " bytes written to stdout must be discarded\n",
                status == 1 ? "the archive was rejected" : "extraction failed", c.written);
    }
    for (size_t i = 0; i < c.n; i++) free(c.names[i]);
    free(c.names);
    free(base);
    if (c.dirfd >= 0) close(c.dirfd);
    npzs_free(p);
    if (p && fd) close(fd);
    return status;
}

int cmd_extract(int argc, char **argv) {
    opts op;
    opts_init(&op);
    int status = extract_run(argc, argv, &op);
    opts_free(&op);
    return status;
}
