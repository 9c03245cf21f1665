/*
 * copy_array.c -- copy one array of an .npz (or the array of an .npy) into caller memory,
 * with every allocation bounded.
 *
 *   ./copy_array KEY MAX_BYTES < archive.npz > data.bin
 *
 * Two budgets: the parser allocates through hooks that refuse to go past PARSER_BUDGET bytes
 * in total (the limits below keep it far under), and the array buffer is allocated once, at
 * the HEADER event, only if the declared size is at most MAX_BYTES -- a 100-byte file that
 * declares a 1 TiB array costs nothing.  The data is copied at ev.pos (chunks of a deflated
 * member arrive as they are inflated) and handed on (written to stdout) only after END.
 * KEY "-" selects the array of a plain .npy.  Exit 0 copied, 1 rejected, 2 usage, not found,
 * too large or out of memory.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <npzstream.h>

#define PARSER_BUDGET (8u << 20)

struct budget {
    size_t used, limit;
};

/* Allocator hooks with a byte budget: a size header in front of every block. */
static void *b_alloc(void *opaque, size_t size) {
    struct budget *b = opaque;
    if (b->limit - b->used < sizeof(size_t) || size > b->limit - b->used - sizeof(size_t)) return NULL;
    size_t *blk = malloc(sizeof(size_t) + size);
    if (!blk) return NULL;
    blk[0] = size;
    b->used += size + sizeof(size_t);
    return blk + 1;
}
static void b_free(void *opaque, void *ptr) {
    struct budget *b = opaque;
    size_t *blk = (size_t *)ptr - 1;
    b->used -= blk[0] + sizeof(size_t);
    free(blk);
}

static int matches(const char *key, const npzs_event *ev) {
    size_t kl = strlen(key), l = ev->name_len;
    if (!ev->name) return strcmp(key, "-") == 0;
    return (kl == l && memcmp(key, ev->name, l) == 0) ||
           (l == kl + 4 && memcmp(ev->name, key, kl) == 0 && memcmp(ev->name + kl, ".npy", 4) == 0);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: copy_array KEY MAX_BYTES < file.npz > data.bin\n");
        return 2;
    }
    const char *key = argv[1];
    uint64_t max_bytes = strtoull(argv[2], NULL, 10);
    struct budget bud = {0, PARSER_BUDGET};
    npzs_allocator al = {b_alloc, b_free, &bud};
    npzs_limits lim;
    npzs_limits_default(&lim);
    lim.max_header_size = 4096; /* headers of real files are < 1 KB */
    lim.max_members = 1000;     /* about 40 bytes + the name each */
    lim.max_name_len = 256;
    lim.inflate_window = 64 * 1024;
    /* what we accept to read through in total (other members included) */
    lim.max_total_bytes = max_bytes > (UINT64_C(1) << 36) ? UINT64_C(1) << 40 : max_bytes * 16 + (1u << 20);
    npzs_parser *p = npzs_new(&lim, &al);
    if (!p) return 2;

    static unsigned char buf[1 << 16];
    npzs_in in = {buf, 0, 0};
    npzs_event ev;
    unsigned char *arr = NULL; /* the caller memory: exactly nbytes, allocated at HEADER */
    uint64_t nbytes = 0;
    int state = 0; /* 0 looking, 1 copying, 2 copied */
    int is_array = 0;
    int status = -1;
    while (status < 0) {
        int rc = npzs_next(p, &in, &ev);
        if (rc == NPZS_NEED_INPUT) {
            ssize_t got = read(0, buf, sizeof buf);
            if (got < 0) {
                perror("read");
                status = 2;
                break;
            }
            if (got == 0) npzs_finish(p);
            in = (npzs_in){buf, (size_t)(got > 0 ? got : 0), 0};
        } else if (rc == NPZS_EVENT) {
            if (ev.type == NPZS_EV_MEMBER_BEGIN && state == 0 && matches(key, &ev)) {
                state = 1;
            } else if (ev.type == NPZS_EV_HEADER && state == 1) {
                is_array = 1;
                nbytes = ev.array->nbytes;
                if (nbytes > max_bytes) {
                    fprintf(stderr, "copy_array: %s declares %" PRIu64 " bytes, more than %" PRIu64 "\n", key, nbytes,
                            max_bytes);
                    status = 2;
                    break;
                }
                arr = malloc(nbytes ? (size_t)nbytes : 1);
                if (!arr) {
                    status = 2;
                    break;
                }
                fprintf(stderr, "copy_array: %s: %s, %u dims, %" PRIu64 " bytes%s\n", key, ev.array->dtype,
                        (unsigned)ev.array->ndim, nbytes, ev.array->fortran_order ? ", Fortran order" : "");
            } else if (ev.type == NPZS_EV_DATA && state == 1) {
                /* the parser guarantees pos + len <= nbytes; check anyway, it costs nothing */
                if (ev.pos > nbytes || ev.len > nbytes - ev.pos) {
                    status = 2;
                    break;
                }
                memcpy(arr + ev.pos, ev.data, ev.len);
            } else if (ev.type == NPZS_EV_MEMBER_END && state == 1) {
                if (!is_array) {
                    fprintf(stderr, "copy_array: %s is not an array\n", key);
                    status = 2;
                    break;
                }
                state = 2;
            } else if (ev.type == NPZS_EV_END) {
                status = 0; /* only now is the copy valid */
            }
        } else {
            fprintf(stderr, "copy_array: rejected: %s at offset %" PRIu64 ": %s\n", npzs_error_name(rc),
                    npzs_error_offset(p), npzs_error_message(p));
            status = rc == NPZS_E_NOMEM ? 2 : 1;
        }
    }
    if (status == 0 && state != 2) {
        fprintf(stderr, "copy_array: %s: no such array\n", key);
        status = 2;
    }
    if (status == 0 && arr && nbytes && fwrite(arr, 1, (size_t)nbytes, stdout) != nbytes) status = 2;
    if (status == 0) fprintf(stderr, "copy_array: parser memory still held at the end: %zu bytes\n", bud.used);
    free(arr);
    npzs_free(p);
    if (bud.used != 0) {
        fprintf(stderr, "copy_array: allocator imbalance\n");
        status = 2;
    }
    return status;
}
