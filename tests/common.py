"""What the test scripts share: the pass/fail tally whose last line tests/run_all.py reads.

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from common import Tally
    T = Tally("cli")
    ok = T.ok          # ok(cond, what[, detail]) -> cond
    ...
    return T.summary() # prints "cli: N passed, M failed"; 1 if anything failed
"""


class Tally:
    def __init__(self, name, verbose=False):
        self.name = name
        self.verbose = verbose
        self.passed = 0
        self.failed = 0

    def ok(self, cond, what, detail=""):
        if cond:
            self.passed += 1
            if self.verbose:
                print("ok   " + what)
        else:
            self.failed += 1
            print("FAIL " + what + (": " + detail if detail else ""))
        return cond

    def summary(self):
        print("%s: %d passed, %d failed" % (self.name, self.passed, self.failed))
        return 1 if self.failed else 0
