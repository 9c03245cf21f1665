#!/usr/bin/python3
"""The fold's polynomial (src/crcfold.c) is a multiple of the CRC-32 polynomial.

Reads FOLD_K1..FOLD_K4 from src/crcfold.c, builds Z(x) = x^K4 + x^(K4-K1) + x^(K4-K2) + x^(K4-K3) + 1
and checks Z(x) mod G(x) = 0 for G = 0x104C11DB7 (CRC-32's generator, the unreflected form), by
square-and-multiply over GF(2).  It also shows that a change of any one term breaks it.
Last line `zero-poly: N passed, M failed`.
"""
import argparse, os, re, sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
G = 0x104C11DB7


def mulmod(a, b):
    r = 0
    while b:
        if b & 1:
            r ^= a
        b >>= 1
        a <<= 1
        if a >> 32:
            a ^= G
    return r


def xpow(e):
    """x^e mod G."""
    r, base = 1, 2
    while e:
        if e & 1:
            r = mulmod(r, base)
        base = mulmod(base, base)
        e >>= 1
    return r


def zmod(exps):
    r = 0
    for e in exps:
        r ^= xpow(e)
    return r


def main():
    argparse.ArgumentParser().parse_known_args()  # run_all passes --bin; nothing here needs it
    text = open(os.path.join(ROOT, "src", "crcfold.c")).read()
    k = {n: int(v) for n, v in re.findall(r"#define FOLD_(K\d) (\d+)u", text)}
    passed = failed = 0
    if sorted(k) != ["K1", "K2", "K3", "K4"]:
        print("FAIL src/crcfold.c: FOLD_K1..FOLD_K4 not found (%s)" % sorted(k))
        print("zero-poly: 0 passed, 1 failed")
        return 1
    exps = [k["K4"], k["K4"] - k["K1"], k["K4"] - k["K2"], k["K4"] - k["K3"], 0]
    if zmod(exps) == 0:
        passed += 1
    else:
        failed += 1
        print("FAIL x^%d + x^%d + x^%d + x^%d + 1 is not a multiple of the CRC-32 polynomial" % tuple(exps[:4]))
    # the check can fail: each term moved by one is not a zero polynomial
    for i in range(4):
        moved = list(exps)
        moved[i] += 1
        if zmod(moved) != 0:
            passed += 1
        else:
            failed += 1
            print("FAIL the check passes with term %d moved: it checks nothing" % i)
    print("zero-poly: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
