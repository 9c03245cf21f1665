# mk/diff.mk -- the differential oracle against NumPy (tests/differential/, see its README.md).
#   make diff-campaign [N=100000] [SEED=1] [JOBS=2]   long campaign: counts by class, strict
#                                                      rejections per SECURITY.md rule, failures
#                                                      (minimized into tests/differential/regress/)
#   make diff-ci                                       the CI set alone (also part of `make test`)
N     ?= 100000
SEED  ?= 1
JOBS  ?= 2

.PHONY: diff-campaign diff-ci
diff-campaign: $(B)/npzstream
	$(PYTHON) tests/differential/campaign.py --bin $(B)/npzstream -n $(N) --seed $(SEED) --jobs $(JOBS) --save-failures

diff-ci: $(B)/npzstream
	$(PYTHON) -m pytest tests/differential/test_diff.py --bin $(B)/npzstream
