#!/usr/bin/python3
"""make bench-policy: how a policy's compile and its member matching scale (issue 39).

    policy_scale.py --bin build/npzstream [--members 20000] [--patterns 20000] [--keys 100000]
                    [--runs 3] [--timeout 120] [--only NAME,...]

Every case is one `npzstream check --policy P FILE` command, timed end to end, wall clock and
CPU (user + system) each the median of --runs; a run past --timeout is reported as such and
the case's other runs are skipped:

  compile-*   a policy of --keys exact keys (3 characters each, so 100,000 of them fit the 1 MiB
              a policy may have), in sorted, reverse and random order, checked against a tiny
              .npy (the verdict is POLICY.required: the compile is what is timed)
  object-*    a 1 MiB JSON object of 131,069 keys: at the top (refused: unknown field), as
              "members" (refused: more than 100,000 members), and with its last key repeating
              its first (refused: duplicate key, at the last key)
  match-*     --patterns patterns against an archive of --members tiny members whose names each
              match exactly one of them (allow_other_members false: the archive is accepted only
              if every member found its pattern), one case per shape of pattern: prefix
              "layer.N.*", suffix "*.bias_N", infix "*.blkN.*", a '?' or a class before the
              literal, and exact keys for reference; "bare" is the shape the index cannot
              narrow (no literal character: "[a-z]*[0-9]" and the like), with --bare patterns
  no-policy   the same archive without a policy (what reading 20,000 members costs)

The archives and policies are written into a temporary folder (never into the tree).  Prints
a Markdown table for bench/README.md.
"""
import argparse, os, random, resource, statistics, string, subprocess, sys, tempfile, time, zipfile

NPY = b"\x93NUMPY\x01\x00v\x00" + ("{'descr': '|u1', 'fortran_order': False, 'shape': (0,), }".ljust(117) + "\n").encode()
ALNUM = string.digits + string.ascii_letters


def archive(path, names):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        for n in names:
            z.writestr(n + ".npy", NPY)


def npy(path):
    with open(path, "wb") as f:
        f.write(NPY)


def keys3(n):
    """n distinct keys of at most 3 characters."""
    out = []
    for a in ALNUM:
        for b in ALNUM:
            for c in ALNUM:
                out.append(a + b + c)
                if len(out) == n:
                    return out
    raise SystemExit("at most %d keys" % len(out))


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    if len(text.encode()) > 1 << 20:
        raise SystemExit("%s: %d bytes, over the 1 MiB a policy may have" % (path, len(text.encode())))


def members_policy(keys, other=True):
    body = ",".join('"%s":{}' % k for k in keys)
    return '{"allow_other_members":%s,"members":{%s}}' % ("true" if other else "false", body)


def cpu():
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime


def timed(cmd, runs, timeout):
    """(median wall seconds, median CPU seconds), (exit status, output); None on a timeout."""
    ts, cs, rc = [], [], None
    for _ in range(runs):
        t, c = time.perf_counter(), cpu()
        try:
            r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, "timeout"
        ts.append(time.perf_counter() - t)
        cs.append(cpu() - c)
        rc = r.returncode, r.stdout.decode(errors="replace").strip()
    return (statistics.median(ts), statistics.median(cs)), rc


SHAPES = {  # pattern of index i, the name of a member that matches only it
    "prefix": (lambda i: "layer.%d.*" % i, lambda i: "layer.%d.weight" % i),
    "suffix": (lambda i: "*.bias_%d" % i, lambda i: "blk.bias_%d" % i),
    "infix": (lambda i: "*.blk%d.*" % i, lambda i: "model.blk%d.w" % i),
    "question": (lambda i: "?odel.blk%d.*" % i, lambda i: "model.blk%d.w" % i),
    "class": (lambda i: "[mn]odel.blk%d.[wb]" % i, lambda i: "model.blk%d.w" % i),
    "mixed": (lambda i: ("layer.%d.*", "*.bias_%d", "*.blk%d.*", "?x%d_*")[i % 4] % i,
              lambda i: ("layer.%d.w", "a.bias_%d", "m.blk%d.w", "zx%d_q")[i % 4] % i),
    "exact": (lambda i: "layer.%d.weight" % i, lambda i: "layer.%d.weight" % i),
}


def bare_patterns(n):
    """n distinct patterns without a literal character: "[a]*[0]", "[b]*[1]", ... then with '?'s."""
    return ["[%s]*[%d]" % (string.ascii_lowercase[i % 26], i % 10) + "?" * (i // 130) for i in range(n)]


def bare_name(m, n):
    """member m's name: it matches bare pattern m % n (and no earlier one)."""
    i = m % n
    return string.ascii_lowercase[i % 26] + "z" * (1 + m // n) + str(i % 10) + "q" * (i // 130)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/npzstream")
    ap.add_argument("--members", type=int, default=20000)
    ap.add_argument("--patterns", type=int, default=20000)
    ap.add_argument("--keys", type=int, default=100000)
    ap.add_argument("--bare", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    only = set(filter(None, a.only.split(",")))
    if a.members > a.patterns:
        raise SystemExit("--members is at most --patterns (each member matches its own pattern)")
    rng = random.Random(39)
    rows = []
    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="npzs-polscale-") as tmp:
        tiny = os.path.join(tmp, "tiny.npy")
        npy(tiny)

        def case(name, policy, target, want):
            if only and name not in only and name.split("-")[0] not in only:
                return
            cmd = [a.bin, "check", "--max-members", str(max(a.members, 100000))]
            if policy is not None:
                pp = os.path.join(tmp, name + ".json")
                write(pp, policy)
                cmd += ["--policy", pp]
            t, rc = timed(cmd + [target], a.runs, a.timeout)
            if t is None:
                rows.append((name, "> %g s (timeout)" % a.timeout, "", "", ""))
                print("%-18s timeout" % name, flush=True)
                return
            ok = want(rc)
            rows.append((name, "%.3f s" % t[0], "%.3f s" % t[1], "yes" if t[0] < 1 else "no",
                         "" if ok else "UNEXPECTED: %s" % (rc,)))
            print("%-18s %.3f s (CPU %.3f s)  exit %d  %s" % (name, t[0], t[1], rc[0],
                                                            rc[1].splitlines()[0][:100] if rc[1] else ""), flush=True)

        refused = lambda words: lambda rc: rc[0] != 0 and words in rc[1]  # noqa: E731
        accepted = lambda rc: rc[0] == 0  # noqa: E731
        keys = keys3(a.keys)
        for order in ("sorted", "reverse", "random"):
            k = sorted(keys)
            if order == "reverse":
                k.reverse()
            elif order == "random":
                rng.shuffle(k)
            case("compile-" + order, members_policy(k), tiny, refused("required"))
        # a 1 MiB object: 131,069 keys of 3 characters, each '"abc":0,' (8 bytes)
        obj = keys3(131069)
        case("object-top", "{" + ",".join('"%s":0' % k for k in obj) + "}", tiny, refused("unknown field"))
        case("object-members", '{"members":{' + ",".join('"%s":{}' % k for k in obj[:116000]) + "}}", tiny,
             refused("100000"))
        case("object-dup", "{" + ",".join('"%s":0' % k for k in obj[:-1] + obj[:1]) + "}", tiny,
             refused("duplicate key"))
        # matching
        idx = list(range(a.members))
        rng.shuffle(idx)
        for shape, (pat, name) in SHAPES.items():
            if only and "match-" + shape not in only and "match" not in only:
                continue
            path = os.path.join(tmp, shape + ".npz")
            archive(path, [name(i) for i in idx])
            pats = [pat(i) for i in range(a.patterns)]
            case("match-" + shape, members_policy(pats, other=False), path, accepted)
        if not only or "match-bare" in only or "match" in only:
            path = os.path.join(tmp, "bare.npz")
            archive(path, [bare_name(m, a.bare) for m in idx])
            case("match-bare", members_policy(bare_patterns(a.bare), other=False), path, accepted)
            case("no-policy", None, os.path.join(tmp, "prefix.npz"), accepted)
    print()
    print("| case | time | CPU | < 1 s | note |")
    print("|---|---:|---:|---|---|")
    for r in rows:
        print("| %s | %s | %s | %s | %s |" % r)
    print("\nload average (1 min) before %.2f, after %.2f; %d CPUs" % (load0[0], os.getloadavg()[0], os.cpu_count() or 0))
    return 1 if any(r[4] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
