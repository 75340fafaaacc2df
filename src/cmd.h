/* cmd.h: the `:` commands, in the REPL and in scripts alike (SPEC "REPL
 * commands"), from one table of {name, handler, help}. */
#ifndef WG_CMD_H
#define WG_CMD_H
#include <stddef.h>

/* The commands' part of the session state (G->cmd). */
typedef struct {
    void (*reset_hook)(void);    /* reloads the standard library */
    struct HelpEntry *lib_help;  /* stdlib docs (cmd.c) */
    int nlib_help, cap_lib_help;
    char **inputs;               /* for :save */
    int ninputs, capinputs;
} CmdState;

void cmd_run(const char *text);      /* "tape stats", "backend posit16", ... */
const char *cmd_name(int i);         /* for completion; NULL after the last */
const char *cmd_lib_name(int i);     /* documented stdlib functions; NULL after the last */
/* The help line of a command (with or without ':'), builtin or library
 * function; NULL if none. */
const char *cmd_help_text(const char *name);
void cmd_add_help(const char *name, const char *help);   /* stdlib docs */
/* An input of this session (a REPL entry, -e code, a script) that ran
 * without error, for :save. Inputs that only look (:help, :vars, :tape)
 * or that save are left out; :reset starts the record afresh. */
void cmd_log_input(const char *src, size_t len);
/* Helpers the command files share. */
const char *cmd_word(const char *s, char *buf, size_t size);   /* first word into buf; the rest */
void cmd_fmt_bytes(size_t b, char *buf, size_t size);          /* "1.5 MB" */

#endif
