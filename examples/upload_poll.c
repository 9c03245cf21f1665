/*
 * upload_poll.c -- validate uploads while they arrive, in a non-blocking poll() loop.
 *
 *   ./upload_poll                          validate fd 0 (a socket, pipe or file)
 *   ./upload_poll --listen PORT [--count N] [--timeout-ms MS]
 *
 * With --listen, accepts N connections (default 1) on 127.0.0.1:PORT (0: any free port; the
 * port is printed as "listening PORT"), and validates each upload independently as its bytes
 * arrive, in whatever pieces the network delivers.  A client sends the file, then shuts down
 * its write side; the server answers one line and closes:
 *
 *     OK npz 3 members 1849 bytes 5 reads
 *     REJECTED crc_mismatch 1187 CRC-32 of the member does not match its data descriptor
 *
 * A bad upload is answered as soon as the error is seen, usually long before its last byte;
 * the rest is read and thrown away (up to DRAIN_MAX) so that the client sees the answer
 * instead of a connection reset.  Each connection costs one parser whose memory is bounded
 * by the limits, never by the upload size; an idle connection is dropped after the timeout.
 * Without --listen the verdict line goes to stdout.  Exit 0 if every upload was accepted,
 * 1 if one was rejected, 2 on errors.
 *
 * The part to copy into an existing event loop is struct upload and upload_readable().
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <npzstream.h>

#define MAX_CONN 16
#define DRAIN_MAX (16u << 20)

struct upload {
    int fd;
    npzs_parser *p; /* NULL once the verdict is known */
    int verdict;    /* -1 pending, 0 accepted, 1 rejected, 2 error */
    int is_socket;
    long id;          /* connection number, from 1 */
    uint32_t members; /* completed members (provisional until END) */
    uint64_t bytes, reads, drained;
    int64_t last_ms; /* time of the last activity, for the idle timeout */
    char line[320];  /* the verdict line */
};

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int upload_init(struct upload *u, int fd, const npzs_limits *lim) {
    memset(u, 0, sizeof *u);
    u->fd = fd;
    u->verdict = -1;
    u->last_ms = now_ms();
    int type;
    socklen_t tl = sizeof type;
    u->is_socket = getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) == 0;
    u->p = npzs_new(lim, NULL);
    return u->p ? 0 : -1;
}

static void upload_decide(struct upload *u, int verdict) {
    u->verdict = verdict;
    if (verdict == 0)
        snprintf(u->line, sizeof u->line, "OK %s %" PRIu32 " members %" PRIu64 " bytes %" PRIu64 " reads",
                 npzs_format_of(u->p) == NPZS_FORMAT_NPY ? "npy" : "npz", u->members, u->bytes, u->reads);
    else if (verdict == 1)
        snprintf(u->line, sizeof u->line, "REJECTED %s %" PRIu64 " %s", npzs_error_name(npzs_error(u->p)),
                 npzs_error_offset(u->p), npzs_error_message(u->p));
    npzs_free(u->p); /* the verdict is all we keep: free the parser at once */
    u->p = NULL;
    if (u->is_socket) { /* answer now; a short line fits in the empty send buffer */
        char msg[330];
        int n = snprintf(msg, sizeof msg, "%s\n", u->line);
        if (n > 0) (void)send(u->fd, msg, (size_t)n, MSG_NOSIGNAL);
        shutdown(u->fd, SHUT_WR);
    }
}

/* Push bytes (len 0 with eof: the end) and pull events until the parser needs more. */
static void upload_push(struct upload *u, const unsigned char *buf, size_t len, int eof) {
    npzs_in in = {buf, len, 0};
    npzs_event ev;
    if (eof) npzs_finish(u->p);
    while (u->verdict < 0) {
        int rc = npzs_next(u->p, &in, &ev);
        if (rc == NPZS_NEED_INPUT) return;
        if (rc == NPZS_EVENT) {
            if (ev.type == NPZS_EV_MEMBER_END) u->members++;
            /* DATA events could be hashed or spooled here -- provisionally, until END */
            if (ev.type == NPZS_EV_END) upload_decide(u, 0);
        } else if (rc == NPZS_DONE) {
            upload_decide(u, 0);
        } else {
            if (rc == NPZS_E_NOMEM) snprintf(u->line, sizeof u->line, "ERROR out of memory");
            upload_decide(u, rc == NPZS_E_NOMEM ? 2 : 1);
        }
    }
}

/* The fd is readable (or hung up).  Returns 1 when the connection is finished (close it). */
static int upload_readable(struct upload *u) {
    unsigned char buf[16384];
    for (;;) {
        ssize_t n = read(u->fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) return 0; /* all read: back to poll() */
            if (u->verdict < 0) {
                snprintf(u->line, sizeof u->line, "ERROR read: %s", strerror(errno));
                u->verdict = 2;
                npzs_free(u->p);
                u->p = NULL;
            }
            return 1;
        }
        u->last_ms = now_ms();
        if (n == 0) { /* the client finished sending */
            if (u->verdict < 0) upload_push(u, NULL, 0, 1);
            return 1;
        }
        if (u->verdict >= 0) { /* answered already: discard the rest, within bounds */
            u->drained += (uint64_t)n;
            if (u->drained > DRAIN_MAX) return 1;
            continue;
        }
        u->reads++;
        u->bytes += (uint64_t)n;
        upload_push(u, buf, (size_t)n, 0);
    }
}

static void upload_close(struct upload *u, int timed_out) {
    if (u->verdict < 0) {
        snprintf(u->line, sizeof u->line, "ERROR %s", timed_out ? "idle timeout" : "closed");
        u->verdict = 2;
    }
    npzs_free(u->p);
    u->p = NULL;
    if (u->is_socket || u->fd > 2) close(u->fd);
    u->fd = -1;
}

static int set_nonblock(int fd) {
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

int main(int argc, char **argv) {
    long port = -1, count = 1, timeout_ms = 10000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--listen") && i + 1 < argc) port = strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--count") && i + 1 < argc) count = strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--timeout-ms") && i + 1 < argc) timeout_ms = strtol(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "usage: upload_poll [--listen PORT [--count N]] [--timeout-ms MS]\n");
            return 2;
        }
    }
    npzs_limits lim;
    npzs_limits_default(&lim);
    lim.max_total_bytes = UINT64_C(1) << 30; /* what this server accepts per upload */
    lim.max_members = 10000;

    struct upload conns[MAX_CONN];
    int nconn = 0, listener = -1, worst = 0;
    long accepted = 0;
    if (port < 0) { /* one upload on fd 0 */
        if (set_nonblock(0) < 0 || upload_init(&conns[0], 0, &lim) < 0) return 2;
        conns[0].is_socket = 0; /* stdin: the verdict goes to stdout only */
        nconn = 1;
        accepted = count = 1;
    } else {
        struct sockaddr_in sa;
        memset(&sa, 0, sizeof sa);
        sa.sin_family = AF_INET;
        sa.sin_port = htons((uint16_t)port);
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t sl = sizeof sa;
        int one = 1;
        listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (listener < 0 || setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
            bind(listener, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(listener, 16) < 0 ||
            getsockname(listener, (struct sockaddr *)&sa, &sl) < 0) {
            perror("upload_poll: listen");
            return 2;
        }
        printf("listening %u\n", (unsigned)ntohs(sa.sin_port));
        fflush(stdout);
    }

    while (nconn > 0 || accepted < count) {
        struct pollfd pfd[MAX_CONN + 1];
        int np = 0, lidx = -1;
        for (int i = 0; i < nconn; i++) pfd[np++] = (struct pollfd){conns[i].fd, POLLIN, 0};
        if (listener >= 0 && accepted < count && nconn < MAX_CONN) {
            lidx = np;
            pfd[np++] = (struct pollfd){listener, POLLIN, 0};
        }
        int r = poll(pfd, (nfds_t)np, 100);
        if (r < 0 && errno != EINTR) {
            perror("poll");
            return 2;
        }
        int64_t t = now_ms();
        for (int i = nconn - 1; i >= 0; i--) { /* backwards: closing moves the last one here */
            struct upload *u = &conns[i];
            int done = 0, timed_out = 0;
            if (r > 0 && (pfd[i].revents & (POLLIN | POLLHUP | POLLERR))) done = upload_readable(u);
            if (!done && t - u->last_ms > timeout_ms) done = timed_out = 1;
            if (done) {
                upload_close(u, timed_out);
                if (listener >= 0) printf("conn %ld: %s\n", u->id, u->line);
                else printf("%s\n", u->line);
                fflush(stdout);
                if (u->verdict > worst) worst = u->verdict;
                conns[i] = conns[--nconn];
            }
        }
        if (lidx >= 0 && r > 0 && (pfd[lidx].revents & POLLIN)) {
            int fd = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (fd >= 0) {
                if (upload_init(&conns[nconn], fd, &lim) < 0) {
                    close(fd);
                    return 2;
                }
                conns[nconn++].id = ++accepted;
            }
        }
    }
    if (listener >= 0) close(listener);
    return worst;
}
