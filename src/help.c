/* help.c: `:help` for the whole language: keywords, operators, builtins,
 * the standard library, commands and topics, each with a one-line example.
 * Unknown names get the nearest known ones (edit distance). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "help.h"
#include "cmd.h"
#include "eval.h"
#include "builtins.h"
#include "error.h"
#include "state.h"

typedef struct {
    const char *name, *text, *example;
} Entry;

/* The language itself: what the parser knows. */
static const Entry keywords[] = {
    {"if", "if COND { ... }: runs the block when COND (a boolean) is true", "if x > 0 { print(\"positive\") }"},
    {"elif", "elif COND { ... }: another condition after an if (may begin the line after '}')", "if x < 0 { s = -1 } elif x == 0 { s = 0 } else { s = 1 }"},
    {"else", "else { ... }: runs when no condition of the if held (may begin the line after '}')", "if x > 0 { y = x } else { y = -x }"},
    {"while", "while COND { ... }: repeats the block while COND is true", "while x < 100 { x = x * 2 }"},
    {"for", "for NAME in A..B { ... }: NAME runs over the whole numbers A, A+1, ..., B-1; for NAME in ARRAY { ... }: over its elements (a snapshot)", "for i in 0..len(a) { a[i] = a[i] * 2 }; for v in a { print(v) }"},
    {"in", "the 'in' of 'for NAME in A..B' and 'for NAME in ARRAY'", "for k in 1..4 { print(k) }"},
    {"fn", "fn NAME(PARAMS) { ... } names a function; fn(PARAMS) => EXPR and fn(PARAMS) { ... } are anonymous", "fn square(t) { return t * t }"},
    {"=>", "fn(PARAMS) => EXPR: a function whose body is one expression", "cube = fn(t) => t * t * t"},
    {"return", "return [EXPR]: leave the function with EXPR's value (nil without one)", "fn sign_of(x) { if x < 0 { return -1 }; return 1 }"},
    {"break", "break: leave the innermost loop", "while true { x += 1; if x > 10 { break } }"},
    {"continue", "continue: go on with the next round of the innermost loop", "for i in 0..5 { if i == 2 { continue }; print(i) }"},
    {"nograd", "nograd { ... }: runs the block without recording on the tape", "nograd { w = w - 0.1 * d(loss, w) }"},
    {"checkpoint", "checkpoint for/while ...: records the loop as a few saved states, recomputed when differentiated (checkpoint(k): at most k, default 32)", "checkpoint for i in 0..1000000 { h = tanh(w * h + b) }; d(h, w)"},
    {"and", "A and B: true when both booleans are; B is not evaluated when A is false", "if x > 0 and x < 1 { print(\"inside\") }"},
    {"or", "A or B: true when either boolean is; B is not evaluated when A is true", "if x < 0 or x > 1 { print(\"outside\") }"},
    {"not", "not A: the other boolean", "if not (x == 3) { print(\"not 3\") }"},
    {"true", "the boolean true", "done = true"},
    {"false", "the boolean false", "found = false"},
    {"nil", "no value: what a function without return gives; not echoed, not stored in ans", "r = nil"},
};

static const Entry variables[] = {
    {"ans", "the value of the last top-level expression statement (not nil; print(...) leaves it)", "x^2 then d(ans, x)"},
    {"args", "the script's arguments (wengert FILE ARG...), an array of strings", "n = num(args[0])"},
};

static const Entry operators[] = {
    {"+", "addition (elementwise on arrays; an array and a number too)", "[1, 2] + 1      # [2, 3]"},
    {"-", "subtraction, or negation as a prefix", "5 - 2 - 1       # 2"},
    {"*", "multiplication (elementwise on arrays)", "[1, 2] * [3, 4] # [3, 8]"},
    {"/", "division (elementwise on arrays)", "1 / 4           # 0.25"},
    {"%", "floor modulo: the result has the sign of the right operand", "-1 % 3          # 2"},
    {"^", "power, right-associative; the exponent may start with a minus", "2^-1            # 0.5"},
    {"==", "equal (numbers, booleans, strings, nil; not arrays)", "1 + 1 == 2      # true"},
    {"!=", "not equal", "x != 0"},
    {"<", "less than (also <=, >, >=); gives a boolean", "1 < 2           # true"},
    {"=", "assignment: the variable's next version (x@1, x@2, ...)", "x = 2"},
    {"+=", "compound assignment (also -= *= /=); on arrays and views it writes in place", "a[1] *= 3"},
    {"@", "x@k (a digit right after the @): the k-th value assigned to x, to read or to differentiate against; a @ b otherwise: the matrix product", "d(y, x@1); [[1, 2], [3, 4]] @ [1, 1]   # [3, 7]"},
    {"..", "A..B: the whole numbers from A up to B, B left out (in for loops)", "for i in 0..n - 1 { }"},
    {"[ ]", "[a, b, c] makes an array; a[i] reads element i (from 0); a[i:j] copies a part; [[1, 2], [3, 4]] a matrix, m[i, j] its element, m[i] a copy of its row", "a = [1, 2, 3]; a[0] = 5; b = a[1:3]"},
    {"( )", "grouping, and calls: f(x, y)", "(1 + 2) * 3      # 9"},
    {"#", "a comment, to the end of the line", "x = 1   # one"},
    {";", "ends a statement, as a newline does", "x = 1; y = 2"},
};

/* Builtins and library functions: the examples (their text comes from the
 * builtin table and from the ## comments of stdlib/). */
static const Entry examples[] = {
    {"type", NULL, "type([1, 2])            # array"},
    {"print", NULL, "print(\"x is\", x)"},
    {"len", NULL, "len([4, 5, 6])          # 3"},
    {"zeros", NULL, "zeros(3)                # [0, 0, 0]"},
    {"ones", NULL, "ones(2)                 # [1, 1]"},
    {"range", NULL, "range(3)                # [0, 1, 2]"},
    {"sum", NULL, "sum([1, 2, 3])          # 6"},
    {"prod", NULL, "prod([2, 3, 4])         # 24"},
    {"dot", NULL, "dot([1, 2], [3, 4])     # 11"},
    {"ceil", NULL, "ceil(1.2)               # 2"},
    {"round", NULL, "round([1.4, 2.5, 3.5])  # [1, 2, 4]: halves go to the even one"},
    {"min", NULL, "min([3, 1, 2])          # 1"},
    {"max", NULL, "max([1, 5], [4, 2])     # [4, 5]"},
    {"assert", NULL, "assert(len(a) > 0, \"a is empty\")"},
    {"error", NULL, "error(\"bad input\")"},
    {"seed", NULL, "seed(42); r = rand()"},
    {"rand", NULL, "rand(3)                 # three uniform draws"},
    {"randn", NULL, "randn()                 # one standard normal draw"},
    {"bits", NULL, "bits(1)                 # 0x3ff0000000000000"},
    {"frombits", NULL, "frombits(\"0x3ff0000000000000\")   # 1 (in float64)"},
    {"num", NULL, "num(\"2.5\") * 2          # 5"},
    {"detach", NULL, "y = detach(x) * x       # d(y, x) is x"},
    {"view", NULL, "v = view(a, 0, 2); v[0] = 9   # writes a[0]"},
    {"d", NULL, "x = 2; y = x^3; d(y, x)   # 12"},
    {"grad", NULL, "grad(fn(t) => t^3)(2)   # 12"},
    {"jvp", NULL, "jvp(fn(t) => t^3, 2, 1) # 12"},
    {"hvp", NULL, "hvp(fn(t) => t^3, 2, 1) # 12"},
    {"fwdgrad", NULL, "fwdgrad(fn(a) => sum(a * a), [1, 2])   # a random estimate of [2, 4]"},
    {"jacobian", NULL, "jacobian(fn(p) => [p[0] * p[1], p[0]])([2, 3])   # [[3, 2], [1, 0]]"},
    {"hessian", NULL, "hessian(fn(v) => v[0]^2 * v[1])([1, 2])   # [[4, 2], [2, 0]]"},
    {"vjp", NULL, "vjp(fn(v) => [v[0] * v[1], v[1]], [2, 3], [1, 1])   # [3, 3]"},
    {"sparsity", NULL, "sparsity(fn(v) => [v[0] * 2, v[1] + v[2]])([1, 2, 3])   # [[1, 0, 0], [0, 1, 1]]"},
    {"fixedpoint", NULL, "fixedpoint(fn(x) => cos(x), 1)   # 0.7390851332151607"},
    {"plot", NULL, "plot(fn(x) => sin(x), 0, 2 * pi)"},
    {"pi", NULL, "cos(pi)                 # -1"},
    {"help", NULL, ":help grad"},
    {"tape", NULL, ":tape stats"},
    {"backend", NULL, ":backend posit16"},
    {"vars", NULL, ":vars"},
    {"load", NULL, ":load examples/01_first_steps.wg"},
    {"save", NULL, ":save session.wg"},
    {"time", NULL, ":time print(grad(fn(t) => t^3)(2))"},
    {"reset", NULL, ":reset"},
    {"quit", NULL, ":quit"},
    {"relu", NULL, "relu([-1, 2])           # [0, 2]"},
    {"mean", NULL, "mean([1, 2, 3])         # 2"},
    {"norm", NULL, "norm([3, 4])            # 5"},
    {"linspace", NULL, "linspace(0, 1, 3)       # [0, 0.5, 1]"},
    {"square", NULL, "square(3)               # 9"},
    {"clip", NULL, "clip(5, 0, 1)           # 1"},
    {"sgd", NULL, "sgd(fn(w) => (w - 3)^2, 0, 0.1, 100)   # close to 3"},
    {"adam", NULL, "adam(fn(w) => (w - 3)^2, 0, 0.1, 500)  # close to 3"},
    {"fdiff", NULL, "fdiff(fn(t) => t^2, 3, 1e-5)   # about 6"},
    {"fdcheck", NULL, "fdcheck(fn(t) => sin(t), 1)    # tiny: grad agrees"},
    {"check", NULL, "check(\"1a\", 2 * 3, 6, \"multiply\")   # exercise 1a is right: 6"},
    {"check_close", NULL, "check_close(\"2b\", 3.14, pi, 0.01, \"about pi\")   # exercise 2b is right: 3.14"},
    {"logsumexp", NULL, "logsumexp([0, 0])       # 0.6931471805599453"},
    {"argmin", NULL, "argmin([3, 1, 2, 1])    # 1 (the first of equal ones)"},
    {"argmax", NULL, "argmax([[1, 5], [7, 2]], 2)   # [[1], [0]] (one a row)"},
    {"lgamma", NULL, "lgamma(5)               # log(24) = 3.1780538303471"},
    {"take", NULL, "take([10, 20, 30], [2, 0])   # [30, 10]"},
    {"shape", NULL, "shape([[1, 2, 3], [4, 5, 6]])   # [2, 3]"},
    {"reshape", NULL, "reshape([1, 2, 3, 4], 2, 2)     # [[1, 2], [3, 4]]"},
    {"eye", NULL, "eye(2) @ [5, 6]         # [5, 6]"},
    {"transpose", NULL, "transpose([[1, 2]])     # [[1], [2]]"},
    {"row", NULL, "m = zeros(2, 2); r = row(m, 0); r += 1   # m is [[1, 1], [0, 0]]"},
    {"col", NULL, "m = zeros(2, 2); c = col(m, 1); c[0] = 5   # m is [[0, 5], [0, 0]]"},
};

static const Entry topics[] = {
    {"syntax",
     "  x = 2; x += 1            assignment, compound assignment (+= -= *= /=)\n"
     "  a = [1, 2, 3]; a[0] = 5  arrays (indexing from 0), a[1:3] is a copy\n"
     "  v = view(a, 0, 2, 1)     a view aliases a's elements: v[0] = 1 writes a\n"
     "  m = [[1, 2], [3, 4]]     a matrix: m[1, 0], row(m, 0), col(m, 1), m @ m, transpose(m)\n"
     "  if c { } elif d { } else { }    while c { }    for i in 0..n { }    for v in a { }\n"
     "  fn f(x) { return x * x }   g = fn(x) => x + 1   break  continue  return\n"
     "  operators: or and not  < <= > >= == !=  + -  * / % @  unary -  ^  (loosest first)\n"
     "  x@k is the k-th value assigned to x; nograd { } runs without recording",
     "fn f(x) { return x * x }; print(f(3))"},
    {"derivatives",
     "  d(y, x)        dy/dx by a reverse sweep over the session tape (also x@k, a, a[i])\n"
     "  d(d(y, x), x)  derivatives are recorded too: any order\n"
     "  grad(f)        the gradient function of f; nests without perturbation confusion\n"
     "  jvp(f, x, v)   forward mode, no tape; fwdgrad(f, x) forward gradient\n"
     "  hvp(f, x, v)   Hessian-vector product;  detach(x), nograd { } stop recording\n"
     "  jacobian(f)    x => the m x n matrix (fwd or rev by shape; \"sparse\" colours it); hessian(f),\n"
     "                 jacobian(f, \"sparse\", \"triplets\"): only the nonzeros (rows, cols, values),\n"
     "                 vjp(f, x, u), sparsity(f); :tape stats shows a sparse one's passes\n"
     "  checkpoint for/while ...  a long loop kept as a few saved states, recomputed by d\n"
     "  fixedpoint(g, x0)  x* = g(x*) by iteration; its derivatives by the implicit function theorem\n"
     "  :tape shows the record; :tape stats its size",
     "x = 2; y = x*x + sin(x); d(y, x)"},
    {"backends",
     "  float64 (default), float32, float16, bfloat16: IEEE, round to nearest even\n"
     "  posit8, posit16, posit32: Posit Standard 2022 (es = 2), NaR, quire sums\n"
     "  literals round once from their decimal value; stored values keep their bits\n"
     "  bits(x) shows the bit pattern, frombits(\"0x...\") makes a value\n"
     "  :backend NAME switches; wengert --backend NAME starts in one",
     ":backend posit16; print(1/3, bits(1/3))"},
    {"repl",
     "  a bare expression echoes its value and becomes ans; Tab completes names\n"
     "  an error shows where, and the calls it happened in; the session stays\n"
     "  Ctrl-C stops a long computation; history in ~/.wengert_history\n"
     "  :save FILE writes the inputs that worked as a script",
     "x^2 then d(ans, x)"},
    {"commandline",
     "  wengert FILE ARG...   run a script; it sees args, an array of strings\n"
     "  wengert -e CODE ...   run code (repeatable, before FILE); -- ARG... for args\n"
     "  wengert -i FILE       the script, then the REPL;  - reads the script from stdin\n"
     "  --backend NAME, --color=auto|always|never, --help; man wengert",
     "wengert -e 'print(num(args[0]) * 2)' -- 21"},
};

#define COUNT(t) (int)(sizeof t / sizeof t[0])

static const Entry *find(const Entry *t, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(t[i].name, name)) return &t[i];
    return NULL;
}

static void show(const char *text, const char *example)
{
    io_out("%s\n", text);
    if (example) io_out("  example: %s\n", example);
}

/* Every name :help knows, in one sequence (for suggestions and completion). */
const char *help_word(int i)
{
    if (i < COUNT(keywords)) return keywords[i].name;
    i -= COUNT(keywords);
    if (i < COUNT(operators)) return operators[i].name;
    i -= COUNT(operators);
    if (i < COUNT(variables)) return variables[i].name;
    i -= COUNT(variables);
    if (i < COUNT(topics)) return topics[i].name;
    i -= COUNT(topics);
    if (i-- == 0) return "operators";
    const char *c = cmd_name(i);
    if (c) return c;
    for (int k = 0; cmd_name(k); k++) i--;
    const Builtin *b = builtin_list(i);
    if (b) return b->name;
    for (int k = 0; builtin_list(k); k++) i--;
    return cmd_lib_name(i);
}

/* Levenshtein distance, for "did you mean". */
static int distance(const char *a, const char *b)
{
    int n = (int)strlen(b), row[64];
    if (n > 62 || strlen(a) > 62) return 99;
    for (int j = 0; j <= n; j++) row[j] = j;
    for (int i = 1; a[i - 1]; i++) {
        int diag = row[0];
        row[0] = i;
        for (int j = 1; j <= n; j++) {
            int up = row[j];
            int best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[n];
}

static _Noreturn void unknown(const char *topic)
{
    char near[256] = "";
    int best = 3;
    for (int i = 0; help_word(i); i++) {
        int dist = distance(topic, help_word(i));
        if (dist < best) best = dist;
    }
    int shown = 0;
    for (int i = 0; help_word(i) && shown < 3; i++) {
        const char *w = help_word(i);
        if (distance(topic, w) != best || strstr(near, w)) continue;
        size_t len = strlen(near);
        snprintf(near + len, sizeof near - len, "%s'%s'", shown ? ", " : "", w);
        shown++;
    }
    if (shown) err_raise("no help for '%s'; did you mean %s?", topic, near);
    err_raise("no help for '%s' (:help lists the names)", topic);
}

/* A list of names, wrapped at 78 columns under a label. */
static void wrapped(const char *label, const char *(*name)(int))
{
    int col = io_out("%-11s", label);
    for (int i = 0; name(i); i++) {
        int len = (int)strlen(name(i));
        if (col + len + 1 > 78) col = io_out("\n%11s", "") - 1;
        col += io_out(" %s", name(i));
    }
    io_out("\n");
}

static const char *keyword_name(int i) { return i < COUNT(keywords) ? keywords[i].name : NULL; }

const char *help_keyword(int i)
{
    for (int k = 0; k < COUNT(keywords); k++)      /* words only, not => */
        if (strcmp(keywords[k].name, "=>") && i-- == 0) return keywords[k].name;
    return NULL;
}
/* Every operator, those that share an entry too (<= > >= -= *= /=). */
static const char *const all_operators[] = {
    "+", "-", "*", "/", "%", "^", "==", "!=", "<", "<=", ">", ">=", "and", "or", "not",
    "=", "+=", "-=", "*=", "/=", "@", "..", "[ ]", "( )", "=>", "#", ";",
};
static const char *operator_name(int i) { return i < COUNT(all_operators) ? all_operators[i] : NULL; }
static const char *variable_name(int i) { return i < COUNT(variables) ? variables[i].name : i == COUNT(variables) ? "pi" : NULL; }
static const char *topic_name(int i) { return i < COUNT(topics) ? topics[i].name : i == COUNT(topics) ? "operators" : NULL; }
static const char *builtin_name(int i) { return builtin_list(i) ? builtin_list(i)->name : NULL; }
static const char *command_name(int i)
{
    if (!cmd_name(i)) return NULL;
    snprintf(G->help.name, sizeof G->help.name, ":%s", cmd_name(i));
    return G->help.name;
}

static void overview(void)
{
    io_out("wengert: every number can be differentiated.  :help NAME explains any name below.\n");
    wrapped("commands:", command_name);
    wrapped("keywords:", keyword_name);
    wrapped("operators:", operator_name);
    wrapped("variables:", variable_name);
    wrapped("builtins:", builtin_name);
    wrapped("library:", cmd_lib_name);
    wrapped("topics:", topic_name);
    io_out("example:    x = 2; y = x*x + sin(x); d(y, x)     (then :help derivatives)\n");
}

void help_show(const char *topic)
{
    if (!topic[0]) { overview(); return; }
    const Entry *e;
    if (!strcmp(topic, "operators")) {
        io_out("operators (loosest first: or, and, not, comparisons, + -, * / %%, unary -, ^):\n");
        for (int i = 0; i < COUNT(all_operators); i++) {
            const char *w = all_operators[i];
            e = find(operators, COUNT(operators), w);
            if (!e) e = find(keywords, COUNT(keywords), w);
            if (e) io_out("  %-5s %s\n", w, e->text);
        }
        io_out("  example: 2^3 - 4 / 2 * 3 < 2 or not true   # (8 - 6) < 2 or false: false\n");
        return;
    }
    if ((e = find(topics, COUNT(topics), topic))) {
        io_out("%s:\n", topic);
        show(e->text, e->example);
        return;
    }
    if ((e = find(keywords, COUNT(keywords), topic)) || (e = find(operators, COUNT(operators), topic))
        || (e = find(variables, COUNT(variables), topic))) {
        io_out("%s: ", topic);
        show(e->text, e->example);
        return;
    }
    /* the other comparisons and compound assignments share an entry */
    static const char *const same[][2] = {{"<=", "<"}, {">", "<"}, {">=", "<"}, {"-=", "+="}, {"*=", "+="},
                                          {"/=", "+="}, {"[", "[ ]"}, {"]", "[ ]"}, {"[]", "[ ]"}, {"(", "( )"}, {")", "( )"}};
    for (int i = 0; i < COUNT(same); i++)
        if (!strcmp(topic, same[i][0])) {
            e = find(operators, COUNT(operators), same[i][1]);
            io_out("%s: ", topic);
            show(e->text, e->example);
            return;
        }
    const char *text = cmd_help_text(topic);
    if (text) {
        char name[64];
        snprintf(name, sizeof name, "%s", topic[0] == ':' ? topic + 1 : topic);
        if (!strcmp(name, "save!")) name[4] = 0;
        e = find(examples, COUNT(examples), name);
        show(text, e ? e->example : builtin_op_example(name));
        return;
    }
    unknown(topic);
}
