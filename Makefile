# npzstream -- see README.md.  `make` builds the library and CLI, `make test` runs every test.
CC      ?= cc
PYTHON  ?= /usr/bin/python3
WARN     = -Wall -Wextra -Wpedantic -Wconversion -Wshadow -Wimplicit-fallthrough -Wstrict-prototypes
CSTD     = -std=c11
OPT     ?= -O2 -g
WERROR  ?= $(if $(CI),-Werror,)
CFLAGS  += $(CSTD) $(OPT) $(WARN) $(WERROR) -Iinclude -fvisibility=hidden
LDLIBS  += -lz
SONAME   = libnpzstream.so.0

SRC      = src/npzs.c src/npy.c src/zip.c src/names.c src/zlocate.c src/crc.c
CLI_SRC  = cli/npzstream.c
HDR      = include/npzstream.h src/internal.h src/states.h src/rules.h
B        = build

.DEFAULT_GOAL := all

# Feature fragments: each mk/*.mk may add sources (SRC += ...), targets and test prerequisites
# (TEST_DEPS += ...).  Included before any rule so that their variables count everywhere.
TEST_DEPS =
include $(sort $(wildcard mk/*.mk))
OBJ      = $(SRC:src/%.c=$(B)/%.o)
PIC_OBJ  = $(SRC:src/%.c=$(B)/pic/%.o)

SAN      = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
BS       = build/san

.PHONY: all test check demo clean
all: $(B)/libnpzstream.a $(B)/libnpzstream.so $(B)/npzstream

$(B)/%.o: src/%.c $(HDR) | $(B)
	$(CC) $(CFLAGS) -c $< -o $@
$(B)/pic/%.o: src/%.c $(HDR) | $(B)
	@mkdir -p $(B)/pic
	$(CC) $(CFLAGS) -fPIC -c $< -o $@
$(B)/libnpzstream.a: $(OBJ)
	rm -f $@ && ar rcs $@ $^
$(B)/libnpzstream.so: $(PIC_OBJ)
	$(CC) -shared -Wl,-soname,$(SONAME) -o $@ $^ $(LDLIBS)
$(B)/npzstream: $(CLI_SRC) $(wildcard cli/*.h) $(B)/libnpzstream.a $(HDR)
	$(CC) $(CFLAGS) -o $@ $(CLI_SRC) $(B)/libnpzstream.a $(LDLIBS)
$(B):
	@mkdir -p $(B)

# Sanitizer build: library + CLI + C tests compiled with ASan and UBSan.
$(BS)/npzstream: $(CLI_SRC) $(wildcard cli/*.h) $(SRC) $(HDR)
	@mkdir -p $(BS)
	$(CC) $(CSTD) -O1 -g $(WARN) $(WERROR) -Iinclude $(SAN) -o $@ $(CLI_SRC) $(SRC) $(LDLIBS)
$(BS)/test_api: tests/test_api.c fuzz/common.c fuzz/zfview.c fuzz/common.h $(SRC) $(HDR)
	@mkdir -p $(BS)
	$(CC) $(CSTD) -O1 -g $(WARN) $(WERROR) -Iinclude -Isrc -Ifuzz $(SAN) -o $@ tests/test_api.c fuzz/common.c fuzz/zfview.c $(SRC) $(LDLIBS) -pthread
$(B)/test_api: tests/test_api.c fuzz/common.c fuzz/zfview.c fuzz/common.h $(B)/libnpzstream.a
	$(CC) $(CFLAGS) -Isrc -Ifuzz -o $@ tests/test_api.c fuzz/common.c fuzz/zfview.c $(B)/libnpzstream.a $(LDLIBS) -pthread

# make demo: build, then check two shipped real files (one .npz, one .npy).
demo: all
	$(B)/npzstream check corpus/peers/whisper/mel_filters.npz
	$(B)/npzstream check --json corpus/peers/ndarray-npy/example_c64_big_endian_fortran.npy

# make test: everything, plain and under ASan+UBSan.
test: all $(B)/test_api $(BS)/npzstream $(BS)/test_api $(TEST_DEPS) ref-matrix
	$(PYTHON) tests/run_all.py --plain $(B) --san $(BS)
check: test

clean:
	rm -rf build

# Fuzzing targets (make fuzz, make afl, make fuzz-run SECONDS=N, make regress) live beside the harnesses.
-include fuzz/fuzz.mk
