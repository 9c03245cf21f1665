# mk/vlen.mk -- Zarr vlen-ndarray chunks (issue 8): library module, `npzstream vlen`, tests.
# (Defines no default goal: .DEFAULT_GOAL is restored at the end.)
VLEN_SAVED_GOAL := $(.DEFAULT_GOAL)

SRC += src/vlen.c
HDR += include/npzstream_vlen.h
# cli/cmd_vlen.c: added here unless another fragment already did
ifeq ($(filter cli/cmd_vlen.c,$(CLI_SRC)),)
CLI_SRC += cli/cmd_vlen.c
endif

# C-level tests (tests/vlen/test_vlen_api.c), plain and under ASan+UBSan.  tests/vlen/test_vlen.py
# runs the one next to the npzstream binary it is given (build/ or build/san/).
VLEN_SAN_FLAGS = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
TEST_DEPS += $(B)/test_vlen_api $(B)/san/test_vlen_api

$(B)/test_vlen_api: tests/vlen/test_vlen_api.c $(B)/libnpzstream.a include/npzstream.h include/npzstream_vlen.h
	$(CC) $(CFLAGS) -o $@ tests/vlen/test_vlen_api.c $(B)/libnpzstream.a $(LDLIBS)
$(B)/san/test_vlen_api: tests/vlen/test_vlen_api.c $(SRC) $(HDR)
	@mkdir -p $(B)/san
	$(CC) $(CSTD) -O1 -g $(WARN) $(WERROR) -Iinclude $(VLEN_SAN_FLAGS) -o $@ tests/vlen/test_vlen_api.c $(SRC) $(LDLIBS)

# Regenerate the fuzz seeds corpus/fuzz_vlen/ (numcodecs VLenBytes when importable).
.PHONY: vlen-seeds
vlen-seeds:
	$(PYTHON) tests/vlen/gen_seeds.py corpus/fuzz_vlen

.DEFAULT_GOAL := $(VLEN_SAVED_GOAL)
