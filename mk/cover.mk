# make cover: line and branch coverage of src/ by the test suites and the committed corpus (gcov).
COV = build/cov
.PHONY: cover
cover:
	@rm -rf $(COV) && mkdir -p $(COV)
	@for f in $(SRC); do \
	  $(CC) $(CSTD) -O0 -g --coverage $(INC) $(TEST_DEF) -Isrc -c $$f -o $(COV)/$$(basename $$f .c).o || exit 1; done
	$(CC) $(CSTD) -O0 -g --coverage $(INC) $(TEST_DEF) -Isrc -Ifuzz -o $(COV)/test_api $(TEST_API_SRC) $(COV)/*.o $(LDLIBS) -pthread
	$(CC) $(CSTD) -O0 -g --coverage $(INC) $(SECCOMP_DEF) -Isrc -o $(COV)/npzstream $(CLI_SRC) $(COV)/*.o $(LDLIBS) $(CLI_LIBS)
	$(PYTHON) tests/cover.py $(COV) $(SRC)
