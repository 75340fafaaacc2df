# wengert: build, test, bench.  `make` builds ./wengert; `make run` and
# `make test` first install missing Debian build dependencies (as root).

PREFIX  ?= /usr/local
CC      ?= cc
CFLAGS  ?= -O2
CFLAGS  += -std=c11 -Wall -Wextra -D_GNU_SOURCE -Isrc -Ibuild -DWG_PREFIX='"$(PREFIX)"'
LDLIBS  += -ledit -ljansson -lm -lpthread
# The interpreter is linked statically when the archives are there (and
# not under SAN=1): with no dynamic loader at start-up, `wengert -e` takes
# 0.6 ms here instead of 1.4 ms (W5 in bench/README.md). The linker warns
# that libedit's ~user completion (getpwent, getpwnam_r ...) needs glibc's
# NSS libraries at run time: only that completion does, so those expected
# warnings are filtered out of the link's output (LINKFILTER); any other
# line of it is shown. STATIC=0 links dynamically.
STATIC      ?= 1
ARCHIVES    := $(wildcard $(patsubst %,/usr/lib/$(shell $(CC) -print-multiarch 2>/dev/null)/lib%.a,c m edit jansson bsd md tinfo))
BINLIBS     := $(if $(and $(filter 1,$(STATIC)),$(if $(SAN),,1),$(word 7,$(ARCHIVES))),-static -ledit -ljansson -ltinfo -lbsd -lmd -lm -lpthread,$(LDLIBS))
BUILD   := build
SAN     ?=

ifeq ($(SAN),1)
  BUILD   := build/san
  CFLAGS  += -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
  LDFLAGS += -fsanitize=address,undefined
  BIN     := $(BUILD)/wengert
else
  BIN     := wengert
endif

SRCS    := $(filter-out src/webmain.c,$(wildcard src/*.c))
OBJS    := $(patsubst src/%.c,$(BUILD)/%.o,$(SRCS)) $(BUILD)/lexer.o $(BUILD)/parser.o
LIBOBJS := $(filter-out $(BUILD)/main.o,$(OBJS))
UNIT    := $(patsubst tests/unit/%.c,$(BUILD)/unit/%,$(wildcard tests/unit/test_*.c))
FULL    := $(patsubst tests/unit/%.c,$(BUILD)/unit/%,$(wildcard tests/unit/full_*.c))
UNITSUP := $(filter-out tests/unit/test_%.c tests/unit/full_%.c,$(wildcard tests/unit/*.c))

.DELETE_ON_ERROR:
.PHONY: all deps run test test-slow test-full valgrind fuzz fuzz-deps fuzz-ci bench bench-gradbench clean install install-man gradbench gradbench-tool jupyter jupyter-deps course course-notebooks web web-deps web-serve test-web libm-same libm-table

all: $(BIN)

LINKFILTER := -e 'in statically linked applications requires at runtime' -e 'libedit\.a([a-z]*\.o): in function'
$(BIN): $(OBJS)
	@mkdir -p $(BUILD)
	$(CC) $(LDFLAGS) -o $@ $^ $(BINLIBS) 2>$(BUILD)/link.log; s=$$?; grep -v $(LINKFILTER) $(BUILD)/link.log >&2; exit $$s

# Generated front end: lemon writes parser.c/parser.h, re2c writes lexer.c.
# One lemon run writes both files (`&:`): with a plain rule, `make -j` would
# run lemon twice at once in the same directory.
$(BUILD)/gen/parser.c $(BUILD)/gen/parser.h &: grammar/parser.y
	@mkdir -p $(BUILD)/gen
	cp grammar/parser.y $(BUILD)/gen/parser.y
	cd $(BUILD)/gen && lemon -q parser.y

$(BUILD)/gen/lexer.c: grammar/lexer.re $(BUILD)/gen/parser.h
	@mkdir -p $(BUILD)/gen
	re2c -W --no-generation-date -o $@ $<

# NDEBUG: without Lemon's tracing (ParseTrace, unused), whose two
# globals would be the only writable ones in the parser (the fuzzer's
# build keeps them and Lemon's asserts).
$(BUILD)/parser.o: $(BUILD)/gen/parser.c src/*.h
	$(CC) $(CFLAGS) -DNDEBUG -I$(BUILD)/gen -Wno-unused-parameter -Wno-unused-variable -c -o $@ $<

$(BUILD)/lexer.o: $(BUILD)/gen/lexer.c src/*.h
	$(CC) $(CFLAGS) -I$(BUILD)/gen -c -o $@ $<

$(BUILD)/%.o: src/%.c src/*.h src/*.def $(BUILD)/gen/parser.h
	@mkdir -p $(BUILD)
	$(CC) $(CFLAGS) -I$(BUILD)/gen -c -o $@ $<

# wmath.c's functions must round alike here and in WebAssembly: no fused
# multiply-add on either side (src/wmath.c says why).
$(BUILD)/wmath.o: CFLAGS += -ffp-contract=off

# The tape and its sweeps stand below the evaluator: their unit test links
# them alone (no evaluator, no libedit), which keeps them that way.
CORE     := state io tape sweep fixtape arith arrayrun dual dualarr num ieee posit value valuegc error ast versions kinks tapegc matrix wmath
COREOBJS := $(patsubst %,$(BUILD)/%.o,$(CORE))
$(BUILD)/unit/test_tape: tests/unit/test_tape.c $(UNITSUP) $(COREOBJS)
	@mkdir -p $(BUILD)/unit
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(UNITSUP) $(COREOBJS) -lm -lgmp

$(BUILD)/unit/%: tests/unit/%.c $(UNITSUP) $(LIBOBJS)
	@mkdir -p $(BUILD)/unit
	$(CC) $(CFLAGS) -I$(BUILD)/gen $(LDFLAGS) -o $@ $< $(UNITSUP) $(LIBOBJS) $(LDLIBS) -lgmp

deps:
	@sh tests/deps.sh

run: deps
	@$(MAKE) --no-print-directory -s $(BIN)
	@./$(BIN)

test: deps
	@$(MAKE) --no-print-directory $(BIN) $(UNIT) $(GBTOOL)
	@bash tests/run.sh $(BIN) $(BUILD)

# The golden scripts with every fast path off (WENGERT_SLOW=1, eval_fast_paths):
# the general path must print what the fast paths print (~40 s).
test-slow: deps
	@$(MAKE) --no-print-directory $(BIN)
	@WENGERT_SLOW=1 WG_ONLY="tests/lang/*.wg examples/*.wg" bash tests/run.sh $(BIN) $(BUILD)

test-full: deps
	@$(MAKE) --no-print-directory $(BIN) $(UNIT) $(FULL) $(GBTOOL)
	@bash tests/run.sh $(BIN) $(BUILD) full
	@$(MAKE) --no-print-directory valgrind SAN=

# Examples and a sample of the golden tests under valgrind (a plain build).
# valgrind cannot follow a static glibc's malloc, so it checks the same
# objects linked dynamically.
valgrind: deps
	@$(MAKE) --no-print-directory build/wengert-dyn SAN=
	@bash tests/valgrind.sh build/wengert-dyn

build/wengert-dyn: $(OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# libFuzzer over the whole interpreter (tests/fuzz/fuzz_wengert.c), built with
# clang under ASan + UBSan. `make fuzz` runs until stopped (FUZZ_ARGS adds
# libFuzzer options, e.g. -max_total_time=600 -jobs=2); `make fuzz-ci` is the
# fixed-seed, fixed-count pass CI runs. Seeds: tests/lang and examples.
FUZZ      := build/fuzz
FUZZ_CC   ?= clang
FUZZ_FLAGS = -g -O1 -std=c11 -D_GNU_SOURCE -Isrc -I$(FUZZ)/gen -fno-omit-frame-pointer \
             -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
             -DFUZZ_STDLIB='"$(CURDIR)/stdlib"' -DWG_PREFIX='"$(PREFIX)"'
FUZZ_SRCS := $(filter-out src/main.c,$(SRCS)) $(FUZZ)/gen/lexer.c $(FUZZ)/gen/parser.c tests/fuzz/fuzz_wengert.c
FUZZ_RUN   = -artifact_prefix=$(FUZZ)/ -max_len=4096 -timeout=20 -rss_limit_mb=3072 -close_fd_mask=3 -dict=tests/fuzz/wengert.dict

$(FUZZ)/gen/parser.c $(FUZZ)/gen/parser.h: grammar/parser.y
	@mkdir -p $(FUZZ)/gen
	cp grammar/parser.y $(FUZZ)/gen/parser.y
	cd $(FUZZ)/gen && lemon -q parser.y

$(FUZZ)/gen/lexer.c: grammar/lexer.re $(FUZZ)/gen/parser.h
	re2c -W --no-generation-date -o $@ $<

$(FUZZ)/fuzz_wengert: $(FUZZ_SRCS) src/*.h src/*.def
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $(FUZZ_SRCS) -ledit -ljansson -lm -lpthread

fuzz-deps:
	@sh tests/deps.sh fuzz

fuzz: fuzz-deps
	@$(MAKE) --no-print-directory $(FUZZ)/fuzz_wengert
	@mkdir -p $(FUZZ)/corpus
	$(FUZZ)/fuzz_wengert $(FUZZ_RUN) $(FUZZ_ARGS) $(FUZZ)/corpus tests/fuzz/regress tests/lang examples

fuzz-ci: fuzz-deps
	@$(MAKE) --no-print-directory $(FUZZ)/fuzz_wengert
	@rm -rf $(FUZZ)/ci && mkdir -p $(FUZZ)/ci
	$(FUZZ)/fuzz_wengert $(FUZZ_RUN) -seed=1 -runs=$${FUZZ_RUNS:-30000} $(FUZZ)/ci tests/fuzz/regress tests/lang examples

bench: $(BIN)
	/usr/bin/python3 bench/run.py
	@mkdir -p build/bench
	$(CC) -O2 -Isrc -o build/bench/posit_bench bench/posit_bench.c src/posit.c -lm
	./build/bench/posit_bench
	@$(MAKE) --no-print-directory bench-gradbench

# GradBench (bench/gradbench/README.md): the tool's driver links the
# interpreter; `make gradbench` replays the recorded sessions into it.
GBTOOL     := $(BUILD)/gradbench/wengert-gradbench
GBSESSIONS ?= $(firstword $(wildcard ../shared/gradbench/sessions /work/shared/gradbench/sessions))

$(GBTOOL): bench/gradbench/driver.c $(LIBOBJS)
	@mkdir -p $(BUILD)/gradbench
	$(CC) $(CFLAGS) -I$(BUILD)/gen $(LDFLAGS) -o $@ $< $(LIBOBJS) $(LDLIBS) -ljansson

gradbench-tool: $(GBTOOL)

gradbench: deps
	@$(MAKE) --no-print-directory $(GBTOOL)
	/usr/bin/python3 bench/gradbench/replay.py --log $(BUILD)/gradbench/replay.log bench/gradbench/tool $(GBSESSIONS)
	/usr/bin/python3 bench/gradbench/agree.py $(GBTOOL) bench/gradbench $(GBSESSIONS)

# wengert beside GradBench's own tools (docs/bench.md, "GradBench"): needs a
# GradBench build in GB_HOME, made outside this tree; skipped without one.
GB_HOME ?= $(firstword $(wildcard /work/gb) $(or $(TMPDIR),/tmp)/gb)
bench-gradbench: $(GBTOOL)
	GB_HOME=$(GB_HOME) bash bench/gradbench/peers.sh

# The Jupyter kernel (jupyter/README.md): Debian's ipykernel and
# jupyter-client when missing, then the kernel spec `wengert` for this user,
# running this tree's ./wengert.
jupyter: $(BIN) jupyter-deps
	/usr/bin/python3 jupyter/install.py $(BIN)

jupyter-deps:
	@for p in python3-ipykernel python3-jupyter-client python3-nbclient python3-nbformat; do \
	    dpkg -s $$p >/dev/null 2>&1 || need="$$need $$p"; done; \
	if [ -n "$$need" ]; then \
	    SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	    echo "installing:$$need"; \
	    $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$need || exit 1; fi

# The course (examples/course/, docs/course.md): every lesson as shipped (each
# check says "not yet answered") and every solution (each check passes), as
# scripts and as notebooks run through the kernel; the notebooks must be what
# the scripts make. `make course-notebooks` writes them anew. `make test` runs
# the same check (tests/shell/course.sh).
course: $(BIN) jupyter-deps
	/usr/bin/python3 jupyter/course.py check $(BIN)

course-notebooks: $(BIN) jupyter-deps
	/usr/bin/python3 jupyter/course.py build $(BIN)

# wengert in the browser (web/README.md): the interpreter built to
# WebAssembly by Debian's emscripten (src/webmain.c in place of main.c, repl.c
# and kernel.c: the page is the editor), and the page's sources in web/
# bundled with their npm packages (web/package.json, pinned by its lock) into
# a static site in build/web/. -pthread only makes the memory shared, so that
# the page's Stop can raise the interrupt flag while a run holds the worker;
# no thread is made. Emscripten's tools run on node and look for acorn where
# Debian puts node modules (NODE_PATH), which a newer node does not search.
WEBOBJ   := build/wasm
EMCC     ?= emcc
EMFLAGS  := -O2 -std=c11 -Wall -Wextra -D_GNU_SOURCE -Isrc -I$(BUILD)/gen -pthread -DWG_PREFIX='"/wengert"'
EMLINK   := -O2 -pthread -sALLOW_MEMORY_GROWTH=1 -sINITIAL_MEMORY=64MB -sMAXIMUM_MEMORY=2GB \
            -sTOTAL_STACK=32MB -sENVIRONMENT=worker -sEXIT_RUNTIME=0 -Wno-pthreads-mem-growth \
            -sEXPORTED_FUNCTIONS=_main,_web_open,_web_run,_web_check,_web_complete,_web_reset,_web_quitting,_web_interrupt_flag \
            -sEXPORTED_RUNTIME_METHODS=ccall,UTF8ToString,FS \
            --preload-file stdlib@/wengert/stdlib --preload-file examples@/wengert/examples \
            --exclude-file '*.ipynb' --exclude-file '*.out'
WEBSRCS  := $(filter-out src/main.c src/repl.c src/kernel.c,$(wildcard src/*.c))
WEBOBJS  := $(patsubst src/%.c,$(WEBOBJ)/%.o,$(WEBSRCS)) $(WEBOBJ)/lexer.o $(WEBOBJ)/parser.o
export NODE_PATH := $(NODE_PATH)$(if $(NODE_PATH),:)/usr/share/nodejs

$(WEBOBJ)/%.o: src/%.c src/*.h src/*.def $(BUILD)/gen/parser.h
	@mkdir -p $(WEBOBJ)
	$(EMCC) $(EMFLAGS) -c -o $@ $<

$(WEBOBJ)/wmath.o: EMFLAGS += -ffp-contract=off

$(WEBOBJ)/parser.o: $(BUILD)/gen/parser.c src/*.h
	@mkdir -p $(WEBOBJ)
	$(EMCC) $(EMFLAGS) -DNDEBUG -Wno-unused-parameter -Wno-unused-variable -c -o $@ $<

$(WEBOBJ)/lexer.o: $(BUILD)/gen/lexer.c src/*.h
	@mkdir -p $(WEBOBJ)
	$(EMCC) $(EMFLAGS) -c -o $@ $<

$(WEBOBJ)/wengert.js: $(WEBOBJS) $(wildcard stdlib/*.wg examples/*.wg examples/course/*.wg)
	$(EMCC) $(EMLINK) -o $@ $(WEBOBJS)

web/node_modules/.package-lock.json: web/package.json web/package-lock.json
	cd web && npm ci --no-audit --no-fund

web-deps:
	@sh web/deps.sh

web: web-deps
	@$(MAKE) --no-print-directory $(WEBOBJ)/wengert.js web/node_modules/.package-lock.json
	@sh web/build.sh $(WEBOBJ) build/web

web-serve: web
	/usr/bin/python3 web/serve.py build/web

# src/wmath.c's functions, built here (the object ./wengert links) and to
# WebAssembly as the page's are, must give the same bits on millions of
# inputs (tests/libm/README.md); `make libm-table` compares every libm
# function wengert calls the same way, for the table in that README.
LIBM   := build/libm
LIBM_N ?= 2000000
$(LIBM)/libm_cmp: tests/libm/libm_cmp.c src/wmath.h $(BUILD)/wmath.o
	@mkdir -p $(LIBM)
	$(CC) -O2 -std=c11 -Wall -Wextra -ffp-contract=off -DWITH_WMATH -Isrc -o $@ $< $(BUILD)/wmath.o -lm

$(LIBM)/libm_cmp.js: tests/libm/libm_cmp.c src/wmath.h src/wmath.c
	@mkdir -p $(LIBM)
	$(EMCC) -O2 -std=c11 -Wall -Wextra -ffp-contract=off -DWITH_WMATH -Isrc -sNODERAWFS=1 -sENVIRONMENT=node -sSINGLE_FILE=1 -o $@ $< src/wmath.c

libm-same: $(LIBM)/libm_cmp $(LIBM)/libm_cmp.js
	@sh tests/libm/same.sh $(LIBM) $(LIBM_N)

libm-table: $(LIBM)/libm_cmp $(LIBM)/libm_cmp.js
	-@sh tests/libm/same.sh $(LIBM) $(LIBM_N) all

test-web: web $(BIN)
	@$(MAKE) --no-print-directory libm-same
	cd web && node test.mjs ../build/web ../$(BIN) ../build/web-test

clean:
	rm -rf build wengert

install: wengert install-man
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/wengert/stdlib
	install -m 755 wengert $(DESTDIR)$(PREFIX)/bin/wengert
	install -m 644 stdlib/*.wg $(DESTDIR)$(PREFIX)/share/wengert/stdlib/

install-man:
	install -d $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 644 docs/wengert.1 $(DESTDIR)$(PREFIX)/share/man/man1/wengert.1
