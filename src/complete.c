/* complete.c: what tab completion offers, shared by the REPL (libedit)
 * and the notebook kernel: the kind of word being completed, from the
 * words before it, and the candidates of each kind (wengert.h names). */
#include <stdio.h>
#include <string.h>
#include "complete.h"
#include "state.h"

static const char *const tape_subcommands[] = {"all", "stats", "dot", "clear", "limit", "kinks", NULL};

const char *complete_candidate(wg_Session *session, int completing, int i, char *buf, size_t size)
{
    switch (completing) {
    case C_COMMANDS:
        if (!wg_name(session, WG_NAMES_COMMANDS, i)) return NULL;
        snprintf(buf, size, ":%s", wg_name(session, WG_NAMES_COMMANDS, i));
        return buf;
    case C_BACKENDS: return wg_name(session, WG_NAMES_BACKENDS, i);
    case C_HELP: return wg_name(session, WG_NAMES_HELP, i);
    case C_TAPE:
        for (int k = 0; tape_subcommands[k]; k++, i--)
            if (i == 0) return tape_subcommands[k];
        /* fall through - the variables of numbers, for :tape NAME */
    case C_TAPE_DOT:
        if (i < 0) return NULL;
        return wg_name(session, WG_NAMES_DATA, i);
    case C_NAMES:
    default:
        if (completing == C_NAMES) {
            const char *k = wg_name(session, WG_NAMES_KEYWORDS, i);
            if (k) return k;
            for (int j = 0; wg_name(session, WG_NAMES_KEYWORDS, j); j++) i--;
        }
        if (i < 0) return NULL;
        return wg_name(session, WG_NAMES_VARIABLES, i);
    }
}

int complete_kind(const char *line, int start)
{
    char words[3][32] = {"", "", ""};
    int n = 0;
    const char *p = line, *end = line + start;
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    if (*p != ':') return C_NAMES;
    const char *q = p;
    while (q < end && *q != ' ' && *q != '\t') q++;
    if (q == end) return C_COMMANDS;         /* still in the command's name */
    p++;
    while (p < end && n < 3) {
        size_t k = 0;
        while (p < end && *p != ' ' && *p != '\t') {
            if (k + 1 < sizeof words[0]) words[n][k++] = *p;
            p++;
        }
        words[n++][k] = 0;
        while (p < end && (*p == ' ' || *p == '\t')) p++;
    }
    const char *cmd = words[0];
    if (!strcmp(cmd, "load") || !strcmp(cmd, "save") || !strcmp(cmd, "save!")) return C_FILES;
    if (!strcmp(cmd, "backend")) return n == 1 ? C_BACKENDS : C_FILES;
    if (!strcmp(cmd, "help")) return C_HELP;
    if (!strcmp(cmd, "tape")) {
        if (n == 1) return C_TAPE;
        if (!strcmp(words[1], "dot")) return n == 2 ? C_TAPE_DOT : C_FILES;
        return C_FILES;
    }
    return C_NAMES;      /* :time STATEMENT and the rest */
}

