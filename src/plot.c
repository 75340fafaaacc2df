/* plot.c: pictures of functions and their derivatives (SPEC "Seeing it").
 *
 * plot(f, lo, hi) samples f on a grid of [lo, hi] and takes f' at the same
 * points by forward mode (fwd_jvp), in the active backend, with recording
 * switched off: a plot leaves the tape as it found it. plot(a) draws an
 * array against its index. Non-finite values (nan, inf, NaR) and values far
 * outside the bulk of the others (poles) leave gaps: the y range comes from
 * quantiles of the finite values, and a line is drawn only between two
 * neighbouring points that both lie inside it.
 *
 * The terminal picture is a canvas of W x H character cells. With UTF-8 each
 * cell is a braille character holding 2 x 4 dots; otherwise it holds one
 * ASCII mark. f is drawn solid, f' dotted (and in a second colour on a
 * colour terminal), so the two stay apart even in black and white. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "plot.h"
#include "eval.h"
#include "builtins.h"
#include "error.h"
#include "fwd.h"
#include "valuegc.h"
#include "num.h"
#include "tape.h"
#include "matrix.h"
#include "state.h"

#define PLOT_W 72          /* canvas columns */
#define PLOT_H 20          /* canvas rows */
#define SVG_SAMPLES 400

#define COLOUR_F  "\033[36m"
#define COLOUR_DF "\033[35m"
#define COLOUR_OFF "\033[0m"

/* ------------------------------------------------------- environment */

int plot_utf8(void)
{
    const char *vars[] = {"LC_ALL", "LC_CTYPE", "LANG"};
    for (int i = 0; i < 3; i++) {
        const char *s = getenv(vars[i]);
        if (!s || !*s) continue;
        for (; *s; s++)
            if ((s[0] == 'U' || s[0] == 'u') && (s[1] == 'T' || s[1] == 't') && (s[2] == 'F' || s[2] == 'f'))
                return s[3] == '8' || (s[3] == '-' && s[4] == '8');
        return 0;
    }
    return 0;
}

int plot_colour(void)
{
    const char *term = getenv("TERM"), *no = getenv("NO_COLOR");
    if (no && *no) return 0;
    return isatty(1) && term && *term && strcmp(term, "dumb") != 0;
}

/* ------------------------------------------------------------ series */

/* What gets drawn: n points (x[i], y[i]) and, for a function, its
 * derivative dy[i] (NULL for an array). */
typedef struct {
    int n;
    double lo, hi;          /* the x range */
    double *x, *y, *dy;
    int is_array;
} Series;

static void series_free(Series *s)
{
    err_scratch_free(s->x);
    err_scratch_free(s->y);
    err_scratch_free(s->dy);
}

/* Where v lies between lo and hi, 0 to 1, without overflowing when the
 * range spans most of the doubles. */
static double frac(double v, double lo, double hi)
{
    double span = hi / 2 - lo / 2;
    return span > 0 ? (v / 2 - lo / 2) / span : 0;
}

static double number_result(Value r, const char *what)
{
    if (r.t != V_NUM && r.t != V_DUAL) {
        const char *t = value_type_name(r);
        v_release(r);
        err_raise("plot: %s must be a number, got %s", what, t);
    }
    double d = v_primal(r);
    v_release(r);
    return d;
}

/* The tape as it was before a plot, so that whatever a plotted function
 * records anyway (a body that takes d(...) switches recording back on) is
 * taken off again. Numbers that escaped into live storage through a view
 * become constants. */
typedef struct {
    TapeMark mark;
    int recording;
} PlotMark;

static PlotMark plot_mark(void)
{
    PlotMark m = { tape_mark(), rec_off() };
    return m;
}

static void plot_restore(PlotMark m)
{
    rec_restore(m.recording);
    if (!tape_grew_since(m.mark)) return;
    gc_strip_ids_from(m.mark.n);
    tape_truncate(m.mark);
}

/* f and f' at n evenly spaced points of [lo, hi], each x rounded to the
 * active backend. */
static void sample_function(Series *s, Value f, double lo, double hi, int n)
{
    s->n = n;
    s->lo = lo;
    s->hi = hi;
    s->x = err_scratch(sizeof(double) * (size_t)n);
    s->y = err_scratch(sizeof(double) * (size_t)n);
    s->dy = err_scratch(sizeof(double) * (size_t)n);
    PlotMark m = plot_mark();
    Value one = num_val(num_round(1));
    for (int i = 0; i < n; i++) {
        double t = (double)i / (n - 1);
        double x = num_round(i == n - 1 ? hi : lo * (1 - t) + hi * t);
        Value xv = num_val(x);
        s->x[i] = x;
        s->y[i] = number_result(eval_call_value(f, 1, &xv), "f(x)");
        s->dy[i] = number_result(fwd_jvp(f, xv, one), "f'(x)");
    }
    plot_restore(m);
}

static void sample_array(Series *s, Value a)
{
    int n = seq_len(a);
    if (n == 0) err_raise("plot: the array is empty");
    s->n = n;
    s->lo = 0;
    s->hi = n - 1;
    s->is_array = 1;
    s->x = err_scratch(sizeof(double) * (size_t)n);
    s->y = err_scratch(sizeof(double) * (size_t)n);
    for (int i = 0; i < n; i++) {
        Value *e = seq_at(a, i);
        if (e->t != V_NUM && e->t != V_DUAL)
            err_raise("plot: element %d of the array is %s, not a number", i, value_type_name(*e));
        s->x[i] = i;
        s->y[i] = v_primal(*e);
    }
}

/* ------------------------------------------------------------- range */

/* Tick spacing of 1, 2 or 5 times a power of ten, about n ticks. */
static double nice_step(double span, int n)
{
    double raw = span / n, p = pow(10, floor(log10(raw)));
    if (!isfinite(raw) || !(raw > 0) || !(p > 0) || !isfinite(p)) return raw > 0 ? raw : 1;
    double f = raw / p;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* A y range that holds the bulk of a function's finite values: from the
 * least to the greatest, unless that lies beyond the 5% or 95% quantile by
 * more than twice their spread; then from the quantile widened by half the
 * spread. A pole's huge values fall outside and are clipped, not allowed
 * to squash the rest of the curve flat. An array's range holds all its
 * finite values (a vanishing gradient's first values are the point). The
 * ends are then rounded out to round numbers. */
static void y_range(const Series *s, double *ymin, double *ymax)
{
    double *v = err_scratch(sizeof(double) * (size_t)s->n * 2);
    int m = 0;
    for (int i = 0; i < s->n; i++) {
        if (isfinite(s->y[i])) v[m++] = s->y[i];
        if (s->dy && isfinite(s->dy[i])) v[m++] = s->dy[i];
    }
    if (m == 0) {           /* nothing to draw: an empty frame */
        err_scratch_free(v);
        *ymin = -1;
        *ymax = 1;
        return;
    }
    qsort(v, (size_t)m, sizeof(double), cmp_double);
    double q05 = v[(int)(0.05 * (m - 1))], q95 = v[(int)ceil(0.95 * (m - 1))];
    double spread = q95 - q05;
    double lo = v[0], hi = v[m - 1];
    if (lo < q05 - 2 * spread) lo = q05 - 0.5 * spread;     /* far out: a pole */
    if (hi > q95 + 2 * spread) hi = q95 + 0.5 * spread;
    if (!s->dy) lo = v[0], hi = v[m - 1];   /* an array: every value counts (no poles) */
    err_scratch_free(v);
    if (!(hi > lo)) {                   /* a constant: a band around it */
        double pad = fabs(lo) > 1 ? fabs(lo) * 0.1 : 1;
        lo -= pad;
        hi += pad;
    }
    double step = nice_step(hi / 2 - lo / 2, 10);   /* round numbers at the ends */
    if (isfinite(floor(lo / step) * step) && isfinite(ceil(hi / step) * step)) {
        lo = floor(lo / step) * step;
        hi = ceil(hi / step) * step;
    }
    *ymin = lo;
    *ymax = hi;
}

/* An axis number; v within a rounding error of 0 (relative to the
 * numbers beside it, scale) is 0. */
static void axis_number(double v, double scale, char *buf, size_t size)
{
    if (fabs(v) < 1e-12 * scale) v = 0;
    snprintf(buf, size, "%.3g", v);
}

/* ------------------------------------------------------------ canvas */

typedef struct {
    int pw, ph;            /* pixels: 2 x 4 per cell in braille, 1 x 1 otherwise */
    int sx, sy;            /* pixels per cell */
    uint8_t *px;           /* bit 1: f, bit 2: f' */
} Canvas;

static void set_pixel(Canvas *c, int x, int y, int bit)
{
    if (x >= 0 && x < c->pw && y >= 0 && y < c->ph) c->px[y * c->pw + x] |= (uint8_t)bit;
}

static void line(Canvas *c, int x0, int y0, int x1, int y1, int bit)
{
    int dx = abs(x1 - x0), dy = -abs(y1 - y0);
    int stepx = x0 < x1 ? 1 : -1, stepy = y0 < y1 ? 1 : -1, err = dx + dy;
    for (;;) {
        set_pixel(c, x0, y0, bit);
        if (x0 == x1 && y0 == y1) return;
        int e2 = 2 * err;
        if (e2 >= dy) { err += dy; x0 += stepx; }
        if (e2 <= dx) { err += dx; y0 += stepy; }
    }
}

/* Pixel row of y, or -1 when y is not finite or outside [ymin, ymax]. */
static int pixel_row(const Canvas *c, double y, double ymin, double ymax)
{
    if (!isfinite(y) || y < ymin || y > ymax) return -1;
    return (int)lround((1 - frac(y, ymin, ymax)) * (c->ph - 1));
}

static int pixel_col(const Canvas *c, const Series *s, double x)
{
    if (s->hi == s->lo) return 0;
    return (int)lround(frac(x, s->lo, s->hi) * (c->pw - 1));
}

/* Solid: neighbours inside the range are joined, unless, for a function,
 * one is more than a quarter of the height above the other (a jump, as
 * where a loop's trip count changes, is not drawn as a steep line; an
 * array's few points are always joined). Dotted: every other pixel
 * column, no joins. */
static void draw_curve(Canvas *c, const Series *s, const double *y, double ymin, double ymax, int bit, int dotted)
{
    int px = -1, py = -1;
    for (int i = 0; i < s->n; i++) {
        int x = pixel_col(c, s, s->x[i]), r = pixel_row(c, y[i], ymin, ymax);
        if (dotted) {
            if (r >= 0 && (c->sx == 1 || x % 2 == 0)) set_pixel(c, x, r, bit);
            continue;
        }
        if (r >= 0 && py >= 0 && (s->is_array || abs(r - py) <= c->ph / 4)) line(c, px, py, x, r, bit);
        else if (r >= 0) set_pixel(c, x, r, bit);
        px = x;
        py = r;
    }
}

/* Braille dot bits for (dx, dy) inside a cell, as Unicode numbers them. */
static const uint8_t braille_bit[4][2] = {{0x01, 0x08}, {0x02, 0x10}, {0x04, 0x20}, {0x40, 0x80}};

static void put_utf8(unsigned cp)
{
    if (cp < 0x80) io_putc(IO_OUT, (int)cp);
    else if (cp < 0x800) { io_putc(IO_OUT, 0xC0 | (cp >> 6)); io_putc(IO_OUT, 0x80 | (cp & 0x3F)); }
    else { io_putc(IO_OUT, 0xE0 | (cp >> 12)); io_putc(IO_OUT, 0x80 | ((cp >> 6) & 0x3F)); io_putc(IO_OUT, 0x80 | (cp & 0x3F)); }
}

/* One cell: its character (0 for empty) and which curve owns it. */
static unsigned cell_char(const Canvas *c, int col, int row, int utf8, int *owner)
{
    unsigned dots = 0;
    int bits = 0;
    for (int dy = 0; dy < c->sy; dy++)
        for (int dx = 0; dx < c->sx; dx++) {
            int b = c->px[(row * c->sy + dy) * c->pw + col * c->sx + dx];
            if (b && utf8) dots |= braille_bit[dy][dx];
            bits |= b;
        }
    *owner = bits & 1 ? 1 : bits;
    if (!bits) return 0;
    if (utf8) return 0x2800 + dots;
    return bits == 3 ? '#' : bits == 1 ? '*' : 'o';
}

/* The terminal picture: rows of "label ┤cells", the x axis, its numbers,
 * the legend. Trailing blanks are not written. */
static void render_terminal(const Series *s)
{
    int utf8 = plot_utf8(), colour = plot_colour();
    double ymin, ymax;
    y_range(s, &ymin, &ymax);
    Canvas c = {PLOT_W * (utf8 ? 2 : 1), PLOT_H * (utf8 ? 4 : 1), utf8 ? 2 : 1, utf8 ? 4 : 1, NULL};
    c.px = err_scratch((size_t)c.pw * (size_t)c.ph);
    draw_curve(&c, s, s->y, ymin, ymax, 1, 0);
    if (s->dy) draw_curve(&c, s, s->dy, ymin, ymax, 2, 1);

    /* y numbers: top, bottom, and 0 (or the middle) */
    char top[32], bottom[32], mid[32];
    double yscale = fmax(fabs(ymin), fabs(ymax)), xscale = fmax(fabs(s->lo), fabs(s->hi));
    axis_number(ymax, yscale, top, sizeof top);
    axis_number(ymin, yscale, bottom, sizeof bottom);
    double ymid = ymin < 0 && ymax > 0 ? 0 : ymin / 2 + ymax / 2;
    axis_number(ymid, yscale, mid, sizeof mid);
    int midrow = (int)lround((1 - frac(ymid, ymin, ymax)) * (PLOT_H - 1));
    if (midrow <= 0 || midrow >= PLOT_H - 1) midrow = -1;
    int lw = (int)strlen(top);
    if ((int)strlen(bottom) > lw) lw = (int)strlen(bottom);
    if (midrow >= 0 && (int)strlen(mid) > lw) lw = (int)strlen(mid);

    for (int row = 0; row < PLOT_H; row++) {
        const char *label = row == 0 ? top : row == PLOT_H - 1 ? bottom : row == midrow ? mid : "";
        io_out("%*s %s", lw, label, *label ? (utf8 ? "┤" : "+") : (utf8 ? "│" : "|"));
        int last = -1;
        for (int col = 0; col < PLOT_W; col++) {
            int owner;
            if (cell_char(&c, col, row, utf8, &owner)) last = col;
        }
        int shown = 0;
        for (int col = 0; col <= last; col++) {
            int owner;
            unsigned ch = cell_char(&c, col, row, utf8, &owner);
            if (colour && ch && owner != shown) {
                io_puts(IO_OUT, owner == 1 ? COLOUR_F : COLOUR_DF);
                shown = owner;
            } else if (colour && !ch && shown) {
                io_puts(IO_OUT, COLOUR_OFF);
                shown = 0;
            }
            if (ch) put_utf8(ch);
            else io_putc(IO_OUT, ' ');
        }
        if (shown) io_puts(IO_OUT, COLOUR_OFF);
        io_putc(IO_OUT, '\n');
    }

    /* the x axis and its numbers: lo, middle, hi */
    io_out("%*s %s", lw, "", utf8 ? "└" : "+");
    for (int col = 0; col < PLOT_W; col++) io_puts(IO_OUT, utf8 ? "─" : "-");
    io_putc(IO_OUT, '\n');
    char xs[3][32], axis[PLOT_W + 64];
    double xmid = s->is_array ? floor(s->hi / 2) : s->lo / 2 + s->hi / 2;
    axis_number(s->lo, xscale, xs[0], sizeof xs[0]);
    axis_number(xmid, xscale, xs[1], sizeof xs[1]);
    axis_number(s->hi, xscale, xs[2], sizeof xs[2]);
    memset(axis, ' ', sizeof axis);
    int len = 0, at[3] = {0, (int)lround(frac(xmid, s->lo, s->hi) * (PLOT_W - 1)), PLOT_W};
    for (int k = 0; k < 3; k++) {
        int w = (int)strlen(xs[k]);
        int start = k == 0 ? 0 : k == 1 ? at[1] - w / 2 : PLOT_W - w;
        if (k == 1 && (start <= len || start + w >= PLOT_W - (int)strlen(xs[2]))) continue;
        if (k == 2 && start <= len) start = len + 1;
        if (k == 2 && s->hi == s->lo) continue;
        memcpy(axis + start, xs[k], (size_t)w);
        len = start + w;
    }
    axis[len] = 0;
    io_out("%*s  %s\n", lw, "", axis);

    /* the legend */
    io_out("%*s  ", lw, "");
    const char *solid = utf8 ? "⠒⠒" : "**", *dots = utf8 ? "⠂⠂" : "oo";
    if (s->is_array) io_out("%s%s%s a[i] against i (%d value%s)\n", colour ? COLOUR_F : "", solid, colour ? COLOUR_OFF : "", s->n, s->n == 1 ? "" : "s");
    else io_out("%s%s%s f   %s%s%s f'\n", colour ? COLOUR_F : "", solid, colour ? COLOUR_OFF : "",
                colour ? COLOUR_DF : "", dots, colour ? COLOUR_OFF : "");
    err_scratch_free(c.px);
}

/* --------------------------------------------------------------- SVG */

#define SVG_W 720
#define SVG_H 440
#define SVG_LEFT 70
#define SVG_RIGHT 20
#define SVG_TOP 20
#define SVG_BOTTOM 70

static double svg_x(const Series *s, double x)
{
    return SVG_LEFT + frac(x, s->lo, s->hi) * (SVG_W - SVG_LEFT - SVG_RIGHT);
}

static double svg_y(double y, double ymin, double ymax)
{
    return SVG_TOP + (1 - frac(y, ymin, ymax)) * (SVG_H - SVG_TOP - SVG_BOTTOM);
}

/* One curve as polylines, broken wherever a point is missing or clipped. */
static void svg_curve(FILE *f, const Series *s, const double *y, double ymin, double ymax,
                      const char *id, const char *style)
{
    fprintf(f, "<g id=\"%s\" fill=\"none\" %s>\n", id, style);
    int run = 0;
    for (int i = 0; i <= s->n; i++) {
        int in = i < s->n && isfinite(y[i]) && y[i] >= ymin && y[i] <= ymax;
        if (in) {
            if (!run) fputs("<polyline points=\"", f);
            fprintf(f, "%s%.2f,%.2f", run ? " " : "", svg_x(s, s->x[i]), svg_y(y[i], ymin, ymax));
            run++;
        } else if (run) {
            fputs("\"/>\n", f);
            run = 0;
        }
    }
    fputs("</g>\n", f);
}

static void svg_ticks(FILE *f, double lo, double hi, int vertical, const Series *s, double ymin, double ymax)
{
    double step = nice_step(hi / 2 - lo / 2, vertical ? 3 : 4);
    if (s->is_array && !vertical && step < 1) step = 1;
    double first = ceil(lo / step), last = floor(hi / step + 1e-9), ticks[41];
    int n = 0;
    if (last - first < 40 && fabs(first) < 1e15)
        for (double k = first; k <= last; k++) ticks[n++] = k * step;
    else {                  /* a range too narrow for its doubles: the ends */
        ticks[n++] = lo;
        ticks[n++] = hi;
        step = 0;
    }
    for (int i = 0; i < n; i++) {
        char buf[32];
        double t = ticks[i];
        axis_number(t, step, buf, sizeof buf);
        if (vertical) {
            double y = svg_y(t, ymin, ymax);
            fprintf(f, "<line x1=\"%d\" y1=\"%.2f\" x2=\"%d\" y2=\"%.2f\" stroke=\"#e4e4e4\"/>\n",
                    SVG_LEFT, y, SVG_W - SVG_RIGHT, y);
            fprintf(f, "<text x=\"%d\" y=\"%.2f\" text-anchor=\"end\">%s</text>\n", SVG_LEFT - 6, y + 4, buf);
        } else {
            double x = svg_x(s, t);
            fprintf(f, "<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%d\" stroke=\"#e4e4e4\"/>\n",
                    x, SVG_TOP, x, SVG_H - SVG_BOTTOM);
            fprintf(f, "<text x=\"%.2f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", x, SVG_H - SVG_BOTTOM + 18, buf);
        }
    }
}

static void legend_entry(FILE *f, int i, const char *style, const char *text)
{
    int y = SVG_H - 22, x = SVG_LEFT + 10 + 150 * i;
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" %s/>\n", x, y - 4, x + 30, y - 4, style);
    fprintf(f, "<text x=\"%d\" y=\"%d\">%s</text>\n", x + 38, y, text);
}

static void write_svg(const Series *s, FILE *f)
{
    double ymin, ymax;
    y_range(s, &ymin, &ymax);
    const char *style_f = "stroke=\"#0072b2\" stroke-width=\"2\"";
    const char *style_df = "stroke=\"#d55e00\" stroke-width=\"2\" stroke-dasharray=\"6 4\"";
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "font-family=\"sans-serif\" font-size=\"12\">\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", SVG_W, SVG_H, SVG_W, SVG_H);
    svg_ticks(f, ymin, ymax, 1, s, ymin, ymax);
    svg_ticks(f, s->lo, s->hi, 0, s, ymin, ymax);
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#555\"/>\n",
            SVG_LEFT, SVG_TOP, SVG_W - SVG_LEFT - SVG_RIGHT, SVG_H - SVG_TOP - SVG_BOTTOM);
    if (ymin < 0 && ymax > 0)
        fprintf(f, "<line x1=\"%d\" y1=\"%.2f\" x2=\"%d\" y2=\"%.2f\" stroke=\"#999\"/>\n",
                SVG_LEFT, svg_y(0, ymin, ymax), SVG_W - SVG_RIGHT, svg_y(0, ymin, ymax));
    svg_curve(f, s, s->y, ymin, ymax, "f", style_f);
    if (s->dy) svg_curve(f, s, s->dy, ymin, ymax, "df", style_df);
    fprintf(f, "<g id=\"legend\">\n");
    if (s->is_array) legend_entry(f, 0, style_f, "a[i] against i");
    else {
        legend_entry(f, 0, style_f, "f");
        legend_entry(f, 1, style_df, "f&#8242; (forward mode)");
    }
    fprintf(f, "</g>\n</svg>\n");
}

static void render_svg(const Series *s, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) err_raise("plot: cannot write '%s'", path);
    write_svg(s, f);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) err_raise("plot: could not write '%s'", path);
    io_out("wrote %s\n", path);
}

/* A notebook (eval_display) gets the SVG picture, with the terminal
 * picture as its text fallback: render_terminal's output is captured
 * (io.h) meanwhile; an error inside drops the capture (eval_chunk). */
static void display_svg(const Series *s, const Series *term)
{
    char *svg = NULL, *text = NULL;
    size_t nsvg = 0, ntext = 0;
    io_capture_begin();
    render_terminal(term);  /* first: nothing of ours is held if it fails */
    text = io_capture_end(&ntext);
    FILE *f = open_memstream(&svg, &nsvg);
    if (!f) {
        free(text);
        err_raise("plot: out of memory");
    }
    write_svg(s, f);
    fclose(f);
    G->eval.display("image/svg+xml", svg, nsvg, text ? text : "");
    free(svg);
    free(text);
}

/* ----------------------------------------------------------- matrices */

/* plot(M) of a matrix: a picture of its entries, row 0 at the top. A
 * matrix of 0s and 1s (a pattern: sparsity(f)(x)) is drawn as dots, one
 * per nonzero (braille dots with UTF-8, '#' otherwise); any other matrix
 * as a heat map of shades by |value| relative to the largest (and in SVG
 * by sign too: blue below 0, red above). A matrix larger than the picture
 * is drawn in blocks: a block shows its largest entry by magnitude. */
typedef struct {
    int m, n;          /* the matrix */
    int rows, cols;    /* the picture's cells */
    int scale;         /* entries a cell spans each way */
    double *cell;      /* rows x cols: the block's entry of largest magnitude */
    double amax;       /* the largest magnitude */
    int pattern;       /* every entry 0 or 1 */
} MatPic;

static void matpic_make(MatPic *p, Value a, int maxrows, int maxcols)
{
    const Storage *st = AS_ARR(a);
    p->m = st->rows;
    p->n = st->cols;
    int sr = (p->m + maxrows - 1) / maxrows, sc = (p->n + maxcols - 1) / maxcols;
    p->scale = sr > sc ? sr : sc;
    if (p->scale < 1) p->scale = 1;
    p->rows = (p->m + p->scale - 1) / p->scale;
    p->cols = (p->n + p->scale - 1) / p->scale;
    p->cell = err_scratch(sizeof(double) * (size_t)(p->rows * p->cols + 1));
    p->amax = 0;
    p->pattern = 1;
    for (int i = 0; i < p->m; i++)
        for (int j = 0; j < p->n; j++) {
            double v = v_primal(st->v[(long)i * p->n + j]);
            if (v != 0 && v != 1) p->pattern = 0;
            double *c = &p->cell[(i / p->scale) * p->cols + j / p->scale];
            if (isnan(v) || fabs(v) > fabs(*c)) *c = v;
            if (fabs(v) > p->amax) p->amax = fabs(v);
        }
}

static void matrix_terminal(Value a)
{
    int utf8 = plot_utf8();
    MatPic p;
    /* braille: 2 x 4 dots a character; shades: one cell a character, two wide */
    matpic_make(&p, a, PLOT_H * 4, PLOT_W * (utf8 ? 2 : 1));
    int nz = 0;
    for (int k = 0; k < p.m * p.n; k++) nz += v_primal(AS_ARR(a)->v[k]) != 0;
    if (p.pattern && utf8) {
        for (int r = 0; r < (p.rows + 3) / 4; r++) {
            io_out("  ");
            for (int c = 0; c < (p.cols + 1) / 2; c++) {
                unsigned dots = 0;
                for (int dy = 0; dy < 4; dy++)
                    for (int dx = 0; dx < 2; dx++) {
                        int i = r * 4 + dy, j = c * 2 + dx;
                        if (i < p.rows && j < p.cols && p.cell[i * p.cols + j] != 0) dots |= braille_bit[dy][dx];
                    }
                put_utf8(0x2800 + dots);
            }
            io_out("\n");
        }
    } else {
        MatPic q;
        err_scratch_free(p.cell);
        int wide = !p.pattern && a.u.o && AS_ARR(a)->cols * 2 <= PLOT_W;
        matpic_make(&q, a, PLOT_H * 2, wide ? PLOT_W / 2 : PLOT_W);
        p = q;
        static const char *const shade_utf8[] = {"·", "░", "▒", "▓", "█"};
        static const char shade_ascii[] = ".:+*#";
        for (int r = 0; r < p.rows; r++) {
            io_out("  ");
            for (int c = 0; c < p.cols; c++) {
                double v = p.cell[r * p.cols + c];
                int level = v == 0 ? 0 : p.pattern || !(p.amax > 0) ? 4 : 1 + (int)fmin(3, floor(fabs(v) / p.amax * 4));
                if (isnan(v)) level = 4;
                for (int w = 0; w <= wide; w++) {
                    if (utf8) io_out("%s", shade_utf8[level]);
                    else io_putc(IO_OUT, shade_ascii[level]);
                }
            }
            io_out("\n");
        }
    }
    if (p.pattern)
        io_out("  %dx%d matrix, %d nonzero%s%s\n", p.m, p.n, nz, nz == 1 ? "" : "s",
               p.scale > 1 ? "" : "");
    else io_out("  %dx%d matrix, |entries| up to %s (darker: larger)\n", p.m, p.n, value_num_str(p.amax));
    if (p.scale > 1) io_out("  (each mark is a block of %dx%d entries)\n", p.scale, p.scale);
    err_scratch_free(p.cell);
}

static void matrix_svg(Value a, FILE *f)
{
    MatPic p;
    matpic_make(&p, a, 400, 400);
    double px = 600.0 / (p.rows > p.cols ? p.rows : p.cols);
    double w = p.cols * px, h = p.rows * px;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n",
            w + 40, h + 60, w + 40, h + 60);
    fprintf(f, "<rect x=\"20\" y=\"20\" width=\"%.2f\" height=\"%.2f\" fill=\"white\" stroke=\"#888\"/>\n", w, h);
    for (int r = 0; r < p.rows; r++)
        for (int c = 0; c < p.cols; c++) {
            double v = p.cell[r * p.cols + c];
            if (v == 0) continue;
            char fill[16];
            if (p.pattern || isnan(v) || !(p.amax > 0)) snprintf(fill, sizeof fill, "#222");
            else {
                int t = (int)lround(255 * (1 - fabs(v) / p.amax));
                snprintf(fill, sizeof fill, v > 0 ? "#ff%02x%02x" : "#%02x%02xff", t, t);
            }
            fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"/>\n",
                    20 + c * px, 20 + r * px, px, px, fill);
        }
    fprintf(f, "<text x=\"20\" y=\"%.0f\" font-family=\"sans-serif\" font-size=\"13\">%dx%d matrix%s</text>\n",
            h + 45, p.m, p.n, p.pattern ? ", pattern (dark: nonzero)" : ", red above 0, blue below, deeper: larger");
    fprintf(f, "</svg>\n");
    err_scratch_free(p.cell);
}

static void plot_matrix(Value a, const char *path)
{
    if (AS_ARR(a)->rows == 0 || AS_ARR(a)->cols == 0) err_raise("plot: the matrix is empty (%s)", mat_describe(a));
    if (path) {
        FILE *f = fopen(path, "w");
        if (!f) err_raise("plot: cannot write '%s'", path);
        matrix_svg(a, f);
        int bad = ferror(f);
        if (fclose(f) != 0 || bad) err_raise("plot: could not write '%s'", path);
        io_out("wrote %s\n", path);
    } else if (G->eval.display) {
        char *svg = NULL, *text = NULL;
        size_t nsvg = 0, ntext = 0;
        io_capture_begin();
        matrix_terminal(a);
        text = io_capture_end(&ntext);
        FILE *f = open_memstream(&svg, &nsvg);
        if (!f) {
            free(text);
            err_raise("plot: out of memory");
        }
        matrix_svg(a, f);
        fclose(f);
        G->eval.display("image/svg+xml", svg, nsvg, text ? text : "");
        free(svg);
        free(text);
    } else matrix_terminal(a);
}

/* ------------------------------------------------------------ builtin */

static const char *svg_path(Value v)
{
    if (v.t != V_STR) err_raise("plot: the last argument must be a file name ending in .svg, got %s", value_type_name(v));
    const char *p = AS_STR(v)->s;
    size_t n = strlen(p);
    if (n < 5 || strcasecmp(p + n - 4, ".svg") != 0)
        err_raise("plot: '%s' is not an .svg file name (plot writes SVG only)", p);
    return p;
}

static double bound(Value v, const char *which)
{
    if (v.t != V_NUM && v.t != V_DUAL) err_raise("plot: %s must be a number, got %s", which, value_type_name(v));
    double d = v_primal(v);
    if (!isfinite(d)) err_raise("plot: %s must be finite, got %s", which, value_num_str(d));
    return d;
}

static Value bi_plot(int argc, Value *argv)
{
    Series s = {0}, term = {0};
    const char *path = NULL;
    if (is_mat(argv[0])) {
        if (argc > 2) err_raise("plot: a matrix takes at most a file name after it: plot(M) or plot(M, \"m.svg\")");
        value_seq_check_numbers(argv[0], "plot");
        plot_matrix(argv[0], argc == 2 ? svg_path(argv[1]) : NULL);
        return nil_val();
    }
    if (is_seq(argv[0])) {
        if (argc > 2) err_raise("plot: an array takes at most a file name after it: plot(a) or plot(a, \"a.svg\")");
        if (argc == 2) path = svg_path(argv[1]);
        sample_array(&s, argv[0]);
    } else if (argv[0].t == V_FN || argv[0].t == V_BUILTIN) {
        if (argc < 3) err_raise("plot: a function needs a range: plot(f, lo, hi)");
        double lo = bound(argv[1], "lo"), hi = bound(argv[2], "hi");
        if (!(lo < hi)) err_raise("plot: lo must be below hi, got %s and %s", value_num_str(lo), value_num_str(hi));
        if (argc == 4) path = svg_path(argv[3]);
        int n = path || G->eval.display ? SVG_SAMPLES : PLOT_W * (plot_utf8() ? 2 : 1);
        sample_function(&s, argv[0], lo, hi, n);
        /* a display's text is the terminal's picture, from the terminal's samples */
        if (!path && G->eval.display) sample_function(&term, argv[0], lo, hi, PLOT_W * (plot_utf8() ? 2 : 1));
    } else err_raise("plot: expects a function or an array, got %s", value_type_name(argv[0]));
    if (path) render_svg(&s, path);
    else if (G->eval.display) display_svg(&s, term.n ? &term : &s);
    else render_terminal(&s);
    series_free(&s);
    series_free(&term);
    return nil_val();
}

static const Builtin plot_builtin = {
    "plot", 1, 4, bi_plot,
    "plot(f, lo, hi) draws f and f' on [lo, hi]; plot(a) an array against its index; plot(M) a matrix (dots for a 0/1 pattern, shades otherwise); "
    "a last argument \"name.svg\" writes an SVG picture. Adds nothing to the tape. "
    "Example: plot(fn(x) => sin(x), -3, 3)"};

void plot_register(void) { builtin_define(&plot_builtin); }
