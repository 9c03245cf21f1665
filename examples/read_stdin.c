/*
 * read_stdin.c -- validate an .npy or .npz arriving on stdin and list its arrays.
 *
 *   ./read_stdin < weights.npz          python3 -c '...np.savez(sys.stdout.buffer, ...)' | ./read_stdin
 *
 * Prints one tab-separated line per member (key, kind, dtype, shape, data bytes, CRC-32 of
 * the data) and then "ok npz N" -- but only once the END event has arrived: before END every
 * member event of an .npz is provisional (the central directory at the end may still
 * disagree), so nothing is printed early.  Exit 0 valid, 1 rejected, 2 I/O error.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <npzstream.h>

struct row {
    char key[256], dtype[48], shape[256];
    int array;
    uint64_t nbytes;
    uint32_t crc;
};

int main(void) {
    static unsigned char buf[1 << 16];
    struct row *rows = NULL;
    size_t n = 0, cap = 0;
    npzs_parser *p = npzs_new(NULL, NULL); /* default limits, malloc/free */
    npzs_in in = {buf, 0, 0};
    npzs_event ev;
    int status = -1;
    if (!p) return 2;
    while (status < 0) {
        int rc = npzs_next(p, &in, &ev);
        if (rc == NPZS_NEED_INPUT) { /* input used up: read more, or declare the end */
            ssize_t got = read(0, buf, sizeof buf);
            if (got < 0) {
                perror("read");
                status = 2;
                break;
            }
            if (got == 0) npzs_finish(p);
            in = (npzs_in){buf, (size_t)(got > 0 ? got : 0), 0};
        } else if (rc == NPZS_EVENT) { /* pointers in ev live until the next npzs_next() */
            if (ev.type == NPZS_EV_MEMBER_BEGIN) {
                if (n == cap) {
                    struct row *r = realloc(rows, (cap = cap ? 2 * cap : 8) * sizeof *r);
                    if (!r) {
                        status = 2;
                        break;
                    }
                    rows = r;
                }
                memset(&rows[n], 0, sizeof rows[n]);
                size_t l = ev.name ? ev.name_len : 1; /* a plain .npy has no name: "-" */
                if (ev.name && l > 4 && memcmp(ev.name + l - 4, ".npy", 4) == 0) l -= 4; /* np.load's key */
                if (l >= sizeof rows[n].key) l = sizeof rows[n].key - 1;
                memcpy(rows[n].key, ev.name ? ev.name : "-", l);
            } else if (ev.type == NPZS_EV_HEADER) {
                struct row *r = &rows[n];
                size_t k = 0;
                r->array = 1;
                snprintf(r->dtype, sizeof r->dtype, "%s", ev.array->dtype);
                for (uint32_t d = 0; d < ev.array->ndim && k < sizeof r->shape - 24; d++)
                    k += (size_t)snprintf(r->shape + k, sizeof r->shape - k, d ? ",%" PRIu64 : "%" PRIu64,
                                          ev.array->shape[d]);
            } else if (ev.type == NPZS_EV_MEMBER_END) {
                rows[n].nbytes = ev.data_size;
                rows[n].crc = ev.data_crc32;
                n++;
            } else if (ev.type == NPZS_EV_END) { /* the verdict: now the rows are true */
                for (size_t i = 0; i < n; i++)
                    printf("%s\t%s\t%s\t%s\t%" PRIu64 "\t%" PRIu32 "\n", rows[i].key, rows[i].array ? "array" : "blob",
                           rows[i].array ? rows[i].dtype : "-", rows[i].shape, rows[i].nbytes, rows[i].crc);
                printf("ok %s %zu\n", ev.format == NPZS_FORMAT_NPY ? "npy" : "npz", n);
                status = 0;
            }
        } else { /* rc < 0: rejected; the code, offset and message are stable */
            printf("rejected %s %" PRIu64 " %s\n", npzs_error_name(rc), npzs_error_offset(p), npzs_error_message(p));
            status = rc == NPZS_E_NOMEM ? 2 : 1;
        }
    }
    free(rows);
    npzs_free(p);
    return status;
}
