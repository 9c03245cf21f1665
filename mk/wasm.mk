# mk/wasm.mk -- the WebAssembly build (README.md, "In the browser"), with Debian's emscripten.
#   make wasm               build/wasm/: npzstream.mjs (the ES module: validate, Validator),
#                           npzstream.d.mts, npzstream-check.mjs (a Node command printing what
#                           `npzstream check [--json] FILE` prints), npzstream-worker.js, demo.html
#   make test-wasm          the differential test against build/npzstream (tests/wasm/test_wasm.py)
#   make test-wasm-browser  the demo page in headless Chromium (tests/wasm/test_browser.py, run by
#                           pytest in build/venv-selenium: Selenium and pytest from PyPI)
#   make bench-wasm         wasm size and speed against the native command (bench/wasm.py)
# make test-all runs the two tests (tests/run_all.py, tier rest) after building what they need.
# zlib is Debian's source of the zlib the native build links, or where the archive does not serve
# it a later release with every fix it has, never one that lacks them unless WASM_ZLIB_ALLOW_OLD=1
# (wasm/zlib-source.sh, into build/wasm/zlib); the library's sources but the parallel helper's
# (threads) and vlen's.

EMCC       ?= emcc
NODE       ?= node
BW          = $(B)/wasm
WASM_SRC    = $(filter-out src/par.c src/pool.c src/parbuf.c src/scout.c src/vlen.c,$(SRC))
WASM_ZLIB   = inflate inftrees inffast crc32 adler32 zutil
WASM_OBJ    = $(WASM_SRC:src/%.c=$(BW)/obj/%.o) $(REPORT_SRC:report/%.c=$(BW)/obj/report-%.o) $(BW)/obj/shim.o \
              $(WASM_ZLIB:%=$(BW)/obj/zlib-%.o)
WASM_OPT   ?= -O2
# the project's warnings as errors, as the native build in CI; sign conversions left out for the
# library's files: wasm32's long is 32 bits, and two functions there return a uint32_t index as
# long (src/npyhdr.c, src/policy.c; harmless, the values are small)
WASM_CFLAGS = $(CSTD) $(WARN) -Werror $(INC) -I$(BW)/zlib $(WASM_OPT)
# the emscripten runtime: one file (the wasm inlined: Node 20 cannot fetch a file path), for the
# web, workers and Node (the web path: the glue's Node path needs require, which an ES module has
# not), memory that grows to what the limits allow, no file system, no eval
WASM_LDFLAGS = $(WASM_OPT) -Werror -sMODULARIZE=1 -sEXPORT_NAME=npzsCore -sSINGLE_FILE=1 -sENVIRONMENT=web,worker \
              -sALLOW_MEMORY_GROWTH=1 -sFILESYSTEM=0 -sDYNAMIC_EXECUTION=0 -sEXPORTED_FUNCTIONS=_malloc,_free \
              -sEXPORTED_RUNTIME_METHODS=UTF8ToString
WASM_OUT    = $(BW)/npzstream.mjs $(BW)/npzstream.d.mts $(BW)/npzstream-check.mjs $(BW)/npzstream-worker.js $(BW)/demo.html
# emcc's JS optimizer finds its modules (Debian's node-* packages) there
EMCC_RUN    = NODE_PATH=/usr/share/nodejs$(if $(NODE_PATH),:$(NODE_PATH),) $(EMCC)

.PHONY: wasm wasm-if-available test-wasm test-wasm-browser bench-wasm
wasm:
	@command -v $(EMCC) >/dev/null || { echo "make wasm: $(EMCC) not found: apt-get install emscripten (Debian's, 3.1.6)"; exit 1; }
	@sh wasm/zlib-source.sh $(BW)/zlib
	@$(MAKE) --no-print-directory $(BW)/npzstream.mjs

$(BW)/obj/%.o: src/%.c $(HDR) $(BW)/zlib/.npzs-version
	@mkdir -p $(BW)/obj
	$(EMCC_RUN) $(WASM_CFLAGS) $(WASM_SIMD) -Wno-sign-conversion -fvisibility=hidden -c $< -o $@
# the CRC-32 fold in WebAssembly SIMD (128-bit XORs of its 16-byte words: 1.5x the scalar code
# here); every engine of the last years runs it (Chrome 91, Firefox 89, Safari 16.4, Node 16.4)
$(BW)/obj/crcfold.o: WASM_SIMD = -msimd128
# the report prints what `npzstream check` prints (report/, the command line's too)
$(BW)/obj/report-%.o: report/%.c $(wildcard report/*.h) $(HDR)
	@mkdir -p $(BW)/obj
	$(EMCC_RUN) $(WASM_CFLAGS) -c $< -o $@
$(BW)/obj/shim.o: wasm/shim.c $(wildcard report/*.h) $(HDR)
	@mkdir -p $(BW)/obj
	$(EMCC_RUN) $(WASM_CFLAGS) -c $< -o $@
$(BW)/obj/zlib-%.o: $(BW)/zlib/.npzs-version
	@mkdir -p $(BW)/obj
	$(EMCC_RUN) $(WASM_OPT) -Wall -Werror -c $(BW)/zlib/$*.c -o $@
$(BW)/core.js: $(WASM_OBJ)
	$(EMCC_RUN) $(WASM_LDFLAGS) $(WASM_OBJ) -o $@
$(WASM_OUT) &: $(BW)/core.js wasm/bundle.mjs wasm/npzstream.js wasm/worker.js wasm/demo.html wasm/npzstream.d.mts \
                wasm/npzstream-check.mjs
	NPZS_VERSION=$(NPZS_VER) $(NODE) wasm/bundle.mjs $(BW)/core.js $(BW)

# make test-all builds what the suites of tests/wasm need where the tools are installed; they
# say "skipped" where they are not (a failed build fails them instead)
TEST_DEPS += wasm-if-available
wasm-if-available:
	@if command -v $(EMCC) >/dev/null; then $(MAKE) --no-print-directory wasm || echo "wasm: make wasm failed"; \
	else echo "wasm: skipped: no $(EMCC) (apt-get install emscripten)"; fi
	@if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then \
	  $(MAKE) --no-print-directory $(WASM_VENV)/bin/pytest || echo "wasm: no Selenium (pip install selenium pytest failed: offline?)"; fi

test-wasm: all wasm
	$(PYTHON) -m pytest tests/wasm/test_wasm.py --bin $(B)/npzstream --wasm $(BW)

# Selenium from PyPI in a virtual environment under build/ (Chromium and its driver: Debian's)
WASM_VENV = $(B)/venv-selenium
$(WASM_VENV)/bin/pytest:
	{ [ -x $(WASM_VENV)/bin/python ] || $(PYTHON) -m venv $(WASM_VENV); } && $(WASM_VENV)/bin/pip install -q selenium pytest \
	  || { rm -rf $(WASM_VENV); exit 1; }
test-wasm-browser: all wasm
	@$(MAKE) --no-print-directory $(WASM_VENV)/bin/pytest || echo "test-wasm-browser: no Selenium (pip install failed: offline?)"
	$(WASM_VENV)/bin/python -m pytest tests/wasm/test_browser.py --bin $(B)/npzstream --wasm $(BW)

# the native command once more without ISA-L (ISAL=0): src/crcfold.c's CRC-32, the one the wasm runs
bench-wasm: all wasm
	@$(MAKE) --no-print-directory B=$(B)/bench-zlib ISAL=0 $(B)/bench-zlib/npzstream
	$(PYTHON) bench/wasm.py --bin $(B)/npzstream --bin-zlib $(B)/bench-zlib/npzstream --wasm $(BW) --size $(SIZE)
