/* plot.h: plot(f, lo, hi) and plot(a), in the terminal or as SVG
 * (SPEC "Seeing it"). */
#ifndef WG_PLOT_H
#define WG_PLOT_H

void plot_register(void);

/* The terminal's abilities, from the environment: a UTF-8 locale
 * (LC_ALL, LC_CTYPE, LANG), and colour (stdout a terminal, TERM not dumb,
 * NO_COLOR unset). */
int plot_utf8(void);
int plot_colour(void);

#endif
