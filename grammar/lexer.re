/* lexer.re: wengert's tokens, for re2c. Tokens are slices of the source
 * (nothing to free); the codes are Lemon's (build/gen/parser.h), so there is
 * no second token enum to keep in step. Newlines come back as LEX_NEWLINE:
 * whether one ends a statement is decided in parse.c, which knows the
 * bracket nesting and the previous token. */
#include <stddef.h>
#include "parse.h"
#include "parser.h"
#include "lexer_codes.h"

void parse_lex_init(Lexer *lx, const char *src, size_t len)
{
    lx->cur = src;
    lx->lim = src + len;
    lx->linestart = src;
    lx->line = 1;
    lx->tok = src;
}

/* re2c needs a sentinel: the chunk's source is always NUL-terminated, and a
 * NUL before the end is reported as a bad character. */
int parse_lex_next(Lexer *lx, Token *t)
{
    const char *YYMARKER;
    for (;;) {
        lx->tok = lx->cur;
        t->p = lx->cur;
        t->line = lx->line;
        t->col = (int)(lx->cur - lx->linestart) + 1;
#define TOK(code) do { t->len = (int)(lx->cur - lx->tok); return (code); } while (0)
        /*!re2c
        re2c:define:YYCTYPE = "unsigned char";
        re2c:define:YYCURSOR = "lx->cur";
        re2c:yyfill:enable = 0;
        re2c:flags:utf-8 = 0;

        digits = [0-9]+;
        exp    = [eE] [+-]? digits;
        number = digits ("." digits)? exp? | "." digits exp?;
        ident  = [a-zA-Z_] [a-zA-Z_0-9]*;

        "\x00"  { if (lx->cur - 1 >= lx->lim) { lx->cur--; t->len = 0; return 0; }
                  TOK(LEX_BAD); }
        [ \t\r]+        { continue; }
        "#" [^\n\x00]*  { continue; }
        "\n"    { t->len = 1; lx->line++; lx->linestart = lx->cur; return LEX_NEWLINE; }
        "\\" [ \t\r]* "\n" { lx->line++; lx->linestart = lx->cur; continue; }

        "if"       { TOK(T_IF); }
        "elif"     { TOK(T_ELIF); }
        "else"     { TOK(T_ELSE); }
        "while"    { TOK(T_WHILE); }
        "for"      { TOK(T_FOR); }
        "in"       { TOK(T_IN); }
        "break"    { TOK(T_BREAK); }
        "continue" { TOK(T_CONTINUE); }
        "return"   { TOK(T_RETURN); }
        "fn"       { TOK(T_FN); }
        "and"      { TOK(T_AND); }
        "or"       { TOK(T_OR); }
        "not"      { TOK(T_NOT); }
        "true"     { TOK(T_TRUE); }
        "false"    { TOK(T_FALSE); }
        "nil"      { TOK(T_NIL); }
        "nograd"   { TOK(T_NOGRAD); }
        "checkpoint" { TOK(T_CHECKPOINT); }
        ident      { TOK(T_NAME); }
        number     { TOK(T_NUMBER); }
        ["] ([^"\\\n\x00] | "\\" [^\n\x00])* ["] { TOK(T_STRING); }
        ["] ([^"\\\n\x00] | "\\" [^\n\x00])*     { TOK(LEX_UNTERMINATED); }

        "=>"  { TOK(T_ARROW); }
        "=="  { TOK(T_EQ); }
        "!="  { TOK(T_NE); }
        "<="  { TOK(T_LE); }
        ">="  { TOK(T_GE); }
        "+="  { TOK(T_PLUSEQ); }
        "-="  { TOK(T_MINUSEQ); }
        "*="  { TOK(T_STAREQ); }
        "/="  { TOK(T_SLASHEQ); }
        ".."  { TOK(T_DOTDOT); }
        "<"   { TOK(T_LT); }
        ">"   { TOK(T_GT); }
        "="   { TOK(T_ASSIGN); }
        "+"   { TOK(T_PLUS); }
        "-"   { TOK(T_MINUS); }
        "*"   { TOK(T_STAR); }
        "/"   { TOK(T_SLASH); }
        "%"   { TOK(T_PERCENT); }
        "^"   { TOK(T_CARET); }
        "("   { TOK(T_LPAREN); }
        ")"   { TOK(T_RPAREN); }
        "["   { TOK(T_LBRACKET); }
        "]"   { TOK(T_RBRACKET); }
        "{"   { TOK(T_LBRACE); }
        "}"   { TOK(T_RBRACE); }
        ","   { TOK(T_COMMA); }
        ";"   { TOK(T_SEP); }
        ":"   { TOK(T_COLON); }
        /* x@k, a version, when a digit follows at once; otherwise the
         * matrix product a @ b (SPEC "Arrays and views") */
        "@"   { if (lx->cur < lx->lim && *lx->cur >= '0' && *lx->cur <= '9') TOK(T_AT);
                TOK(T_MATMUL); }
        *     { TOK(LEX_BAD); }
        */
#undef TOK
    }
}
