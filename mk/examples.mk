# mk/examples.mk -- examples/*.c, built against the static library (and again with ASan+UBSan
# next to build/san/npzstream); `make test` builds them and tests/examples/test_examples.py
# runs them.
.DEFAULT_GOAL := all
EXAMPLES     = read_stdin upload_poll copy_array
EXAMPLE_BINS = $(EXAMPLES:%=$(B)/examples/%) $(EXAMPLES:%=$(B)/san/examples/%)
EX_SAN       = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
TEST_DEPS   += examples

.PHONY: examples
examples: $(EXAMPLE_BINS)

$(B)/examples/%: examples/%.c $(B)/libnpzstream.a include/npzstream.h
	@mkdir -p $(B)/examples
	$(CC) $(CFLAGS) -o $@ $< $(B)/libnpzstream.a $(LDLIBS)
$(B)/san/examples/%: examples/%.c $(SRC) $(HDR)
	@mkdir -p $(B)/san/examples
	$(CC) $(CSTD) -O1 -g $(WARN) $(WERROR) -Iinclude $(EX_SAN) -o $@ $< $(SRC) $(LDLIBS)
