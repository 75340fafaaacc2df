/* ast.c: arena allocation for syntax trees, and chunk lifetimes. */
#include <stdlib.h>
#include <string.h>
#include "ast.h"
#include "error.h"
#include "state.h"

typedef struct ArenaBlock {
    struct ArenaBlock *next;
    size_t used, cap;
    max_align_t data[];
} ArenaBlock;

void *ast_alloc(Chunk *c, size_t n)
{
    n = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
    ArenaBlock *b = c->arena;
    if (!b || b->used + n > b->cap) {
        size_t cap = n > 16384 ? n : 16384;
        b = err_malloc(sizeof(ArenaBlock) + cap);
        b->used = 0;
        b->cap = cap;
        b->next = c->arena;
        c->arena = b;
    }
    void *p = (char *)b->data + b->used;
    b->used += n;
    memset(p, 0, n);
    return p;
}

Node *ast_node(Chunk *c, NodeKind k, int line, int col)
{
    Node *n = ast_alloc(c, sizeof(Node));
    n->kind = (uint8_t)k;
    n->line = line;
    n->col = col;
    n->cached_backend = -1;
    return n;
}

char *ast_strdup(Chunk *c, const char *s, size_t n)
{
    char *p = ast_alloc(c, n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

/* Lists grow by doubling whenever their length reaches a power of two. */
Node **ast_list_push(Chunk *c, Node **list, int n, Node *item)
{
    if ((n & (n - 1)) == 0) {
        Node **bigger = ast_alloc(c, sizeof(Node *) * (size_t)(n ? 2 * n : 1));
        if (n) memcpy(bigger, list, sizeof(Node *) * (size_t)n);
        list = bigger;
    }
    list[n] = item;
    return list;
}

Chunk *ast_chunk_new(const char *filename, const char *src, size_t len)
{
    Chunk *c = err_malloc(sizeof(Chunk));
    memset(c, 0, sizeof *c);
    c->refs = 1;
    c->source = err_malloc(len + 1);
    memcpy(c->source, src, len);
    c->source[len] = 0;
    c->srclen = len;
    c->filename = ast_strdup(c, filename, strlen(filename));
    return c;
}

void ast_chunk_retain(Chunk *c) { c->refs++; }

void ast_chunk_release(Chunk *c)
{
    if (!c || --c->refs > 0) return;
    ArenaBlock *b = c->arena;
    while (b) {
        ArenaBlock *next = b->next;
        free(b);
        b = next;
    }
    free(c->source);
    free(c);
}

/* The text of source line `line` (1-based), for error carets. */
const char *ast_chunk_line(const Chunk *c, int line, int *len)
{
    const char *p = c->source, *end = c->source + c->srclen;
    for (int l = 1; l < line && p < end; p++)
        if (*p == '\n') l++;
    const char *q = p;
    while (q < end && *q != '\n') q++;
    *len = (int)(q - p);
    return p;
}
