/* parser.y: the wengert grammar, for the Lemon parser generator.
 * Tokens come from grammar/lexer.re through parse.c, which has already
 * dropped the newlines that do not end a statement (inside ( ) and [ ],
 * after a binary operator or comma, before else/elif). Nodes are allocated
 * in the chunk's arena, so no %destructor is needed: a failed parse frees
 * them all with the chunk. */

%name parse_lemon
%token_prefix T_
%token_type { Token }
%extra_argument { ParseState *ps }
%start_symbol program

%include {
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "parse.h"

typedef struct { Node **items; int n; } NodeList;

static NodeList list_add(ParseState *ps, NodeList l, Node *item)
{
    if (item) {
        l.items = ast_list_push(ps->chunk, l.items, l.n, item);
        l.n++;
    }
    return l;
}

static Node *block_of(ParseState *ps, NodeList l, Token at)
{
    Node *b = parse_syn_node(ps, N_BLOCK, at);
    b->list = l.items;
    b->n = l.n;
    return b;
}

static Node *binop(ParseState *ps, BinOp op, Node *a, Node *b, Token at)
{
    Node *n = parse_syn_node(ps, N_BINOP, at);
    n->op = (uint8_t)op;
    n->a = a;
    n->b = b;
    return n;
}

static Node *unop(ParseState *ps, NodeKind k, Node *a, Token at)
{
    Node *n = parse_syn_node(ps, k, at);
    n->a = a;
    return n;
}

static Node *fn_literal(ParseState *ps, Token at, const char *name, NodeList params, Node *body, int is_expr)
{
    Node *n = parse_syn_node(ps, N_FN, at);
    FnInfo *f = ast_alloc(ps->chunk, sizeof(FnInfo));
    f->name = name;
    f->nparams = params.n;
    f->body = body;
    f->is_expr = is_expr;
    f->chunk = ps->chunk;
    n->fn = f;
    n->list = params.items;   /* N_NAME nodes, resolved into slots later */
    n->n = params.n;
    return n;
}

/* An assignment target must be a place: a name or an element. */
static Node *assignment(ParseState *ps, NodeKind k, BinOp op, Node *target, Node *value, Token at)
{
    if (target->kind != N_NAME && target->kind != N_INDEX) {
        Token t = at;
        t.line = target->line;
        t.col = target->col;
        parse_syn_error(ps, t, "cannot assign to this expression (only to a variable or an element a[i] or a[i, j])");
    }
    Node *n = parse_syn_node(ps, k, at);
    n->op = (uint8_t)op;
    n->a = target;
    n->b = value;
    return n;
}
}

%syntax_error {
    if (yymajor == 0) {
        ps->incomplete = 1;
        parse_syn_error(ps, TOKEN, "unexpected end of input");
    } else {
        char msg[128];
        snprintf(msg, sizeof msg, "unexpected '%.*s'",
                 TOKEN.len > 40 ? 40 : TOKEN.len, TOKEN.p);
        if (yymajor == T_SEP) snprintf(msg, sizeof msg, "unexpected end of statement");
        parse_syn_error(ps, TOKEN, msg);
    }
}

%stack_overflow {
    Token t = {0};
    t.line = ps->at_line;
    t.col = ps->at_col;
    parse_syn_error(ps, t, "expression nested too deeply");
}
%stack_size 10000

/* Precedence, loosest first. ARROW is loosest so `fn(x) => x + 1` takes
 * the whole `x + 1` as its body. */
%right ARROW.
%left OR.
%left AND.
%right NOT.
%nonassoc LT LE GT GE EQ NE.
%left PLUS MINUS.
%left STAR SLASH PERCENT MATMUL.
%right UMINUS.
%right CARET.
%left LPAREN LBRACKET.

%token BADCHAR.

%type stmts { NodeList }
%type stmt_opt { Node * }
%type stmt { Node * }
%type loop { Node * }
%type block { Node * }
%type else_part { Node * }
%type expr { Node * }
%type primary { Node * }
%type args { NodeList }
%type arglist { NodeList }
%type params { NodeList }
%type paramlist { NodeList }
%type opt_expr { Node * }

/* ---------------------------------------------------------------- program */
program ::= stmts(L). { Token t = {0}; t.line = 1; t.col = 1; ps->root = block_of(ps, L, t); }

stmts(A) ::= stmt_opt(S).              { NodeList l = {0}; A = list_add(ps, l, S); }
stmts(A) ::= stmts(L) SEP stmt_opt(S).  { A = list_add(ps, L, S); }

stmt_opt(A) ::= .        { A = NULL; }
stmt_opt(A) ::= stmt(S). { A = S; }

block(A) ::= LBRACE(T) stmts(L) RBRACE. { A = block_of(ps, L, T); }

/* ------------------------------------------------------------- statements */
stmt(A) ::= expr(E). { A = parse_syn_node(ps, N_EXPR, (Token){0}); A->line = E->line; A->col = E->col; A->a = E; }
stmt(A) ::= expr(L) ASSIGN(T) expr(R).  { A = assignment(ps, N_ASSIGN, OP2_ADD, L, R, T); }
stmt(A) ::= expr(L) PLUSEQ(T) expr(R).  { A = assignment(ps, N_COMPOUND, OP2_ADD, L, R, T); }
stmt(A) ::= expr(L) MINUSEQ(T) expr(R). { A = assignment(ps, N_COMPOUND, OP2_SUB, L, R, T); }
stmt(A) ::= expr(L) STAREQ(T) expr(R).  { A = assignment(ps, N_COMPOUND, OP2_MUL, L, R, T); }
stmt(A) ::= expr(L) SLASHEQ(T) expr(R). { A = assignment(ps, N_COMPOUND, OP2_DIV, L, R, T); }

stmt(A) ::= IF(T) expr(C) block(B) else_part(E). { A = parse_syn_node(ps, N_IF, T); A->a = C; A->b = B; A->c = E; }
else_part(A) ::= .                    { A = NULL; }
else_part(A) ::= ELSE block(B).       { A = B; }
else_part(A) ::= ELIF(T) expr(C) block(B) else_part(E). { A = parse_syn_node(ps, N_IF, T); A->a = C; A->b = B; A->c = E; }

stmt(A) ::= loop(L). { A = L; }
/* checkpoint [(k)] LOOP: parse.c has checked that a loop follows */
stmt(A) ::= CHECKPOINT(T) loop(L). { A = parse_syn_node(ps, N_CKPT, T); A->a = L; }
stmt(A) ::= CHECKPOINT(T) LPAREN expr(K) RPAREN loop(L). { A = parse_syn_node(ps, N_CKPT, T); A->a = L; A->b = K; }
loop(A) ::= WHILE(T) expr(C) block(B). { A = parse_syn_node(ps, N_WHILE, T); A->a = C; A->b = B; }
loop(A) ::= FOR(T) NAME(V) IN expr(L) DOTDOT expr(H) block(B).
    { A = parse_syn_node(ps, N_FOR, T); A->c = parse_syn_name(ps, V); A->name = A->c->name; A->a = L; A->b = H; A->list = ast_list_push(ps->chunk, NULL, 0, B); A->n = 1; }
/* for v in a { }: the elements of an array (b is NULL) */
loop(A) ::= FOR(T) NAME(V) IN expr(L) block(B).
    { A = parse_syn_node(ps, N_FOR, T); A->c = parse_syn_name(ps, V); A->name = A->c->name; A->a = L; A->b = NULL; A->list = ast_list_push(ps->chunk, NULL, 0, B); A->n = 1; }
stmt(A) ::= BREAK(T).        { A = parse_syn_node(ps, N_BREAK, T); }
stmt(A) ::= CONTINUE(T).     { A = parse_syn_node(ps, N_CONTINUE, T); }
stmt(A) ::= RETURN(T).       { A = parse_syn_node(ps, N_RETURN, T); }
stmt(A) ::= RETURN(T) expr(E). { A = parse_syn_node(ps, N_RETURN, T); A->a = E; }
stmt(A) ::= NOGRAD(T) block(B). { A = parse_syn_node(ps, N_NOGRAD, T); A->a = B; }
stmt(A) ::= COMMAND(T).      { A = parse_syn_node(ps, N_COMMAND, T); A->text = ast_strdup(ps->chunk, T.p, (size_t)T.len); A->textlen = T.len; }
stmt(A) ::= FN(T) NAME(N) LPAREN params(P) RPAREN block(B).
    { Node *target = parse_syn_name(ps, N);
      Node *f = fn_literal(ps, T, target->name, P, B, 0);
      A = parse_syn_node(ps, N_ASSIGN, T); A->a = target; A->b = f; }

/* ------------------------------------------------------------ expressions */
expr(A) ::= primary(P).                    { A = P; }
expr(A) ::= expr(L) OR(T) expr(R).         { A = binop(ps, 0, L, R, T); A->kind = N_OR; }
expr(A) ::= expr(L) AND(T) expr(R).        { A = binop(ps, 0, L, R, T); A->kind = N_AND; }
expr(A) ::= NOT(T) expr(E).                { A = unop(ps, N_NOT, E, T); }
expr(A) ::= expr(L) LT(T) expr(R).         { A = binop(ps, OP2_LT, L, R, T); }
expr(A) ::= expr(L) LE(T) expr(R).         { A = binop(ps, OP2_LE, L, R, T); }
expr(A) ::= expr(L) GT(T) expr(R).         { A = binop(ps, OP2_GT, L, R, T); }
expr(A) ::= expr(L) GE(T) expr(R).         { A = binop(ps, OP2_GE, L, R, T); }
expr(A) ::= expr(L) EQ(T) expr(R).         { A = binop(ps, OP2_EQ, L, R, T); }
expr(A) ::= expr(L) NE(T) expr(R).         { A = binop(ps, OP2_NE, L, R, T); }
expr(A) ::= expr(L) PLUS(T) expr(R).       { A = binop(ps, OP2_ADD, L, R, T); }
expr(A) ::= expr(L) MINUS(T) expr(R).      { A = binop(ps, OP2_SUB, L, R, T); }
expr(A) ::= expr(L) STAR(T) expr(R).       { A = binop(ps, OP2_MUL, L, R, T); }
expr(A) ::= expr(L) SLASH(T) expr(R).      { A = binop(ps, OP2_DIV, L, R, T); }
expr(A) ::= expr(L) PERCENT(T) expr(R).    { A = binop(ps, OP2_MOD, L, R, T); }
expr(A) ::= expr(L) CARET(T) expr(R).      { A = binop(ps, OP2_POW, L, R, T); }
/* a @ b: the matrix product (a version x@k is the token AT: lexer.re) */
expr(A) ::= expr(L) MATMUL(T) expr(R).     { A = binop(ps, 0, L, R, T); A->kind = N_MATMUL; }
expr(A) ::= MINUS(T) expr(E). [UMINUS]     { A = unop(ps, N_NEG, E, T); }

primary(A) ::= NUMBER(T).   { A = parse_syn_num(ps, T); }
primary(A) ::= STRING(T).   { A = parse_syn_str(ps, T); }
primary(A) ::= TRUE(T).     { A = parse_syn_node(ps, N_TRUE, T); }
primary(A) ::= FALSE(T).    { A = parse_syn_node(ps, N_FALSE, T); }
primary(A) ::= NIL(T).      { A = parse_syn_node(ps, N_NIL, T); }
primary(A) ::= NAME(T).     { A = parse_syn_name(ps, T); }
primary(A) ::= NAME(T) AT NUMBER(K).
    { A = parse_syn_name(ps, T); A->kind = N_VERSION; Node *k = parse_syn_num(ps, K); A->num = k->num;
      if (!(k->num >= 1) || k->num != floor(k->num)) parse_syn_error(ps, K, "a version x@k needs a whole number k >= 1"); }
primary(A) ::= LPAREN expr(E) RPAREN.      { A = E; }
primary(A) ::= LBRACKET(T) args(L) RBRACKET. { A = parse_syn_node(ps, N_ARRAY, T); A->list = L.items; A->n = L.n; }
primary(A) ::= primary(F) LPAREN(T) args(L) RPAREN.
    { A = parse_syn_node(ps, N_CALL, T); A->a = F; A->list = L.items; A->n = L.n; }
primary(A) ::= primary(E) LBRACKET(T) expr(I) RBRACKET. { A = parse_syn_node(ps, N_INDEX, T); A->a = E; A->b = I; }
/* a[i, j]: an element of a matrix (c is the column) */
primary(A) ::= primary(E) LBRACKET(T) expr(I) COMMA expr(J) RBRACKET. { A = parse_syn_node(ps, N_INDEX, T); A->a = E; A->b = I; A->c = J; }
primary(A) ::= primary(E) LBRACKET(T) opt_expr(I) COLON opt_expr(J) RBRACKET.
    { A = parse_syn_node(ps, N_SLICE, T); A->a = E; A->b = I; A->c = J; }
expr(A) ::= FN(T) LPAREN params(P) RPAREN ARROW expr(E). [ARROW] { A = fn_literal(ps, T, NULL, P, E, 1); }
primary(A) ::= FN(T) LPAREN params(P) RPAREN block(B).      { A = fn_literal(ps, T, NULL, P, B, 0); }

opt_expr(A) ::= .        { A = NULL; }
opt_expr(A) ::= expr(E). { A = E; }

args(A) ::= .                    { NodeList l = {0}; A = l; }
args(A) ::= arglist(L).          { A = L; }
arglist(A) ::= expr(E).          { NodeList l = {0}; A = list_add(ps, l, E); }
arglist(A) ::= arglist(L) COMMA expr(E). { A = list_add(ps, L, E); }

params(A) ::= .                  { NodeList l = {0}; A = l; }
params(A) ::= paramlist(L).      { A = L; }
paramlist(A) ::= NAME(T).        { NodeList l = {0}; A = list_add(ps, l, parse_syn_name(ps, T)); }
paramlist(A) ::= paramlist(L) COMMA NAME(T). { A = list_add(ps, L, parse_syn_name(ps, T)); }
