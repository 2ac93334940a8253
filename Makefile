# Two commands on a fresh machine with Python 3.10+:  make demo  and  make test
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
DEMO_DB = build/demo.duckdb
HTA_VENV = build/hta-venv
HTA     = $(HTA_VENV)/bin/python
TRACELENS_VENV = .peers/tracelens
TRACELENS      = $(TRACELENS_VENV)/bin/python
TRACELENS_TGZ ?= $(or $(TRACEWH_SHARED),../shared)/peers/TraceLens-1.0.0.tar.gz

.PHONY: demo test test-spark bench sample clean tracelens-numbers

# the demo installs what tracewh needs; the tests, Spark and the benches add their extras
# (pyspark alone is ~450 MB) the first time one of them runs
EXTRAS  = $(VENV)/.extras-test-spark-bench

$(BIN)/tracewh: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	@touch $@

$(EXTRAS): $(BIN)/tracewh
	$(BIN)/python -m pip install --quiet -e '.[test,spark,bench]'
	@touch $@

## Ingest the sample traces into a fresh warehouse and answer the first questions.
demo: $(BIN)/tracewh
	@rm -f $(DEMO_DB)
	$(BIN)/tracewh ingest sample_db/traces --db $(DEMO_DB)
	$(BIN)/tracewh runs --db $(DEMO_DB)
	$(BIN)/tracewh query gpu_kernel_summary --db $(DEMO_DB) --param rank=0 --max-rows 12
	$(BIN)/tracewh query gpu_trace --db $(DEMO_DB) --param rank=0 --param window=440ms/441ms --max-rows 12
	$(BIN)/tracewh sql "SELECT run_id, rank, collective, count(*) AS ops, sum(dur_ns) AS nccl_ns FROM nccl_ops GROUP BY ALL ORDER BY ALL" --db $(DEMO_DB)
	$(BIN)/tracewh report --db $(DEMO_DB) --out build/report

## Run the test suite, the Spark agreement test on 7 metrics included (real traces from ../shared/data are
## used when present; the Spark test is skipped, saying why, without Java 17+).
## TEST_JOBS worker processes (pytest-xdist; each file runs whole in one worker); TEST_JOBS=0 runs
## in this process alone.
TEST_JOBS ?= 2
test: $(EXTRAS)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pytest -rs -n $(TEST_JOBS) --dist loadfile

## Only the Spark tests: every metric (make test runs a few: tests/test_spark.py FAST) and the
## Spark ingest of every real trace (make test: a few, tests/test_spark_ingest.py).
test-spark: $(EXTRAS)
	TRACEWH_SPARK_ALL=1 PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pytest -rs -m spark

## Benchmarks: print throughput, peak memory and ratios against a baseline.
bench: $(EXTRAS) $(HTA)
	$(BIN)/python bench/nsys_ingest.py
	$(BIN)/python bench/kineto_ingest.py --hta-python $(HTA)

# HolisticTraceAnalysis, the Kineto bench's peer, in a venv of its own (pandas, jupyterlab, ...:
# about 500 MB) so that none of it reaches the venv the tests run in. pandas below 3: HTA 0.5.0's
# critical path fails on pandas 3.
$(HTA):
	$(PYTHON) -m venv $(HTA_VENV)
	$@ -m pip install --quiet 'HolisticTraceAnalysis==0.5.0' 'pandas<3'

# TraceLens v1.0.0 (AMD-AGI/TraceLens, MIT), the op metrics' peer, in a venv of its own. It is not
# on the package registry: ../shared/peers (or $TRACEWH_SHARED/peers) holds the tag's archive.
# --no-deps: its setup.py lists xprof, protobuf and office365 clients, which the PyTorch perf
# report never imports; it needs these four.
$(TRACELENS):
	$(PYTHON) -m venv $(TRACELENS_VENV)
	$@ -m pip install --quiet --no-deps $(TRACELENS_TGZ)
	$@ -m pip install --quiet pandas tqdm orjson matplotlib

## Record TraceLens' numbers for tests/test_metrics_peer_tracelens.py (tests/peer/tracelens_1.0.0.json)
## and tests/test_metrics_peer_tracelens_collectives.py (tests/peer/tracelens_collectives_1.0.0.json).
tracelens-numbers: $(TRACELENS) $(BIN)/tracewh
	$(TRACELENS) tests/peer/tracelens_numbers.py
	TRACEWH_PYTHON=$(BIN)/python $(TRACELENS) tests/peer/tracelens_collectives.py

## Rebuild sample_db/ with the project's generator.
sample: $(BIN)/tracewh
	rm -rf sample_db/traces sample_db/sample.duckdb
	$(BIN)/tracewh generate nsys sample_db/traces/ddp_4ranks --ranks 4 --iterations 6 --layers 4
	$(BIN)/tracewh generate kineto sample_db/traces/fsdp_4ranks_kineto --ranks 4 --iterations 3 --layers 2 --gzip
	$(BIN)/tracewh ingest sample_db/traces --db sample_db/sample.duckdb --quiet

clean:
	rm -rf build $(VENV) .peers
