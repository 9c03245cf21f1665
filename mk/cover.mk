# make cover: line and branch coverage of src/ by the test suites and the committed corpus (gcov).
COV = build/cov
.PHONY: cover
cover:
	@rm -rf $(COV) && mkdir -p $(COV)
	@for f in $(SRC); do \
	  $(CC) $(CSTD) -O0 -g --coverage -Iinclude -Isrc -c $$f -o $(COV)/$$(basename $$f .c).o || exit 1; done
	$(CC) $(CSTD) -O0 -g --coverage -Iinclude -Isrc -Ifuzz -o $(COV)/test_api tests/test_api.c fuzz/common.c fuzz/zfview.c $(COV)/*.o $(LDLIBS)
	$(CC) $(CSTD) -O0 -g --coverage -Iinclude -Isrc -o $(COV)/npzstream $(CLI_SRC) $(COV)/*.o $(LDLIBS)
	$(PYTHON) tests/cover.py $(COV) $(SRC)
