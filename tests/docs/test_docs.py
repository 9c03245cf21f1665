"""The documentation, tested: every shell and C snippet of README.md and of the man pages runs, and
the man pages agree with the binary and the header.


- README.md: every ```sh and ```c block.  A block preceded by `<!-- snippet: NAME -->` is written
  to the file NAME (the README's app.c and policy.c, which later blocks build); one preceded by
  `<!-- snippet: not run (why) -->` is skipped, and so are the install commands at the top (they
  are what CI runs).  C blocks are compiled with -std=c11 -Wall -Wextra -Werror against the
  library and run on a real file; shell blocks run with `bash -e -o pipefail` in a scratch folder
  holding the files they name (upload.npz, uploads/, list.txt, model.npz, $URL, a HOME of its
  own), with `build/` the binary's folder.
- npzstream(3)'s EXAMPLE is compiled and run; npzstream(1)'s EXAMPLES run line by line (a line
  that needs the network is skipped).
- The man pages: the version and RULES section are what gen_man.py writes (make man); every option
  `--help` prints is in npzstream(1) and every option npzstream(1) names is in some `--help`; every
  function of npzstream.h is in npzstream(3)'s SYNOPSIS.
- The headers: every public function of include/*.h ends its contract (alone, or with the group
  of functions before it) with the block Returns / Errors / Lifetime / Threads / Added in.
- Paths: every path of the tree that README.md, SECURITY.md, the man pages and the other READMEs
  name exists.
--quick (the sanitizer run) skips what compiles C.
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "tests", "docs"))
from common import ok  # noqa: E402
import gen_man  # noqa: E402


def blocks(text):
    """(lang, name or None, skip reason or None, body) of every fenced block."""
    out = []
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        m = re.match(r"^```(\w*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        prev = lines[i - 1].strip() if i else ""
        name = skip = None
        mm = re.match(r"^<!-- snippet: (.*?) -->$", prev)
        if mm:
            if mm.group(1).startswith("not run"):
                skip = mm.group(1)
            else:
                name = mm.group(1)
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        out.append((m.group(1), name, skip, "".join(lines[i + 1:j])))
        i = j + 1
    return out


def fixtures(d, builddir):
    """A scratch folder that looks like the source tree (its entries linked; build/ the binary's
    folder) and holds the files the snippets name."""
    os.symlink(builddir, os.path.join(d, "build"))
    for sub in os.listdir(ROOT):
        if sub != "build" and not sub.startswith(".venv") and not os.path.exists(os.path.join(d, sub)):
            os.symlink(os.path.join(ROOT, sub), os.path.join(d, sub))
    rng = np.random.default_rng(5)
    np.savez(os.path.join(d, "upload.npz"), images=rng.random((10, 28, 28), dtype=np.float32),
             labels=rng.integers(0, 10, 10))
    os.makedirs(os.path.join(d, "uploads"))
    names = []
    for i in range(3):
        p = os.path.join(d, "uploads", "u%d.npz" % i)
        np.savez(p, images=rng.random((i + 1, 28, 28), dtype=np.float32), labels=np.arange(i + 1) % 10)
        names.append(p)
    open(os.path.join(d, "list.txt"), "w").write("\n".join(names) + "\n")
    np.savez(os.path.join(d, "model.npz"), w=np.ones((2, 3)))
    os.makedirs(os.path.join(d, "home"))


def libs():
    r = subprocess.run(["make", "-s", "--no-print-directory", "print-libs"], cwd=ROOT, capture_output=True, text=True)
    return r.stdout.split()


def cc(src, exe, builddir):
    r = subprocess.run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-I", os.path.join(ROOT, "include"), src,
                        os.path.join(builddir, "libnpzstream.a"), "-o", exe] + libs(), capture_output=True, text=True)
    return r


def test_readme(binary, quick):
    builddir = os.path.dirname(binary)
    plain = os.path.join(ROOT, "build")
    text = open(os.path.join(ROOT, "README.md")).read()
    bs = blocks(text)
    ran = {"sh": 0, "c": 0}
    with tempfile.TemporaryDirectory(prefix="npzs-docs-") as d:
        fixtures(d, builddir)
        env = dict(os.environ, HOME=os.path.join(d, "home"), URL="file://" + os.path.join(d, "model.npz"),
                   PATH=builddir + os.pathsep + os.environ.get("PATH", ""))
        for k, (lang, name, skip, body) in enumerate(bs):
            if lang not in ("sh", "c") or skip:
                continue
            if lang == "sh" and body.lstrip().startswith("apt-get"):
                continue  # the newcomer's install commands: what CI runs
            where = "README block %d (%s%s)" % (k, lang, ", " + name if name else "")
            if lang == "c":
                src = os.path.join(d, name or "block%d.c" % k)
                open(src, "w").write(body)
                if quick:
                    continue
                exe = src[:-2]
                r = cc(src, exe, plain)
                if ok(r.returncode == 0, "%s does not compile with -Wall -Werror: %s" % (where, r.stderr[-1500:])):
                    data = open(os.path.join(ROOT, "corpus", "peers", "whisper", "mel_filters.npz"), "rb").read()
                    p = subprocess.run([exe], input=data, capture_output=True, timeout=60)
                    ok(p.returncode in (0, 1) and p.stdout, "%s: the program gives exit %d, %r %r" % (
                        where, p.returncode, p.stdout[-200:], p.stderr[-300:]))
                    if name == "app.c":
                        ok(p.returncode == 0 and p.stdout.startswith(b"valid"), "%s on mel_filters.npz: %r" % (where, p.stdout))
                        bad = subprocess.run([exe], input=data[:-9], capture_output=True, timeout=60)
                        ok(bad.returncode == 1 and b"truncated" in bad.stderr, "%s on a cut file: %d %r" % (
                            where, bad.returncode, bad.stderr))
                ran["c"] += 1
                continue
            if quick and ("cc " in body or "make " in body):
                continue
            r = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", body], cwd=d, env=env, capture_output=True,
                               timeout=600)
            ok(r.returncode == 0, "%s fails (exit %d):\n%s\nstdout: %s\nstderr: %s" % (
                where, r.returncode, body, r.stdout[-800:], r.stderr[-1500:]))
            ran["sh"] += 1
    # (--quick leaves out the blocks that build: make install's)
    ok(ran["sh"] >= (3 if quick else 4) and (quick or ran["c"] >= 2), "too few README snippets ran: %s" % ran)
    print("docs: README: %d shell blocks, %d C programs run" % (ran["sh"], ran["c"]))


def man_text(sec):
    return open(os.path.join(ROOT, "man", "npzstream." + sec)).read()


def unroff(s):
    s = re.sub(r"\\f[BIRP]", "", s)
    return s.replace("\\-", "-").replace("\\e", "\\").replace("\\(aq", "'")


def test_man_examples(binary, quick):
    builddir = os.path.dirname(binary)
    # npzstream(3): the EXAMPLE, with a main that reads stdin
    m3 = man_text("3")
    ex = unroff(m3[m3.index(".SH EXAMPLE"):].split(".nf\n", 1)[1].split(".fi\n", 1)[0])
    if not quick:
        with tempfile.TemporaryDirectory(prefix="npzs-man-") as d:
            src = os.path.join(d, "ex.c")
            open(src, "w").write(ex + "\nint main(void) { return validate_fd(0); }\n")
            r = cc(src, os.path.join(d, "ex"), os.path.join(ROOT, "build"))
            if ok(r.returncode == 0, "npzstream(3) EXAMPLE does not compile: %s" % r.stderr[-1500:]):
                data = open(os.path.join(ROOT, "corpus", "peers", "whisper", "mel_filters.npz"), "rb").read()
                for inp, want in ((data, 0), (data[:-3], 1)):
                    p = subprocess.run([os.path.join(d, "ex")], input=inp, capture_output=True, timeout=60)
                    ok(p.returncode == want, "npzstream(3) EXAMPLE: exit %d, want %d: %r" % (p.returncode, want, p.stderr))
    # npzstream(1): the EXAMPLES, line by line
    m1 = man_text("1")
    ex = unroff(m1[m1.index(".SH EXAMPLES"):].split(".nf\n", 1)[1].split(".fi\n", 1)[0])
    with tempfile.TemporaryDirectory(prefix="npzs-man-") as d:
        fixtures(d, builddir)
        env = dict(os.environ, HOME=os.path.join(d, "home"), PATH=builddir + os.pathsep + os.environ.get("PATH", ""))
        n = 0
        for line in ex.splitlines():
            if not line.strip() or "https://" in line:
                continue  # the network
            r = subprocess.run(["bash", "-o", "pipefail", "-c", line], cwd=d, env=env, capture_output=True, timeout=300)
            ok(r.returncode == 0, "npzstream(1) EXAMPLES: %r exits %d: %s" % (line, r.returncode, r.stderr[-600:]))
            n += 1
        ok(n >= 5, "only %d man page examples ran" % n)


def help_options(binary):
    opts = set()
    for cmd in ([], ["check"], ["ls"], ["extract"], ["trace"], ["refs"], ["scan"], ["vlen"]):
        r = subprocess.run([binary] + cmd + ["--help"], capture_output=True, text=True)
        opts |= set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]+)", r.stdout))
    return opts


def test_man_pages(binary):
    for path, want in gen_man.pages(binary).items():
        ok(open(path).read() == want, "%s is out of date (run: make man)" % os.path.relpath(path, ROOT))
    m1 = unroff(man_text("1"))
    man_opts = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]+)", m1[:m1.index(".SH RULES")]))
    hopts = help_options(binary)
    extra_man = {o for o in man_opts - hopts if o not in ("--flag",)}  # "--flag=N": the form of every limit
    ok(not (hopts - man_opts), "options in --help but not in npzstream(1): %s" % sorted(hopts - man_opts))
    ok(not extra_man, "options in npzstream(1) but in no --help: %s" % sorted(extra_man))
    hdr = re.sub(r"/\*.*?\*/", "", open(os.path.join(ROOT, "include", "npzstream.h")).read() +
                 open(os.path.join(ROOT, "include", "npzstream_par.h")).read(), flags=re.S)
    funcs = set(re.findall(r"\b(npzs_\w+)\s*\(", hdr)) - {"npzs_limits_check_"}
    syn = man_text("3")
    syn = syn[syn.index(".SH SYNOPSIS"):syn.index(".SH DESCRIPTION")]
    missing = sorted(f for f in funcs if f + "(" not in syn)
    ok(not missing, "functions of npzstream.h and npzstream_par.h not in npzstream(3)'s SYNOPSIS: %s" % missing)
    ver = re.search(r'#define NPZS_VERSION "([^"]+)"', hdr).group(1)
    r = subprocess.run([binary, "--version"], capture_output=True, text=True)
    ok(r.stdout.strip() == "npzstream " + ver, "--version %r, the header %s" % (r.stdout, ver))


def test_tables():
    """A Markdown table split by a blank line renders as two (SECURITY.md's lenient table was)."""
    for md in ("README.md", "SECURITY.md", "bench/README.md", "fuzz/README.md", "python/README.md"):
        path = os.path.join(ROOT, md)
        if not os.path.exists(path):
            continue
        lines = open(path).read().splitlines()
        for i in range(2, len(lines)):
            new_table = i + 1 < len(lines) and re.match(r"^\|[-:| ]+\|$", lines[i + 1].strip())
            split = (lines[i].startswith("|") and not lines[i - 1].strip() and lines[i - 2].startswith("|")
                     and not new_table)
            ok(not split, "%s:%d: a table row after a blank line inside a table" % (md, i + 1))


# ---- the headers' contract blocks ----------------------------------------------------------------

CONTRACT = ("Returns", "Errors", "Lifetime", "Threads", "Added in")


# The functions that share one block, as the headers group them (accessors of one thing, a call and
# its variant).  A function added to a group is added here; any other function has a block of its
# own, so that one whose block is missing is found even where the next function's block follows.
GROUPS = [
    "npzs_next npzs_next_",
    "npzs_error npzs_error_offset npzs_error_message npzs_error_rule npzs_error_detail npzs_error_hint "
    "npzs_rule_count npzs_rule_id npzs_rule_message npzs_rule_hint npzs_error_member npzs_error_member_name "
    "npzs_error_content_offset",
    "npzs_error_name npzs_strerror",
    "npzs_format_of npzs_ignored_bytes npzs_memory npzs_consumed",
    "npzs_state_name npzs_state_index npzs_state_count npzs_state_id npzs_state_record npzs_record_label",
    "npzs_inv_new npzs_inv_free npzs_inv_reset",
    "npzs_inv_check_after npzs_inv_content",
    "npzs_inv_push npzs_inv_finish",
    "npzs_inv_count npzs_inv_get npzs_inv_is_zip npzs_inv_complete npzs_inv_error",
    "npzs_pool_new npzs_pool_free npzs_pool_threads",
    "npzs_par_new npzs_par_new_pool",
    "npzs_par_finish npzs_par_reset npzs_par_free",
    "npzs_par_memory npzs_par_used npzs_par_threads",
    "npzs_vlen_error_name npzs_vlen_strerror",
    "npzs_vlen_new npzs_vlen_reset npzs_vlen_free",
    "npzs_vlen_next npzs_vlen_finish",
    "npzs_vlen_error npzs_vlen_error_offset npzs_vlen_error_message npzs_vlen_error_element npzs_vlen_consumed",
]


def contract_problems(text):
    """(functions, problems) of a header's text: each file-scope function declaration (npzs_*) is
    followed, before any section heading ("/* ---- ") and before the header's end, by its block: a
    comment of the five lines in their order, "/*  Returns   ...", " *  Errors    ..." and so on;
    the functions between two blocks are the later block's group, one of GROUPS."""
    blank = lambda m: re.sub(r"[^\n]", " ", m.group(0))  # noqa: E731 (positions kept)
    code = re.sub(r"/\*.*?\*/", blank, text, flags=re.S)
    code = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", blank, code, flags=re.M)
    code = code.replace('extern "C" {', " " * 12)
    items = []
    for m in re.finditer(r"/\*.*?\*/", text, re.S):
        c = m.group(0)
        if c.startswith("/* ----"):
            items.append((m.start(), "section", c[:60]))
        elif c.startswith("/*  Returns"):
            items.append((m.start(), "block", c))
    for m in re.finditer(r"\b(npzs_\w+)\s*\(", code):
        before = code[:m.start()]
        stmt = before[max(before.rfind(";"), before.rfind("}"), before.rfind("{")) + 1:]
        if before.count("{") == before.count("}") and "typedef" not in stmt and "(" not in stmt:
            items.append((m.start(), "function", m.group(1)))
    items.sort()
    functions, problems, run = [], [], []
    for _, kind, v in items:
        if kind == "function":
            functions.append(v)
            run.append(v)
        elif kind == "block":
            at = [re.search(r"^(?:/\*| \*)  %s  +\S" % k, v, re.M) for k in CONTRACT]
            if not all(at) or [a.start() for a in at] != sorted(a.start() for a in at):
                problems.append("a block without %s in that order: %s" % (" / ".join(CONTRACT), v[:120]))
            elif not run:
                problems.append("a block that follows no function: %s" % v[:120])
            elif len(run) > 1 and " ".join(run) not in GROUPS:
                problems.append("%s: one block for all (a block missing? a new group is added to GROUPS)"
                                % ", ".join(run))
            run = []
        elif run:
            problems.append("%s: no contract block before the section %r" % (", ".join(run), v))
            run = []
    if run:
        problems.append("%s: no contract block before the header's end" % ", ".join(run))
    return functions, problems


def test_header_contracts():
    headers = sorted(glob.glob(os.path.join(ROOT, "include", "*.h")))
    total = 0
    for h in headers:
        text = open(h).read()
        functions, problems = contract_problems(text)
        total += len(functions)
        ok(not problems, "%s: %s" % (os.path.relpath(h, ROOT), "; ".join(problems)))
        # the check can fail: the header with its last block taken out, and with a Threads line dropped
        last = text.rindex("/*  Returns")
        cut = text[:last] + text[text.index("*/", last) + 2:]
        ok(contract_problems(cut)[1], "%s without its last block passes the check" % h)
        ok(contract_problems(text.replace(" *  Threads", " *  Thread", 1))[1], "%s without a Threads line passes" % h)
        first = text.index("/*  Returns")
        ok(contract_problems(text[:first] + text[text.index("*/", first) + 2:])[1],
           "%s without its first block passes the check" % h)
    ok(len(headers) >= 4 and total >= 80, "only %d functions in %d headers" % (total, len(headers)))


# ---- paths the documentation names ---------------------------------------------------------------

def doc_files():
    return (["README.md", "SECURITY.md", "man/npzstream.1", "man/npzstream.3"] +
            sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "*", "README.md")) +
                   glob.glob(os.path.join(ROOT, "*", "*", "README.md"))))


def missing_paths(doc, text):
    """[(line, path)] of the paths of the tree text names that do not exist: a path begins with a
    top folder of the tree (src/, tests/, .ci/ ...; build/ is made, not kept), and is looked for from
    the root, from the document's folder, and in a row of README's layout table ("| `tests/` | ...")
    under the row's folder.  A pattern (a *, [ch], <NAME>, {a,b} or $VAR after it) is not a path."""
    top = sorted(d for d in os.listdir(ROOT) if os.path.isdir(os.path.join(ROOT, d))
                 and d not in ("build", ".git") and not d.startswith(".venv"))
    pat = re.compile(r"(?<![\w./$-])((?:%s)/[\w.+/-]*)" % "|".join(map(re.escape, top)))
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        row = re.match(r"^\| `([\w./-]+/)` \|", line)
        for m in pat.finditer(line):
            p = m.group(1).rstrip(".")
            if line[m.end():m.end() + 1] in ("*", "[", "<", "{", "$"):
                continue
            where = [p, os.path.join(os.path.dirname(doc), p)] + ([os.path.join(row.group(1), p)] if row else [])
            if not any(os.path.exists(os.path.join(ROOT, w)) for w in where):
                out.append((n, p))
    return out


def test_doc_paths():
    named = 0
    for doc in doc_files():
        text = open(os.path.join(ROOT, doc)).read()
        if doc.startswith("man/"):
            text = unroff(text).replace("\\&", "")
        bad = missing_paths(doc, text)
        ok(not bad, "%s names paths that do not exist: %s" % (doc, ", ".join("line %d: %s" % b for b in bad)))
        named += len(re.findall(r"\b(?:src|cli|report|tests)/\w", text))
        # the check can fail: a path that is not there
        ok(missing_paths(doc, text + "\nsee src/no-such-file.c\n"), "%s: a missing path passes the check" % doc)
    ok(named >= 100, "only %d paths named in the documentation" % named)


# where the documents say which release added or changed something: every such version is at most
# the release this tree is (a header saying "added in 0.8.0" in a 0.7.0 tree was)
VERSION_FILES = ("include/*.h", "README.md", "SECURITY.md", "python/README.md", "man/npzstream.[13]",
                 "python/src/npzstream/*.py", "python/src/npzstream/ext/*.[ch]", "wasm/*.js", "wasm/*.mjs",
                 "wasm/*.mts", "wasm/*.c", "cli/*.[ch]", "report/*.[ch]", "src/*.[ch]", "src/*/*.[ch]")
SINCE = re.compile(r"\b(?:added|changed|since|new in|until)\b|\((?:added in )?0\.\d+\.\d+\)", re.I)


def test_versions_agree(binary):
    """One version for the release: NPZS_VERSION and NPZS_VERSION_NUM in npzstream.h, the command
    line's --version, both man pages' .TH line, the WebAssembly build's documented version(), the
    README's pre-commit rev; and no document says a release after it added or changed something.
    (The Python package's version is npzs_version(): tests/python/pytest_package.py.)"""
    import glob
    h = open(os.path.join(ROOT, "include", "npzstream.h")).read()
    ver = re.search(r'#define NPZS_VERSION "(\d+)\.(\d+)\.(\d+)"', h)
    num = int(re.search(r"#define NPZS_VERSION_NUM (0x[0-9a-fA-F]+)", h).group(1), 16)
    v = tuple(int(x) for x in ver.groups())
    text = "%d.%d.%d" % v
    ok(num == v[0] << 16 | v[1] << 8 | v[2], "NPZS_VERSION_NUM %#08x is not NPZS_VERSION %s" % (num, text))
    r = subprocess.run([binary, "--version"], capture_output=True, text=True)
    ok(r.stdout.strip() == "npzstream " + text, "--version %r, the header %s" % (r.stdout, text))
    for sec in ("1", "3"):
        th = open(os.path.join(ROOT, "man", "npzstream." + sec)).readline()
        ok('"npzstream %s"' % text in th, "npzstream.%s's .TH: %s" % (sec, th.strip()))
    for f, pat in (("wasm/npzstream.js", r"The library's version \(NPZS_VERSION, \"([\d.]+)\"\)"),
                   ("wasm/npzstream.d.mts", r"The library's version \(NPZS_VERSION\), \"([\d.]+)\""),
                   ("README.md", r"rev: v([\d.]+) ")):
        m = re.search(pat, open(os.path.join(ROOT, f)).read())
        ok(m is not None and m.group(1) == text, "%s names version %s, the header %s" % (f, m and m.group(1), text))
    later, lines = [], 0
    for pattern in VERSION_FILES:
        for path in sorted(glob.glob(os.path.join(ROOT, pattern))):
            for i, line in enumerate(open(path, errors="replace"), 1):
                if not SINCE.search(line):
                    continue
                for m in re.finditer(r"(?<![\d.\w])0\.(\d+)\.(\d+)(?!\d|\.\d)", line):
                    lines += 1
                    if (0, int(m.group(1)), int(m.group(2))) > v:
                        later.append("%s:%d %s" % (os.path.relpath(path, ROOT), i, m.group(0)))
    ok(lines > 100, "the documents' versions were found (%d)" % lines)
    ok(not later, "documents name a release after %s" % text, later[:20])
