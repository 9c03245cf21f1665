# make format: clang-format (Debian: clang-format, 14 or later) rewrites the project's C in place
# after .clang-format; make format-check (CI) changes nothing, and fails naming each file that
# make format would change.  The C: the library (src/, include/), the command line (cli/), the
# report (report/), the C suites (tests/*/), the fuzz harnesses and their driver (fuzz/), the Python
# package's extension (python/src/npzstream/ext/), the WebAssembly shim (wasm/), the proof's
# drivers and stub headers (prove/), the examples and the benchmarks' C (examples/, bench/).
# fuzz/state_prefixes.h is left out: fuzz/make_corpus.py writes it.  The annotations the proof
# reads (/*@ ... */) are comments: .clang-format's ReflowComments: false leaves their text as it is.
CLANG_FORMAT ?= clang-format
FORMAT_SRC = $(filter-out fuzz/state_prefixes.h,$(sort $(wildcard src/*.[ch] src/*/*.[ch] include/*.h cli/*.[ch] \
             report/*.[ch] tests/*/*.[ch] fuzz/*.[ch] python/src/npzstream/ext/*.[ch] wasm/*.[ch] prove/*.[ch] \
             prove/include/*.h prove/include/*/*.h examples/*.c bench/*.c)))
.PHONY: format format-check
format:
	@command -v $(CLANG_FORMAT) >/dev/null || { echo "make format: $(CLANG_FORMAT) not found (apt-get install clang-format)"; exit 2; }
	$(CLANG_FORMAT) -i $(FORMAT_SRC)
	@# clang-format 14 lays out a few macro bodies (an X() list in include/npzstream.h) anew on a
	@# second pass: the second pass is the fixed point format-check holds the files to
	$(CLANG_FORMAT) -i $(FORMAT_SRC)
format-check:
	@command -v $(CLANG_FORMAT) >/dev/null || { echo "format-check: $(CLANG_FORMAT) not found (apt-get install clang-format)"; exit 2; }
	@out=$$($(CLANG_FORMAT) --dry-run $(FORMAT_SRC) 2>&1) || { echo "$$out" | tail -20; echo "format-check: $(CLANG_FORMAT) failed"; exit 2; }; \
	bad=$$(echo "$$out" | sed -n 's/^\(.*\):[0-9]*:[0-9]*: warning: code should be clang-formatted.*/\1/p' | sort -u); \
	if [ -n "$$bad" ]; then echo "format-check: these differ from .clang-format (make format rewrites them):"; \
	  printf '  %s\n' $$bad; exit 1; fi; \
	echo "format-check: $(words $(FORMAT_SRC)) files as .clang-format has them"
