# Two entry points (see README.md):
#   make        set up .venv (checks Java 17+), model-check every registered model, print the counterexamples,
#               then simulate a faulty run of the reference broker and validate its trace
#   make test   set up .venv if needed and run the whole test suite
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.txconform-installed

.PHONY: all run test setup clean
all: run

$(STAMP): pyproject.toml scripts/setup.sh
	@bash scripts/setup.sh

setup: $(STAMP)

run: $(STAMP)
	@$(BIN)/txconform model-check --traces
	@$(BIN)/txconform simulate --seed 1 --workload transfer:aborts=true --faults all --out $(VENV)/faulty-run.jsonl
	@$(BIN)/txconform check $(VENV)/faulty-run.jsonl

test: $(STAMP)
	@$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
