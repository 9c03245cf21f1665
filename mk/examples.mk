# mk/examples.mk -- examples/*.c, built against the static library (and again with ASan+UBSan
# next to build/san/npzstream); `make test` builds them and tests/examples/test_examples.py
# runs them.
EXAMPLES     = read_stdin upload_poll copy_array
EXAMPLE_BINS = $(EXAMPLES:%=$(B)/examples/%) $(EXAMPLES:%=$(B)/san/examples/%)
TEST_DEPS   += examples

.PHONY: examples
examples: $(EXAMPLE_BINS)

$(B)/examples/%: examples/%.c $(B)/libnpzstream.a include/npzstream.h
	@mkdir -p $(B)/examples
	$(CC) $(NPZS_FLAGS) $(CFLAGS) -o $@ $< $(B)/libnpzstream.a $(LDLIBS)
$(B)/san/examples/%: examples/%.c $(SAN_LIB) $(HDR)
	@mkdir -p $(B)/san/examples
	$(CC) $(SAN_FLAGS) -o $@ $< $(SAN_LIB) $(LDLIBS)
