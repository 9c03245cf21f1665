/* sandbox.h -- the process confined once its inputs are open: a seccomp filter (libseccomp, where
 * the build has it) and a Landlock ruleset (raw system calls, where the kernel has it).  What is
 * refused and why: SECURITY.md, "The sandbox".  This file and sandbox.c use nothing else of the
 * command line's, so the Python extension compiles them too (npzstream.scan(sandbox=True)). */
#ifndef NPZS_CLI_SANDBOX_H
#define NPZS_CLI_SANDBOX_H

#include <stddef.h>
#include <stdio.h>

/* What a command may still do once confined.  Reading from, and writing to, the descriptors open
 * at the call (the inputs already opened, stdout, stderr, a pipe to a parent) is never limited. */
typedef struct cli_confine_spec {
    const char *prog;              /* names the command in messages ("npzstream") */
    const char *const *read_files; /* files that may be opened for reading later (a list's names) */
    size_t n_read_files;
    const char *const *read_dirs; /* directories whose files and subdirectories may be read */
    size_t n_read_dirs;
    const int *write_dirfds; /* open directories beneath which files may be made, written,
                                       * renamed and removed (extract's destination) */
    size_t n_write_dirfds;
    int hashing; /* SHA-256 will be asked for: libcrypto is loaded first */
    int off;     /* --no-sandbox: nothing is confined (the test hook still runs) */
} cli_confine_spec;

/* Confine the calling process, which must have no other thread yet (a filter and a ruleset are
 * inherited by the threads made after, never applied to those made before).  Every layer the
 * build and the kernel have is applied; one that is missing is skipped (cli_sandbox_info says which).
 * Cannot be undone.  Returns 0, or -1 when a layer that is there failed to apply (said on stderr,
 * the process then not confined further: the caller stops, exit status 2). */
int cli_confine(const cli_confine_spec *s);

/* `npzstream --sandbox-info`: one line a layer, what this build and kernel give. */
void cli_sandbox_info(FILE *f);

/* The test hook: NPZSTREAM_SANDBOX_PROBE, a comma-separated list of what to try once cli_confine
 * has confined (or, with off, not confined) the process: read=PATH (open PATH for reading),
 * write=PATH (create PATH), exec (run /bin/echo), socket, fork, vfork, clone3 (a new process
 * through clone3), ptrace, mmap-exec, thread.  Each is tried and said on stderr as
 * "npzstream: sandbox probe NAME: allowed" or "... refused (REASON)".  It only tries what the
 * sandbox must refuse, after the sandbox is in place: it cannot widen anything. */
#define CLI_SANDBOX_PROBE_ENV "NPZSTREAM_SANDBOX_PROBE"

#endif
