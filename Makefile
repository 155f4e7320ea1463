# Everything runs inside .venv, which the first target that needs it creates.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PROTO_SRC := $(wildcard proto/arena/v1/*.proto)
PROTO_OUT := arena/v1/arena_pb2.py

.PHONY: help venv proto test test-all check bench tournament soak fuzz clean

help:
	@echo "make tournament  run the default tournament of the bundled bots"
	@echo "make test        run the test suite (creates .venv, generates protobuf code)"
	@echo "make check       ruff (lint, format) + mypy"
	@echo "make bench       print the benchmark figures"
	@echo "make soak        long load test (loopback only, bounded in time)"
	@echo "make fuzz        long fuzzing run"
	@echo "make test-all    every test, the slow ones too (PYTEST_ARGS=... passes options)"
	@echo "make venv        create .venv, install the project, generate the protobuf code"
	@echo "make proto       generate the protobuf code (and its .pyi stubs) again"
	@echo "make clean       remove .venv and the generated code"

# "3.13": the Python of PY, and of .venv (empty when there is none or it does not run).
VERSION_OF = $(shell $(1) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)

# PY given (`make test PY=python3.13`) to a checkout whose .venv another Python made: the
# .venv is made again with PY (else the suite would run on the old Python, saying nothing).
# Without PY, whatever .venv there is stays.
ifneq ($(origin PY),file)
ifneq ($(wildcard $(STAMP)),)
ifneq ($(call VERSION_OF,$(PY)),$(call VERSION_OF,$(BIN)/python))
$(STAMP): FORCE
endif
endif
endif

# Said before anything is made: pip's "requires a different Python" came after a venv of
# the old Python was left behind, which the next `make test PY=python3.13` then reused.
NEEDS_311 = import sys; sys.exit(sys.version_info < (3, 11) and \
	"Thousand Arena needs Python 3.11 or later; $(PY) is " + sys.version.split()[0])
GIVE_PY = make: give a Python 3.11 or later with PY=, e.g. \
	make $(or $(firstword $(MAKECMDGOALS)),venv) PY=python3.13
# A PY that does not run at all (a typo; pyenv's shim of a version not selected, which is
# how `make test PY=python3.13` fails where pyenv installed 3.13 beside another): the hint
# above would name the very command that just failed.
NO_PY = make: PY=$(PY) does not run here (its error is above): give a Python 3.11 or later \
	by a command that runs, or by its path, e.g. \
	make $(or $(firstword $(MAKECMDGOALS)),venv) PY=/usr/local/bin/python3.13 (with pyenv: \
	PY=\"\$$(pyenv root)/versions/3.13.0/bin/python3\", the version \`pyenv versions\` lists)

# A .venv another Python made (or one half made) is removed, not upgraded in place: `venv`
# over it kept its bin/python, and the packages went where that python did not look.
$(STAMP): pyproject.toml
	@$(PY) -c '$(NEEDS_311)' || { if $(PY) -c '' 2>/dev/null; then echo "$(GIVE_PY)"; \
		else echo "$(NO_PY)"; fi >&2; exit 1; }
	@if [ -e $(VENV) ] && [ "$(call VERSION_OF,$(BIN)/python)" != "$(call VERSION_OF,$(PY))" ]; \
	then echo "rm -rf $(VENV)  # made by another Python than $(PY)"; rm -rf $(VENV); fi
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

venv: $(PROTO_OUT)

$(PROTO_OUT): $(PROTO_SRC) $(STAMP)
	$(BIN)/python -m grpc_tools.protoc -Iproto --python_out=. --grpc_python_out=. \
		--plugin=protoc-gen-mypy=$(BIN)/protoc-gen-mypy --mypy_out=. \
		--plugin=protoc-gen-mypy_grpc=$(BIN)/protoc-gen-mypy_grpc --mypy_grpc_out=. $(PROTO_SRC)
	touch $(PROTO_OUT)

proto: $(PROTO_OUT)

# Tests run in TEST_JOBS processes (pytest-xdist): most of them wait on servers and bot
# processes, so two keep two cores busy. TEST_JOBS=0: one process.
TEST_JOBS ?= 2

test: $(PROTO_OUT)
	$(BIN)/python -m pytest -q -m "not slow" -n $(TEST_JOBS) $(PYTEST_ARGS)

test-all: $(PROTO_OUT)
	$(BIN)/python -m pytest -q -n $(TEST_JOBS) $(PYTEST_ARGS)

check: $(PROTO_OUT)
	$(BIN)/ruff check engine arena sdk bots tests
	$(BIN)/ruff format --check engine arena sdk bots tests
	$(BIN)/mypy engine arena sdk bots

bench: $(PROTO_OUT)
	$(BIN)/arena bench

tournament: $(PROTO_OUT)
	$(BIN)/arena tournament --config tournaments/default.toml

soak: $(PROTO_OUT)
	$(BIN)/python -m arena.soak

fuzz: $(PROTO_OUT)
	$(BIN)/python -m pytest -q -m slow tests/fuzz $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info arena/v1/*_pb2*.py arena/v1/*_pb2*.pyi

# (a prerequisite that is never up to date: the stamp above is made again)
FORCE:
