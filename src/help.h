/* help.h: `:help` for the whole language (help.c). */
#ifndef WG_HELP_H
#define WG_HELP_H

void help_show(const char *topic);   /* "" for the one-screen overview */
const char *help_word(int i);
const char *help_keyword(int i);     /* the language's keywords; NULL after the last */        /* every name help knows; NULL after the last */

/* help.c's part of the session state (G->help): a name it hands out. */
typedef struct { char name[32]; } HelpState;

#endif
