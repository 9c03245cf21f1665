/*
 * main.c -- the npzstream command line: which command runs.
 *
 *   npzstream check [--json] [--feed N] [LIMITS] [FILE|-]
 *   npzstream ls [--json] [--feed N] [LIMITS] [FILE|-]
 *   npzstream extract KEY [-o OUT] [--feed N] [LIMITS] [FILE|-]
 *   npzstream trace [LIMITS] [FILE|-]
 *   npzstream refs [--url URL] [LIMITS] [FILE|-]   (cli/cmd_refs.c)
 *   npzstream vlen ...                       (cli/cmd_vlen.c)
 *   npzstream scan [-r] [--jsonl] [--sarif [FILE]] PATH...   (cli/cmd_scan.c)
 *   npzstream help [COMMAND] | --help | --version | --sandbox-info
 *
 * Every command reads FILE or stdin sequentially (never seeks).  Exit 0:
 * accepted, 1: rejected, 2: usage, I/O or out-of-memory error.  The output of
 * `check` (text and --json) is a fixed contract: it is only ever extended.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "cli.h"
#include "sandbox.h"

static void usage_all(FILE *f) {
    fprintf(
        f,
        "usage: npzstream check [--json|--jsonl|-q] [OPTIONS] [FILE|-]...   validate\n"
        "       npzstream ls [--json|--jsonl|-q] [OPTIONS] [FILE|-]...      list members (like unzip -l)\n"
        "       npzstream extract KEY [-o OUT] [OPTIONS] [FILE|-]           one member out, after the verdict\n"
        "       npzstream extract --all -d DIR [OPTIONS] [FILE|-]           every member, all or nothing\n"
        "       npzstream trace [OPTIONS] [FILE|-]                          the parse, record by record\n"
        "       npzstream refs [--url URL] [OPTIONS] [FILE|-]               kerchunk references, after the verdict\n"
        "       npzstream scan [-r] [--jsonl] [--sarif [FILE]] [OPTIONS] PATH... pickles in model files\n"
        "       npzstream vlen ...                                         (npzstream vlen --help)\n"
        "       npzstream help [COMMAND] | help rules | explain RULE | --help | --version\n"
        "       npzstream --sandbox-info                                   what confines the commands that read files\n"
        "Reads a NumPy .npy or .npz file as a stream (FILE, or stdin for '-' or none);\n"
        "never seeks, so pipes and sockets work.  OPTIONS are the limits below and --feed.\n"
        "An .npz is valid only once its central directory was checked at the very end.\n\n"
        "%s%s",
        limits_help(), EXIT_HELP);
}


/* `help rules`: every rule id with its message and hint; `explain RULE`: one (a prefix lists
 * those it starts).  --man: the same as man page source (the RULES section, generated). */
static int rules(const char *only, int man) {
    size_t n = npzs_rule_count(), shown = 0;
    for (size_t i = 0; i < n; i++) {
        const char *id = npzs_rule_id(i), *msg = npzs_rule_message(i), *hint = npzs_rule_hint(id);
        if (only && strcmp(id, only) != 0 && !(only[strlen(only) - 1] == '.' && !strncmp(id, only, strlen(only))))
            continue;
        shown++;
        if (man) {
            printf(".TP\n.B %s\n", id);
            for (const char *m = msg; *m; m++) { /* a leading '.' or a backslash would be troff */
                if (*m == '\\') fputs("\\e", stdout);
                else putchar(*m);
            }
            printf(".\n");
            if (hint) {
                printf("What to do: ");
                for (const char *h = hint; *h; h++) {
                    if (*h == '\\') fputs("\\e", stdout);
                    else putchar(*h);
                }
                printf(".\n");
            }
        } else {
            printf("%s\n    %s\n", id, msg);
            if (hint) printf("    what to do: %s\n", hint);
        }
    }
    if (only && !shown) {
        fprintf(stderr, "npzstream: no rule %s (npzstream help rules lists them all)\n", only);
        return 2;
    }
    return 0;
}

static int help(const char *cmd) {
    if (!cmd) usage_all(stdout);
    else if (!strcmp(cmd, "rules")) return rules(NULL, 0);
    else if (!strcmp(cmd, "check")) usage_check(stdout);
    else if (!strcmp(cmd, "ls")) usage_ls(stdout);
    else if (!strcmp(cmd, "extract")) usage_extract(stdout);
    else if (!strcmp(cmd, "trace")) usage_trace(stdout);
    else if (!strcmp(cmd, "refs")) usage_refs(stdout);
    else if (!strcmp(cmd, "scan")) usage_scan(stdout);
    else if (!strcmp(cmd, "vlen")) {
        char h[] = "--help";
        char *args[] = {h, NULL};
        return cmd_vlen(1, args);
    } else {
        fprintf(stderr, "npzstream: no command %s\n", cmd);
        usage_all(stderr);
        return 2;
    }
    return 0;
}

static int run(int argc, char **argv);

int main(int argc, char **argv) {
    int status = run(argc, argv);
    batch_end(); /* what the main thread kept for a batch: its parser, its read buffer */
    return status;
}

static int run(int argc, char **argv) {
#ifdef __GLIBC__
    /* Blocks from 64 KiB up (the parser's member table, the read buffer) come from mmap and go
     * back to the system when freed.  glibc would otherwise raise that threshold after the
     * first such free, and the old copies of a growing table would stay resident. */
    mallopt(M_MMAP_THRESHOLD, 64 * 1024);
#endif
    if (argc >= 2 && !strcmp(argv[1], "--version")) {
        printf("npzstream %s\n", NPZS_VERSION);
        return 0;
    }
    if (argc >= 2 && !strcmp(argv[1], "--sandbox-info")) {
        cli_sandbox_info(stdout);
        return 0;
    }
    if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        usage_all(stdout);
        return 0;
    }
    if (argc >= 2 && !strcmp(argv[1], "help")) {
        if (argc >= 4 && !strcmp(argv[2], "rules") && !strcmp(argv[3], "--man")) return rules(NULL, 1);
        if (argc >= 3 && !strcmp(argv[2], "limits")) {
            limits_print(stdout, argc >= 4 && !strcmp(argv[3], "--man"));
            return 0;
        }
        return help(argc >= 3 ? argv[2] : NULL);
    }
    if (argc >= 2 && !strcmp(argv[1], "explain")) {
        if (argc != 3) {
            fprintf(
                stderr,
                "usage: npzstream explain RULE   (a rule id, as errors name it: S-ZIP-CRC.local; or a group: S-ZIP-CRC.)\n");
            return 2;
        }
        return rules(argv[2], 0);
    }
    if (argc >= 2 && !strcmp(argv[1], "ls")) return cmd_ls(argc - 2, argv + 2);
    if (argc >= 2 && !strcmp(argv[1], "extract")) return cmd_extract(argc - 2, argv + 2);
    if (argc >= 2 && !strcmp(argv[1], "vlen")) return cmd_vlen(argc - 2, argv + 2);
    if (argc >= 2 && !strcmp(argv[1], "trace")) return cmd_trace(argc - 2, argv + 2);
    if (argc >= 2 && !strcmp(argv[1], "refs")) return cmd_refs(argc - 2, argv + 2);
    if (argc >= 2 && !strcmp(argv[1], "scan")) return cmd_scan(argc - 2, argv + 2);
    if (argc < 2 || strcmp(argv[1], "check") != 0) {
        usage(stderr);
        return 2;
    }
    return cmd_check(argc - 2, argv + 2);
}
