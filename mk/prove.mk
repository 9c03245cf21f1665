# make prove: Frama-C's EVA (Debian: frama-c-base) over the pure decoders -- src/zrec/zrec.c,
# src/zrec/zlocate.c, src/zip/names.c, src/bytes/crc.c (the glue, not zlib) and src/npy/npyhdr.c -- each through its
# driver in prove/, which gives every entry point any bytes of any length and limits anywhere in
# their documented ranges.  prove/prove.py prints the alarms per file and fails on any alarm that
# prove/allow.txt does not list with its reason, on an analysis that does not reach its end, and on
# a function of a proved file that no driver reaches.  Logs in build/prove/.  Without frama-c it
# says so and fails; prove-if-available (CI) skips instead.  prove-big: the unit over every header
# text the limits allow, up to 2^30 bytes (npyhdr-big), too long for CI; SECURITY.md ("What is proven") lists its
# runs, one row per commit.
PROVE_JOBS ?= 2
PROVE_UNITS ?=
.PHONY: prove prove-if-available prove-big
prove:
	$(PYTHON) prove/prove.py --jobs $(PROVE_JOBS) $(if $(PROVE_UNITS),--units $(PROVE_UNITS),)
prove-if-available:
	$(PYTHON) prove/prove.py --jobs $(PROVE_JOBS) --skip-missing
prove-big:
	$(PYTHON) prove/prove.py --jobs 1 --units npyhdr-big
