/* ast.h: the syntax tree the parser builds and the evaluator walks.
 * Nodes live in a per-chunk arena (one chunk per script, REPL input or
 * :load); closures keep their chunk alive by reference count. */
#ifndef WG_AST_H
#define WG_AST_H
#include <stddef.h>
#include <stdint.h>

typedef enum {
    /* expressions */
    N_NUM, N_STR, N_TRUE, N_FALSE, N_NIL, N_ARRAY, N_NAME, N_VERSION,
    N_BINOP, N_NEG, N_NOT, N_AND, N_OR, N_CALL, N_INDEX, N_SLICE, N_FN,
    /* statements */
    N_EXPR, N_ASSIGN, N_COMPOUND, N_IF, N_WHILE, N_FOR, N_BREAK, N_CONTINUE,
    N_RETURN, N_BLOCK, N_NOGRAD, N_COMMAND,
    N_CKPT,     /* checkpoint [(k)] LOOP: a is the loop, b the k expression or NULL */
    N_MATMUL    /* a @ b, an expression (matrix.c) */
} NodeKind;

/* Binary operators; the comparison ones never reach the tape. */
typedef enum {
    OP2_ADD, OP2_SUB, OP2_MUL, OP2_DIV, OP2_MOD, OP2_POW,
    OP2_LT, OP2_LE, OP2_GT, OP2_GE, OP2_EQ, OP2_NE
} BinOp;

/* Where a resolved name lives. */
typedef enum { REF_UNRESOLVED, REF_LOCAL, REF_UPVAL, REF_GLOBAL } RefKind;

typedef struct Chunk Chunk;
typedef struct Node Node;
typedef struct FnInfo FnInfo;
struct Value;
struct Env;

struct Node {
    uint8_t  kind;      /* NodeKind */
    uint8_t  op;        /* BinOp for N_BINOP / N_COMPOUND */
    uint8_t  ref;       /* RefKind for N_NAME, N_VERSION, N_ASSIGN targets, N_FOR var */
    uint8_t  depth;     /* REF_UPVAL: how many frames out */
    uint8_t  plain_names;   /* N_INDEX: a[i] with a and i both names of locals or globals (resolve.c) */
    uint8_t  index_pure;    /* N_INDEX: a[i] with a a name (of any kind) and i an expression that
                             * cannot call or assign: names, numbers, arithmetic, element reads */
    uint8_t  view_read;     /* N_CALL: if it is view/row/col, its value is only read, at once, by
                             * the arithmetic it is an operand of, and nothing that can call or
                             * assign runs between making it and that read (resolve.c) */
    uint8_t  leaf;          /* a local, a captured name one frame out, a number literal: what its
                             * parent reads in place (threaded.c's LEAF_*), 0 otherwise */
    int      line, col;
    int      slot;      /* local slot or global index */
    const char *name;   /* identifier (interned in the chunk arena) */
    Node    *a, *b, *c; /* children; meaning depends on kind */
    Node   **list;      /* N_ARRAY items, N_CALL args, N_BLOCK statements, N_IF arms */
    int      n;         /* length of list */
    double   num;       /* N_NUM value in float64; N_VERSION k */
    const char *text;   /* N_NUM source text (for other backends), N_STR bytes, N_COMMAND line */
    int      textlen;
    FnInfo  *fn;        /* N_FN: the function's static facts */
    /* N_NUM: the literal rounded to the backend it was last evaluated in */
    int      cached_backend;
    double   cached_num;
    /* N_CALL of a global name: the builtin it last named, and what that
     * builtin is (eval.c: a math function's op, or a special form) */
    const void *cached_callee;
    int      cached_op;         /* OpCode of a one-argument math builtin, else -1 */
    void    *cached_special;    /* SpecialFn, or NULL */
    /* What evaluates the node as an expression (ev) and runs it as a
     * statement (ex): C functions chosen once, after resolution, from what
     * is static about the node (threaded.c) */
    struct Value (*ev)(struct Node *n, struct Env *env);
    int (*ex)(struct Node *n, struct Env *env);
};

struct FnInfo {
    const char *name;   /* NULL for anonymous functions */
    int   nparams;
    int   nslots;       /* params first, then other locals */
    const char **slotnames;
    Node *body;         /* a block, or an expression for `=>` bodies */
    int   is_expr;      /* body is an expression */
    int   records;      /* body holds d(...) or x@k: locals get tape versions */
    int   captures;     /* body makes closures: its frame must live on the heap */
    int   labels;       /* a function nested in it records: while recording, its
                         * locals get versions too, so a closure's d never takes
                         * a parameter bound to a captured local for that local */
    Chunk *chunk;
    /* Its compiled register form (regvm.c), made at its first call:
     * reg_state REG_UNTRIED, REG_COMPILED (reg set, in the chunk's arena),
     * REG_DECLINED (its body has something the form does not do) or
     * REG_RESTING (compiled, not offered for now: regvm.h). */
    int   reg_state;
    struct RFn *reg;
    int   reg_skip;     /* calls by a global name not to offer it (after many declined in a row: regvm.c) */
    int   reg_declines; /* offers declined in a row */
};

struct Chunk {
    int    refs;
    const char *filename;
    char  *source;      /* whole source text, for error carets */
    size_t srclen;
    Node  *root;        /* N_BLOCK of top-level statements */
    struct ArenaBlock *arena;
};

Node  *ast_node(Chunk *c, NodeKind k, int line, int col);
void  *ast_alloc(Chunk *c, size_t n);
char  *ast_strdup(Chunk *c, const char *s, size_t n);
Node **ast_list_push(Chunk *c, Node **list, int n, Node *item);
Chunk *ast_chunk_new(const char *filename, const char *src, size_t len);
void   ast_chunk_retain(Chunk *c);
void   ast_chunk_release(Chunk *c);
const char *ast_chunk_line(const Chunk *c, int line, int *len);

#endif
