# wengert: build, test, bench.  `make` builds ./wengert; `make run` and
# `make test` first install missing Debian build dependencies (as root).

PREFIX  ?= /usr/local
CC      ?= cc
CFLAGS  ?= -O2
CFLAGS  += -std=c11 -Wall -Wextra -D_GNU_SOURCE -Isrc -Ibuild -DWG_PREFIX='"$(PREFIX)"'
LDLIBS  += -ledit -lm -lpthread
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

SRCS    := $(wildcard src/*.c)
OBJS    := $(patsubst src/%.c,$(BUILD)/%.o,$(SRCS)) $(BUILD)/lexer.o $(BUILD)/parser.o
LIBOBJS := $(filter-out $(BUILD)/main.o,$(OBJS))
UNIT    := $(patsubst tests/unit/%.c,$(BUILD)/unit/%,$(wildcard tests/unit/test_*.c))
FULL    := $(patsubst tests/unit/%.c,$(BUILD)/unit/%,$(wildcard tests/unit/full_*.c))
UNITSUP := $(filter-out tests/unit/test_%.c tests/unit/full_%.c,$(wildcard tests/unit/*.c))

.DELETE_ON_ERROR:
.PHONY: all deps run test test-full valgrind bench clean install

all: $(BIN)

$(BIN): $(OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Generated front end: lemon writes parser.c/parser.h, re2c writes lexer.c.
$(BUILD)/gen/parser.c $(BUILD)/gen/parser.h: grammar/parser.y
	@mkdir -p $(BUILD)/gen
	cp grammar/parser.y $(BUILD)/gen/parser.y
	cd $(BUILD)/gen && lemon -q parser.y

$(BUILD)/gen/lexer.c: grammar/lexer.re $(BUILD)/gen/parser.h
	@mkdir -p $(BUILD)/gen
	re2c -W --no-generation-date -o $@ $<

$(BUILD)/parser.o: $(BUILD)/gen/parser.c src/*.h
	$(CC) $(CFLAGS) -I$(BUILD)/gen -Wno-unused-parameter -Wno-unused-variable -c -o $@ $<

$(BUILD)/lexer.o: $(BUILD)/gen/lexer.c src/*.h
	$(CC) $(CFLAGS) -I$(BUILD)/gen -c -o $@ $<

$(BUILD)/%.o: src/%.c src/*.h src/*.def $(BUILD)/gen/parser.h
	@mkdir -p $(BUILD)
	$(CC) $(CFLAGS) -I$(BUILD)/gen -c -o $@ $<

$(BUILD)/unit/%: tests/unit/%.c $(UNITSUP) $(LIBOBJS)
	@mkdir -p $(BUILD)/unit
	$(CC) $(CFLAGS) -I$(BUILD)/gen $(LDFLAGS) -o $@ $< $(UNITSUP) $(LIBOBJS) $(LDLIBS) -lgmp

deps:
	@sh tests/deps.sh

run: deps $(BIN)
	./$(BIN)

test: deps
	@$(MAKE) --no-print-directory $(BIN) $(UNIT)
	@bash tests/run.sh $(BIN) $(BUILD)

test-full: deps
	@$(MAKE) --no-print-directory $(BIN) $(UNIT) $(FULL)
	@bash tests/run.sh $(BIN) $(BUILD) full
	@$(MAKE) --no-print-directory valgrind SAN=

# Examples and a sample of the golden tests under valgrind (a plain build).
valgrind: deps
	@$(MAKE) --no-print-directory wengert SAN=
	@bash tests/valgrind.sh wengert

bench: $(BIN)
	/usr/bin/python3 bench/run.py
	@mkdir -p build/bench
	$(CC) -O2 -Isrc -o build/bench/posit_bench bench/posit_bench.c src/posit.c -lm
	./build/bench/posit_bench

clean:
	rm -rf build wengert

install: wengert
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/wengert/stdlib
	install -m 755 wengert $(DESTDIR)$(PREFIX)/bin/wengert
	install -m 644 stdlib/*.wg $(DESTDIR)$(PREFIX)/share/wengert/stdlib/
