/* parse.h: from source text to a resolved syntax tree.
 * The re2c lexer (grammar/lexer.re) produces tokens that are slices of the
 * source; parse.c decides which newlines end statements and feeds the Lemon
 * parser (grammar/parser.y); resolve.c then binds every name to a slot. */
#ifndef WG_PARSE_H
#define WG_PARSE_H
#include "ast.h"

typedef struct {
    const char *p;      /* slice of the chunk's source */
    int len;
    int line, col;
} Token;

typedef struct Lexer {
    const char *cur, *lim, *linestart, *tok;
    int line;
} Lexer;

typedef struct {
    Chunk *chunk;
    Node  *root;
    int    error;       /* a syntax error was seen */
    int    incomplete;  /* the input ended inside an unfinished construct */
    int    quiet;       /* do not report (REPL probing for more lines) */
    int    err_line, err_col;
    int    at_line, at_col;   /* the token being fed */
    char   err_msg[256];
} ParseState;

/* Lexer: returns a Lemon token code, 0 at end of input, or -1 for a bad
 * character (t describes it). */
int  parse_lex_next(Lexer *lx, Token *t);
void parse_lex_init(Lexer *lx, const char *src, size_t len);

/* Parse and resolve a whole chunk. On a syntax error reports it (unless
 * quiet) and returns NULL; *incomplete tells whether more input could fix
 * it (the REPL then reads a continuation line). */
Chunk *parse_chunk(const char *filename, const char *src, size_t len,
                   int quiet, int *incomplete);

/* Lemon's generated entry points (its header declares only token codes). */
void *parse_lemonAlloc(void *(*alloc)(size_t));
void  parse_lemon(void *parser, int major, Token minor, ParseState *ps);
void  parse_lemonFree(void *parser, void (*dealloc)(void *));

/* Parser actions call these to build nodes. */
Node *parse_syn_num(ParseState *ps, Token t);
Node *parse_syn_str(ParseState *ps, Token t);
Node *parse_syn_name(ParseState *ps, Token t);
Node *parse_syn_node(ParseState *ps, NodeKind k, Token at);
void  parse_syn_error(ParseState *ps, Token t, const char *msg);

#endif
