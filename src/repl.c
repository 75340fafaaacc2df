/* repl.c: the interactive loop, on libedit's readline interface.
 * An input that fails to parse only because it ended too early (open
 * brackets or blocks, a trailing operator) is continued with "..> ", as
 * lua.c does with incomplete chunks. Ctrl-C sets a flag that the evaluator
 * polls (loops, calls, sweeps) and turns into an "interrupted" error; at
 * the prompt it drops the current input. */
#include <setjmp.h>
#include <signal.h>
#include <termios.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <editline/readline.h>
#include "repl.h"
#include "complete.h"
#include "state.h"

/* The terminal's and the prompt's, one a process (the session's own
 * state is in its wg_State). */
static struct {
    char history_path[4096];
    sigjmp_buf at_prompt;
    volatile sig_atomic_t reading;   /* inside readline() */
    struct termios saved_tty;
    wg_Session *session;
    int have_tty;
    int completing;                  /* C_NAMES ... (complete.h) */
    int complete_index;              /* complete_word's place in the names */
    size_t complete_len;
    int inputs;                      /* inputs run: <repl N> */
} R;

/* While a line is being read, Ctrl-C abandons it (back to a fresh prompt);
 * while code runs, it only raises the flag the evaluator polls. */
static void on_sigint(int sig)
{
    (void)sig;
    if (R.reading) {
        R.reading = 0;
        siglongjmp(R.at_prompt, 1);
    }
    wg_interrupt(R.session);
}

static char *read_line(const char *prompt)
{
    if (sigsetjmp(R.at_prompt, 1)) {
        if (R.have_tty) tcsetattr(0, TCSANOW, &R.saved_tty);
        printf("^C\n");
        return strdup("\x03");   /* a line no input can contain: drop the buffer */
    }
    R.reading = 1;
    char *line = readline(prompt);
    R.reading = 0;
    return line;
}

/* ----------------------------------------------------------- completion */


static char *complete_word(const char *text, int state)
{
    if (state == 0) {
        R.complete_index = 0;
        R.complete_len = strlen(text);
    }
    char buf[64];
    const char *name;
    while ((name = complete_candidate(R.session, R.completing, R.complete_index++, buf, sizeof buf)))
        if (!strncmp(name, text, R.complete_len)) return strdup(name);
    return NULL;
}

/* libedit's file names, a directory's with a '/' after it (libedit's
 * readline interface would append a space to it) */
static char *complete_file(const char *text, int state)
{
    char *name = rl_filename_completion_function(text, state);
    struct stat st;
    if (name && stat(name, &st) == 0 && S_ISDIR(st.st_mode) && name[0] && name[strlen(name) - 1] != '/') {
        size_t n = strlen(name);
        char *d = realloc(name, n + 2);
        if (!d) return name;
        d[n] = '/';
        d[n + 1] = 0;
        name = d;
    }
    return name;
}

/* A single directory completed goes on without a space, into the
 * directory: `:load exa` Tab gives `:load examples/`. */
static char **file_matches(const char *text)
{
    char **m = rl_completion_matches(text, complete_file);
    size_t n = m && m[0] ? strlen(m[0]) : 0;
    int one = m && (!m[1] || (!m[2] && !strcmp(m[0], m[1])));    /* a single match */
    rl_completion_append_character = one && n && m[0][n - 1] == '/' ? '\0' : ' ';
    return m;
}

static char **completer(const char *text, int start, int end)
{
    (void)end;
    rl_attempted_completion_over = 1;
    rl_completion_append_character = ' ';
    R.completing = complete_kind(rl_line_buffer, start);
    if (R.completing == C_FILES) return file_matches(text);
    if (R.completing == C_TAPE_DOT) {      /* a NAME or a FILE */
        char **names = rl_completion_matches(text, complete_word);
        if (names) return names;
        return file_matches(text);
    }
    return rl_completion_matches(text, complete_word);
}

/* --------------------------------------------------------------- input */

typedef struct {
    char *buf;
    size_t len, cap;
} Input;

static void input_add(Input *in, const char *line)
{
    size_t n = strlen(line);
    if (in->len + n + 2 > in->cap) {
        in->cap = (in->len + n + 2) * 2;
        in->buf = realloc(in->buf, in->cap);
    }
    memcpy(in->buf + in->len, line, n);
    in->len += n;
    in->buf[in->len++] = '\n';
    in->buf[in->len] = 0;
}

static int blank(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n') s++;
    return *s == 0;
}

/* Each input is named by its number, as IPython's In[12]: errors and
 * tracebacks say <repl 12>:LINE:COL, so lines from different inputs differ. */
static void run_input(Input *in)
{
    char name[32];
    snprintf(name, sizeof name, "<repl %d>", ++R.inputs);
    wg_run(R.session, name, in->buf, in->len, NULL);
}

static int starts_with_else(const char *line)
{
    while (*line == ' ' || *line == '\t') line++;
    return !strncmp(line, "else", 4) || !strncmp(line, "elif", 4);
}

int repl_run(wg_Session *s)
{
    R.session = s;
    wg_set_echo(s, 1);
    const char *home = getenv("HOME");
    if (home) snprintf(R.history_path, sizeof R.history_path, "%s/.wengert_history", home);
    rl_readline_name = "wengert";
    rl_attempted_completion_function = completer;
    using_history();
    if (R.history_path[0]) read_history(R.history_path);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigaction(SIGINT, &sa, NULL);
    printf("wengert %s: every number can be differentiated. :help for help, :quit to leave.\n", WG_VERSION);
    R.have_tty = tcgetattr(0, &R.saved_tty) == 0;
    Input in = {0};
    int pending_if = 0;      /* a complete if waits to see whether else follows */
    while (!wg_quitting(s)) {
        char *line = read_line(in.len ? "..> " : "wg> ");
        if (line && line[0] == '\x03') {     /* Ctrl-C at the prompt: drop the input */
            in.len = 0;
            pending_if = 0;
            free(line);
            continue;
        }
        if (!line) {
            if (pending_if) run_input(&in);
            break;
        }
        if (pending_if && !starts_with_else(line)) {
            /* not an else: run the if on its own, then this line */
            pending_if = 0;
            run_input(&in);
            in.len = 0;
            fflush(stdout);
        }
        pending_if = 0;
        input_add(&in, line);
        free(line);
        if (blank(in.buf)) { in.len = 0; continue; }
        int open_if;
        wg_Status st = wg_check(s, in.buf, in.len, &open_if);
        if (st == WG_INCOMPLETE) continue;
        if (st == WG_OK && open_if) {
            pending_if = 1;
            continue;
        }
        char *entry = strdup(in.buf);
        entry[strlen(entry) - 1] = 0;
        add_history(entry);
        free(entry);
        run_input(&in);
        in.len = 0;
        fflush(stdout);
    }
    if (R.history_path[0]) write_history(R.history_path);
    free(in.buf);
    printf("\n");
    return 0;
}
