"""The fold's polynomial (src/crcfold.c) is a multiple of the CRC-32 polynomial.

Reads FOLD_K1..FOLD_K4 from src/crcfold.c, builds Z(x) = x^K4 + x^(K4-K1) + x^(K4-K2) + x^(K4-K3) + 1
and checks Z(x) mod G(x) = 0 for G = 0x104C11DB7 (CRC-32's generator, the unreflected form), by
square-and-multiply over GF(2).  It also shows that a change of any one term breaks it.
"""
import os
import re

import pytest

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


def exponents():
    text = open(os.path.join(ROOT, "src", "crcfold.c")).read()
    k = {n: int(v) for n, v in re.findall(r"#define FOLD_(K\d) (\d+)u", text)}
    assert sorted(k) == ["K1", "K2", "K3", "K4"], "src/crcfold.c: FOLD_K1..FOLD_K4 not found (%s)" % sorted(k)
    return [k["K4"], k["K4"] - k["K1"], k["K4"] - k["K2"], k["K4"] - k["K3"], 0]


def test_fold_polynomial_is_a_multiple_of_crc32s():
    exps = exponents()
    assert zmod(exps) == 0, "x^%d + x^%d + x^%d + x^%d + 1 is not a multiple of the CRC-32 polynomial" % tuple(exps[:4])


@pytest.mark.parametrize("term", range(4))
def test_a_term_moved_breaks_it(term):
    """The check can fail: each term moved by one is not a zero polynomial."""
    moved = exponents()
    moved[term] += 1
    assert zmod(moved) != 0, "the check passes with term %d moved: it checks nothing" % term
