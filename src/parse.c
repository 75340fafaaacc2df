/* parse.c: feeds the re2c lexer's tokens to the Lemon parser.
 * This is where newlines get their meaning (SPEC "Syntax"): a newline ends a
 * statement unless it sits inside ( ) or [ ] (but not inside a { } block
 * nested in them), or follows a binary operator or a comma; and a newline
 * between `}` and `else`/`elif` is dropped. A `:` at the start of a
 * top-level statement makes the rest of the line a command. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "parse.h"
#include "resolve.h"
#include "parser.h"
#include "lexer_codes.h"
#include "error.h"
#include "state.h"

#define MAX_NEST 256

typedef struct {
    Lexer lx;
    ParseState *ps;
    void *parser;
    char stack[MAX_NEST];   /* open brackets: ( [ { */
    Token opened[MAX_NEST]; /* where each was opened */
    int depth;
    int prev;               /* last token code fed to the parser, 0 at start */
    int cond, cond_depth;   /* inside the condition of this if/while/elif */
    int last_line;          /* line of the last token fed */
    int ckpt, ckpt_depth;   /* after `checkpoint` (1), inside its (k) (2), after the (k) (3) */
    Token ckpt_at;
    int in_for, for_depth;  /* inside a for header (between `for` and its `{`) */
    Token prev_tok;         /* the last token fed (for hints on Python/Julia habits) */
} Feeder;

Node *parse_syn_node(ParseState *ps, NodeKind k, Token at)
{
    return ast_node(ps->chunk, k, at.line, at.col);
}

Node *parse_syn_num(ParseState *ps, Token t)
{
    Node *n = parse_syn_node(ps, N_NUM, t);
    n->text = ast_strdup(ps->chunk, t.p, (size_t)t.len);
    n->textlen = t.len;
    n->num = strtod(n->text, NULL);
    return n;
}

Node *parse_syn_name(ParseState *ps, Token t)
{
    Node *n = parse_syn_node(ps, N_NAME, t);
    n->name = ast_strdup(ps->chunk, t.p, (size_t)t.len);
    return n;
}

static int unescape(char c)
{
    switch (c) {
    case 'n': return '\n';
    case 't': return '\t';
    case 'r': return '\r';
    case '0': return '\0';
    case '\\': return '\\';
    case '"': return '"';
    default: return -1;
    }
}

Node *parse_syn_str(ParseState *ps, Token t)
{
    Node *n = parse_syn_node(ps, N_STR, t);
    char *out = ast_alloc(ps->chunk, (size_t)t.len);
    int len = 0;
    for (int i = 1; i < t.len - 1; i++) {
        char c = t.p[i];
        if (c == '\\') {
            int e = unescape(t.p[++i]);
            if (e < 0) {
                Token at = t;
                at.col += i - 1;
                parse_syn_error(ps, at, "unknown escape in string (use \\n \\t \\r \\0 \\\\ \\\")");
                e = '?';
            }
            c = (char)e;
        }
        out[len++] = c;
    }
    n->text = out;
    n->textlen = len;
    return n;
}

void parse_syn_error(ParseState *ps, Token t, const char *msg)
{
    if (ps->error) return;   /* the first error is the one worth reading */
    ps->error = 1;
    ps->err_line = t.line;
    ps->err_col = t.col;
    snprintf(ps->err_msg, sizeof ps->err_msg, "%s", msg);
}

/* After these tokens a newline cannot end the statement. */
static int continues_line(int tok)
{
    switch (tok) {
    case T_PLUS: case T_MINUS: case T_STAR: case T_SLASH: case T_PERCENT: case T_MATMUL:
    case T_CARET: case T_LT: case T_LE: case T_GT: case T_GE: case T_EQ:
    case T_NE: case T_AND: case T_OR: case T_NOT: case T_COMMA:
    case T_ASSIGN: case T_PLUSEQ: case T_MINUSEQ: case T_STAREQ:
    case T_SLASHEQ: case T_DOTDOT: case T_ARROW: case T_IN:
        return 1;
    default:
        return 0;
    }
}

/* `checkpoint` and its optional (k) must be followed by a loop: said
 * here, at the keyword, rather than as an unexpected token. */
static int check_checkpoint(Feeder *f, int code, Token t)
{
    if (code == T_CHECKPOINT) {
        f->ckpt = 1;
        f->ckpt_at = t;
        return 0;
    }
    if (f->ckpt == 1 && code == T_LPAREN) {
        f->ckpt = 2;
        f->ckpt_depth = f->depth;
        return 0;
    }
    if (f->ckpt == 2) {
        if (code == T_RPAREN && f->depth == f->ckpt_depth + 1) f->ckpt = 3;
        return 0;
    }
    if (f->ckpt == 0) return 0;
    f->ckpt = 0;
    if (code == T_FOR || code == T_WHILE) return 0;
    char msg[160];
    if (code == 0 || code == T_SEP || code == T_RBRACE)
        snprintf(msg, sizeof msg, "'checkpoint' must be followed by a 'for' or 'while' loop");
    else
        snprintf(msg, sizeof msg, "'checkpoint' must be followed by a 'for' or 'while' loop, not '%.*s'",
                 t.len > 40 ? 40 : t.len, t.p);
    parse_syn_error(f->ps, f->ckpt_at, msg);
    return 1;
}

static void feed(Feeder *f, int code, Token t)
{
    if (check_checkpoint(f, code, t)) return;
    f->ps->at_line = t.line;
    f->ps->at_col = t.col;
    parse_lemon(f->parser, code, t, f->ps);
    if (f->ps->error) return;       /* prev stays the token before the error (hints read it) */
    f->prev = code;
    f->prev_tok = t;
    if (code && code != T_SEP) f->last_line = t.line;
}

static void track_brackets(Feeder *f, int code, Token t)
{
    char open = 0;
    if (code == T_IF || code == T_WHILE || code == T_ELIF) {
        f->cond = code;
        f->cond_depth = f->depth;
    } else if (code == T_LBRACE && f->cond && f->depth == f->cond_depth) {
        f->cond = 0;
    }
    if (code == T_FOR) {
        f->in_for = 1;
        f->for_depth = f->depth;
    } else if (code == T_LBRACE && f->in_for && f->depth == f->for_depth) {
        f->in_for = 0;
    }
    if (code == T_LPAREN) open = '(';
    else if (code == T_LBRACKET) open = '[';
    else if (code == T_LBRACE) open = '{';
    if (open && f->depth < MAX_NEST) {
        f->opened[f->depth] = t;
        f->stack[f->depth++] = open;
    }
    if ((code == T_RPAREN || code == T_RBRACKET || code == T_RBRACE) && f->depth > 0)
        f->depth--;
}

static int inside_parens(const Feeder *f)
{
    return f->depth > 0 && f->stack[f->depth - 1] != '{';
}

/* Syntax errors that point at the fix: `=` in a condition, and a bracket
 * left open (reported where it was opened; the REPL still sees the
 * incomplete input and asks for more). */
static int ends_line(const char *p, const char *lim)
{
    while (p < lim && (*p == ' ' || *p == '\t' || *p == '\r')) p++;
    return p >= lim || *p == '\n' || *p == '#';
}

static int prev_is(const Feeder *f, const char *word)
{
    return f->prev == T_NAME && f->prev_tok.len == (int)strlen(word)
        && memcmp(f->prev_tok.p, word, strlen(word)) == 0;
}

/* Habits from Python and Julia, each answered with the wengert form. */
static int explain_habit(Feeder *f, int code, Token t)
{
    ParseState *ps = f->ps;
    size_t len = strlen(ps->err_msg);
    const char *note = NULL;
    if (code == T_STAR && f->prev == T_STAR)
        note = "the power operator is '^': write x^2, not x ** 2";
    else if ((prev_is(f, "def") || prev_is(f, "function")) && code == T_NAME)
        note = "a function is written fn f(x) { return x * x } (or f = fn(x) => x * x)";
    else if (prev_is(f, "lambda"))
        note = "an anonymous function is written fn(x) => x * x";
    else if (code == T_COLON && (f->in_for || f->cond) && ends_line(t.p + 1, f->lx.lim))
        note = f->in_for ? "a block is written in { }: for v in a { print(v) }"
                         : "a block is written in { }: if x > 1 { print(x) }";
    else if (code == T_COLON && f->in_for && f->depth == f->for_depth)
        note = "a range is written with '..' and is half-open: for i in 0..3 { } gives 0, 1, 2";
    if (!note) return 0;
    snprintf(ps->err_msg + len, sizeof ps->err_msg - len, "\nnote: %s", note);
    return 1;
}

static void explain(Feeder *f, int code, Token t)
{
    ParseState *ps = f->ps;
    size_t len = strlen(ps->err_msg);
    if (code == T_ASSIGN && f->cond && f->depth == f->cond_depth) {
        snprintf(ps->err_msg + len, sizeof ps->err_msg - len,
                 " in %s condition\nnote: '=' assigns; to compare, write '=='",
                 f->cond == T_IF ? "an if" : f->cond == T_WHILE ? "a while" : "an elif");
        return;
    }
    if (explain_habit(f, code, t)) return;
    if (f->depth == 0 || f->depth > MAX_NEST) return;
    char open = f->stack[f->depth - 1];
    Token at = f->opened[f->depth - 1];
    char close = open == '(' ? ')' : open == '[' ? ']' : '}';
    if (code == 0) {
        ps->err_line = at.line;
        ps->err_col = at.col;
        snprintf(ps->err_msg, sizeof ps->err_msg,
                 "'%c' is never closed\nnote: the input ended after line %d without its '%c'",
                 open, f->last_line, close);
    } else if (open != '{' && t.line > at.line) {
        snprintf(ps->err_msg + len, sizeof ps->err_msg - len,
                 "\nnote: the '%c' at line %d, column %d is still open here", open, at.line, at.col);
    }
}

/* Tokens that begin a statement and can never continue an expression. */
static int starts_statement(int code)
{
    switch (code) {
    case T_NAME: case T_NUMBER: case T_STRING: case T_TRUE: case T_FALSE: case T_NIL:
    case T_IF: case T_WHILE: case T_FOR: case T_RETURN: case T_BREAK: case T_CONTINUE:
    case T_NOGRAD: case T_CHECKPOINT: case T_FN: case T_NOT:
        return 1;
    default:
        return 0;
    }
}

/* Commands may start any statement that is not inside ( ) or [ ]. */
static int at_statement_start(const Feeder *f)
{
    return !inside_parens(f) && (f->prev == 0 || f->prev == T_SEP || f->prev == T_LBRACE);
}

/* Whether [from, at) is `help` and blanks: the `#` at `at` is :help's topic. */
static int help_word_here(const char *from, const char *at)
{
    if (at - from < 5 || strncmp(from, "help", 4) != 0) return 0;
    for (const char *q = from + 4; q < at; q++)
        if (*q != ' ' && *q != '\t') return 0;
    return 1;
}

/* `:cmd rest of line` becomes one COMMAND token holding "cmd rest of line". */
static Token take_command(Feeder *f, Token colon)
{
    const char *p = colon.p + 1, *end = NULL;
    while (p < f->lx.lim && *p != '\n') {
        /* a comment after the command: `:tape   # look inside` (but
         * `:help #` asks about the comment sign) */
        if (!end && *p == '#' && (p[-1] == ' ' || p[-1] == '\t') && !help_word_here(colon.p + 1, p)) end = p;
        p++;
    }
    Token t = colon;
    t.p = colon.p + 1;
    t.len = (int)((end ? end : p) - t.p);
    while (t.len > 0 && (t.p[t.len - 1] == ' ' || t.p[t.len - 1] == '\t' || t.p[t.len - 1] == '\r'))
        t.len--;
    f->lx.cur = p;
    return t;
}

static void feed_all(Feeder *f)
{
    Token t, pending = {0};
    int have_newline = 0;
    for (;;) {
        int code = parse_lex_next(&f->lx, &t);
        if (code == LEX_NEWLINE) {
            if (!inside_parens(f) && !continues_line(f->prev) && !have_newline) {
                have_newline = 1;
                pending = t;
            }
            continue;
        }
        if (code == LEX_BAD) {
            char msg[64];
            int n = 1;     /* the whole UTF-8 character */
            while (n < 4 && ((unsigned char)t.p[n] & 0xC0) == 0x80) n++;
            if ((unsigned char)*t.p < 0x80) n = 1;
            snprintf(msg, sizeof msg, "unexpected character '%.*s'", *t.p ? n : 1, *t.p ? t.p : "?");
            parse_syn_error(f->ps, t, msg);
            return;
        }
        if (code == LEX_UNTERMINATED) {
            parse_syn_error(f->ps, t, "unterminated string (strings end on the same line)");
            return;
        }
        if (have_newline) {
            have_newline = 0;
            int joins_if = (code == T_ELSE || code == T_ELIF) && f->prev == T_RBRACE;
            if (!joins_if) feed(f, T_SEP, pending);
            if (f->ps->error) return;
        }
        if (code == 0) {
            feed(f, 0, t);
            if (f->ps->error) explain(f, 0, t);
            return;
        }
        /* `if c { return 1 } return 2`: a statement that follows a `}` on
         * the same line ends the one before, as a newline would (no
         * expression continues with these tokens after a `}`) */
        if (f->prev == T_RBRACE && !inside_parens(f) && starts_statement(code)) {
            feed(f, T_SEP, t);
            if (f->ps->error) return;
        }
        if (code == T_COLON && at_statement_start(f)) {
            t = take_command(f, t);
            code = T_COMMAND;
        }
        feed(f, code, t);
        if (f->ps->error) {
            explain(f, code, t);
            return;
        }
        track_brackets(f, code, t);
    }
}

/* Trees deeper than this (a chain of a million `+` or calls, which Lemon
 * builds without growing its own stack) would overflow the C stack in the
 * recursive walks after parsing. Measured here without recursion. */
#define MAX_TREE_DEPTH 20000

typedef struct { Node *n; int depth; } Pending;

static const Node *too_deep(Node *root)
{
    size_t cap = 256, top = 0;
    Pending *stack = err_malloc(cap * sizeof(Pending));
    const Node *found = NULL;
    stack[top++] = (Pending){ root, 1 };
    while (top && !found) {
        Pending p = stack[--top];
        if (p.depth > MAX_TREE_DEPTH) { found = p.n; break; }
        Node *kids[3] = { p.n->a, p.n->b, p.n->c };
        int nk = 3 + p.n->n;
        if (p.n->kind == N_FN && p.n->fn) nk++;
        if (top + (size_t)nk + 1 > cap) {
            while (top + (size_t)nk + 1 > cap) cap *= 2;
            stack = err_realloc(stack, cap * sizeof(Pending));
        }
        for (int i = 0; i < 3; i++)
            if (kids[i]) stack[top++] = (Pending){ kids[i], p.depth + 1 };
        for (int i = 0; i < p.n->n; i++)
            if (p.n->list[i]) stack[top++] = (Pending){ p.n->list[i], p.depth + 1 };
        if (p.n->kind == N_FN && p.n->fn && p.n->fn->body) stack[top++] = (Pending){ p.n->fn->body, p.depth + 1 };
    }
    free(stack);
    return found;
}

Chunk *parse_chunk(const char *filename, const char *src, size_t len,
                   int quiet, int *incomplete)
{
    Chunk *c = ast_chunk_new(filename, src, len);
    ParseState ps;
    memset(&ps, 0, sizeof ps);
    ps.chunk = c;
    ps.quiet = quiet;
    Feeder f;
    memset(&f, 0, sizeof f);
    f.ps = &ps;
    parse_lex_init(&f.lx, c->source, c->srclen);
    f.parser = parse_lemonAlloc(malloc);
    feed_all(&f);
    parse_lemonFree(f.parser, free);
    if (incomplete) *incomplete = ps.error && ps.incomplete;
    if (ps.error || !ps.root) {
        if (!quiet) err_report(c, ps.err_line, ps.err_col, ps.err_msg[0] ? ps.err_msg : "syntax error");
        ast_chunk_release(c);
        return NULL;
    }
    c->root = ps.root;
    const Node *deep = too_deep(c->root);
    if (deep) {
        ps.err_line = deep->line;
        ps.err_col = deep->col;
        snprintf(ps.err_msg, sizeof ps.err_msg, "expression nested too deeply");
    }
    if (deep || resolve_chunk(c, &ps)) {
        if (!quiet) err_report(c, ps.err_line, ps.err_col, ps.err_msg);
        if (incomplete) *incomplete = 0;
        ast_chunk_release(c);
        return NULL;
    }
    return c;
}
