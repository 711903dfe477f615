# Entry points (see README.md):
#   make        set up .venv (checks Java 17+), model-check the tour (the models marked tour = true in
#               specs/*/models.toml: a few per protocol that tell its story; one line each, then the results
#               table), print one counterexample as an example and write all of them to out/, then simulate
#               a faulty run of the reference broker and of the YDB reference engine into out/ and validate
#               their traces
#   make models model-check every registered model of tier ci (what CI checks), counterexamples to out/
#   make test   set up .venv if needed, lint, types, and the tests CI runs (pytest --tier ci, about
#               8-15 minutes on 2 cores): every test make quick runs, every model's outcome and pins but
#               the 13 that take 25 s or more, the docs blocks of the others, a few short tests of each
#               subsystem, and one of 16 shards of the rest (even by measured times), in turn by commit (tests/tiers.py)
#   make test-all  the same with every test (23-67 minutes on 2 cores): what a session runs before
#               it ends, and before an issue is resolved
#   make quick  the loop while editing: lint, types, and the tests that start no TLC, Spark, broker or
#               browser (about 860 of the 1,400, a minute or two on 2 cores); make test before a commit
#   make docs   build the docs site into out/site (MkDocs, Material theme, Mermaid bundled; strict: a
#               broken link fails); scripts/docsite's `serve` and `check` serve it and load it in Chromium
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.txconform-installed
OUT := out
EXAMPLE := resharding_txn_no_check

.PHONY: all run models test test-all quick setup clean docs
all: run

$(STAMP): pyproject.toml scripts/setup.sh
	@bash scripts/setup.sh

setup: $(STAMP)

run: $(STAMP)
	@$(BIN)/txconform model-check --tier tour --out $(OUT) --example $(EXAMPLE)
	@$(BIN)/txconform simulate --seed 1 --workload transfer:aborts=true --faults all --out $(OUT)/faulty-run.jsonl
	@$(BIN)/txconform check $(OUT)/faulty-run.jsonl
	@$(BIN)/txconform simulate --protocol ydb --seed 7 --workload copy:table=true --faults all --out $(OUT)/ydb-faulty-run.jsonl
	@$(BIN)/txconform check $(OUT)/ydb-faulty-run.jsonl
	@echo
	@echo "Everything this run wrote is in $(OUT)/:"
	@echo "  $(OUT)/NAME.md           the counterexample of model NAME: its steps and a Mermaid diagram"
	@echo "  $(OUT)/NAME.itf.json     the same trace as ITF (Apalache's trace format)"
	@echo "  $(OUT)/faulty-run.jsonl  the faulty run of the reference broker that txconform check validated"
	@echo "  $(OUT)/ydb-faulty-run.jsonl  the same for the YDB reference engine"
	@echo "Next:"
	@echo "  make models                                     model-check every registered model (what CI checks)"
	@echo "  $(BIN)/txconform model-check resharding_txn_offset_check   the resharding fix (1.5 million states, a minute)"
	@echo "  $(BIN)/txconform model-check --traces NAME   print the counterexample of model NAME (--list lists the models)"
	@echo "  make test                                       run the whole test suite"

models: $(STAMP)
	@$(BIN)/txconform model-check --out $(OUT)

test: $(STAMP)
	@$(BIN)/ruff check .
	@$(BIN)/mypy
	@$(BIN)/python -m pytest -n 2 --durations=40 --tier ci

test-all: $(STAMP)
	@$(BIN)/ruff check .
	@$(BIN)/mypy
	@$(BIN)/python -m pytest -n 2 --durations=40

QUICK := not tlc and not spark and not spark_cluster and not probe and not hypothesis_runs and not browser
quick: $(STAMP)
	@$(BIN)/ruff check .
	@$(BIN)/mypy
	@$(BIN)/python -m pytest -n 2 -q -m "$(QUICK)"

docs: $(STAMP)
	@PYTHONPATH=scripts $(BIN)/python -m docsite build

clean:
	rm -rf $(VENV) $(OUT) .pytest_cache .hypothesis
