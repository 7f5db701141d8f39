/*
 * ptx_parse.c: PTX text to the decoded IR of ptx_ir.h, once per module.
 *
 * Written from NVIDIA's PTX ISA document: a module is directives
 * (.version, .target, .address_size, .file, .section, .pragma), variables
 * in the .global/.const/.shared spaces, and functions (.entry kernels,
 * .func device functions) whose bodies are declarations (.reg, .local,
 * .param, .shared), labels and instructions ("@p op.mods d, a, b;").
 * Invariants:
 * - Parsing never fails a whole module for one function it cannot read: a
 *   function it cannot read keeps the reason (ptx_func.error) and only its
 *   launches fail; a statement it cannot decode becomes PI_UNSUPPORTED.
 * - A name declared again in an inner block ({ .param .b32 param0; })
 *   names the newest declaration from there on, which is what the nested
 *   call sequences nvcc writes need.
 * - Every index the IR holds is checked here (ptx_ir.h's invariants).
 */
#include "ptx.h"
#include "ptx_ir.h"
#include "ptx_sync.h"

#include <assert.h>
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- tokens ---------------------------------------------------------------- */

typedef struct tok {
    const char *s;
    uint32_t len, line;
} tok;

typedef struct lexer {
    tok *t;
    size_t n, cap, at;
} lexer;

static bool word_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '$' || c == '%' || c == '.';
}

static bool lex_push(lexer *lx, const char *s, size_t len, uint32_t line)
{
    if (lx->n == lx->cap) {
        size_t cap = lx->cap ? 2 * lx->cap : 4096;
        tok *t = realloc(lx->t, cap * sizeof *t);
        if (!t)
            return false;
        lx->t = t;
        lx->cap = cap;
    }
    lx->t[lx->n++] = (tok){s, (uint32_t)len, line};
    return true;
}

/* A word runs over word characters, "::" (ld.global.L1::no_allocate) and
   an exponent's sign (1.5e-3). */
static size_t word_len(const char *p, const char *end)
{
    const char *q = p;
    while (q < end) {
        if (word_char(*q))
            q++;
        else if (*q == ':' && q + 1 < end && q[1] == ':')
            q += 2;
        else if ((*q == '-' || *q == '+') && q > p && (q[-1] == 'e' || q[-1] == 'E') && isdigit((unsigned char)*p) &&
                 !(p[0] == '0' &&
                   (p[1] == 'x' || p[1] == 'X' || p[1] == 'f' || p[1] == 'F' || p[1] == 'd' || p[1] == 'D')))
            q++;
        else
            break;
    }
    return (size_t)(q - p);
}

static bool lex(lexer *lx, const char *text, size_t n)
{
    const char *p = text, *end = text + n;
    uint32_t line = 1;
    while (p < end && *p) {
        if (*p == '\n') {
            line++;
            p++;
        } else if (isspace((unsigned char)*p)) {
            p++;
        } else if (p[0] == '/' && p + 1 < end && p[1] == '/') {
            while (p < end && *p != '\n')
                p++;
        } else if (p[0] == '/' && p + 1 < end && p[1] == '*') {
            for (p += 2; p + 1 < end && !(p[0] == '*' && p[1] == '/'); p++)
                line += *p == '\n';
            p += 2;
        } else if (*p == '"') {
            const char *q = p + 1;
            while (q < end && *q != '"' && *q != '\n')
                q += (*q == '\\' && q + 1 < end) ? 2 : 1;
            if (!lex_push(lx, p, (size_t)(q - p + 1), line))
                return false;
            p = q + 1;
        } else if (word_char(*p)) {
            size_t len = word_len(p, end);
            if (!lex_push(lx, p, len, line))
                return false;
            p += len;
        } else {
            if (!lex_push(lx, p, 1, line))
                return false;
            p++;
        }
    }
    return true;
}

/* ---- the parser's state ------------------------------------------------------ */

typedef struct name_slot {
    const char *s;
    uint32_t len;
    int32_t kind; /* 1 register, 2 symbol, 3 label */
    int32_t index;
} name_slot;

typedef struct names { /* open addressing; a redeclaration overwrites */
    name_slot *slot;
    size_t cap, n;
} names;

typedef struct parser {
    lexer lx;
    fc_ptx_module *m;
    char err[256];
    bool failed;
    /* the function being read */
    ptx_func *fn;
    names local;
    size_t insn_cap, sym_cap;
    /* unresolved label operands: (insn, operand) pairs with their name */
    struct fixup {
        uint32_t insn, opnd;
        tok name;
    } * fix;
    size_t nfix, fix_cap;
} parser;

static uint64_t hash_name(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static name_slot *names_find(names *t, const char *s, size_t len)
{
    if (!t->cap)
        return NULL;
    for (size_t i = hash_name(s, len) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
        name_slot *e = &t->slot[i];
        if (!e->s)
            return NULL;
        if (e->len == len && memcmp(e->s, s, len) == 0)
            return e;
    }
}

static bool names_put(names *t, const char *s, size_t len, int kind, int index)
{
    if (2 * (t->n + 1) > t->cap) {
        names old = *t;
        t->cap = old.cap ? 2 * old.cap : 256;
        t->n = 0;
        if (!(t->slot = calloc(t->cap, sizeof *t->slot))) {
            t->slot = old.slot;
            t->cap = old.cap;
            return false;
        }
        for (size_t i = 0; i < old.cap; i++)
            if (old.slot[i].s)
                names_put(t, old.slot[i].s, old.slot[i].len, old.slot[i].kind, old.slot[i].index);
        free(old.slot);
    }
    for (size_t i = hash_name(s, len) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
        name_slot *e = &t->slot[i];
        if (!e->s || (e->len == len && memcmp(e->s, s, len) == 0)) {
            if (!e->s)
                t->n++;
            *e = (name_slot){s, (uint32_t)len, kind, index};
            return true;
        }
    }
}

static void fail(parser *p, uint32_t line, const char *fmt, ...)
{
    if (p->failed)
        return;
    p->failed = true;
    va_list ap;
    va_start(ap, fmt);
    int k = snprintf(p->err, sizeof p->err, "line %u: ", line);
    vsnprintf(p->err + k, sizeof p->err - (size_t)k, fmt, ap);
    va_end(ap);
}

static const tok *peek(parser *p)
{
    static const tok eof = {"", 0, 0};
    return p->lx.at < p->lx.n ? &p->lx.t[p->lx.at] : &eof;
}

static const tok *next(parser *p)
{
    const tok *t = peek(p);
    if (p->lx.at < p->lx.n)
        p->lx.at++;
    return t;
}

static bool is(const tok *t, const char *w)
{
    return t->len == strlen(w) && memcmp(t->s, w, t->len) == 0;
}

static bool accept(parser *p, const char *w)
{
    if (!is(peek(p), w))
        return false;
    next(p);
    return true;
}

static bool expect(parser *p, const char *w)
{
    if (accept(p, w))
        return true;
    fail(p, peek(p)->line, "expected '%s', found '%.*s'", w, (int)peek(p)->len, peek(p)->s);
    return false;
}

static char *dup_tok(const tok *t)
{
    char *s = malloc(t->len + 1u);
    if (s) {
        memcpy(s, t->s, t->len);
        s[t->len] = '\0';
    }
    return s;
}

/* ---- numbers ------------------------------------------------------------------ */

typedef struct literal {
    bool ok, is_float;
    uint8_t fbits; /* 32: 0f hex, 64: 0d hex, 0: decimal (a double) */
    uint64_t bits; /* integer value, or the float's bits */
    double value;  /* decimal float */
} literal;

static literal parse_number(const char *s, size_t len)
{
    literal l = {0};
    char buf[80];
    if (len == 0 || len >= sizeof buf)
        return l;
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (len == 10 && buf[0] == '0' && (buf[1] == 'f' || buf[1] == 'F')) {
        l.ok = l.is_float = true;
        l.fbits = 32;
        l.bits = strtoull(buf + 2, NULL, 16);
        return l;
    }
    if (len == 18 && buf[0] == '0' && (buf[1] == 'd' || buf[1] == 'D')) {
        l.ok = l.is_float = true;
        l.fbits = 64;
        l.bits = strtoull(buf + 2, NULL, 16);
        return l;
    }
    char *end;
    bool hex = buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X');
    if (!hex && (strchr(buf, '.') || strchr(buf, 'e') || strchr(buf, 'E'))) {
        l.value = strtod(buf, &end);
        l.ok = l.is_float = *end == '\0';
        return l;
    }
    if (hex)
        l.bits = strtoull(buf + 2, &end, 16);
    else if (buf[0] == '0' && len > 1 && isdigit((unsigned char)buf[1]))
        l.bits = strtoull(buf + 1, &end, 8);
    else
        l.bits = strtoull(buf, &end, 10);
    if (*end == 'U' || *end == 'u')
        end++;
    l.ok = *end == '\0';
    return l;
}

static bool is_number_start(const tok *t)
{
    return t->len &&
           (isdigit((unsigned char)t->s[0]) || (t->s[0] == '.' && t->len > 1 && isdigit((unsigned char)t->s[1])));
}

static float f32_from_bits(uint32_t b)
{
    float f;
    memcpy(&f, &b, 4);
    return f;
}

static double f64_from_bits(uint64_t b)
{
    double d;
    memcpy(&d, &b, 8);
    return d;
}

/* A literal as the raw bits of an operand of type ty. */
static uint64_t literal_bits(literal l, ptx_type ty, bool neg)
{
    double v = l.fbits == 32   ? (double)f32_from_bits((uint32_t)l.bits)
               : l.fbits == 64 ? f64_from_bits(l.bits)
               : l.is_float    ? l.value
                               : (double)(int64_t)l.bits;
    if (neg)
        v = -v;
    if (ty == PT_F32) { /* an f32 literal (0f...) is exact as a double, so this rounds nothing */
        float f = (float)v;
        uint32_t b;
        memcpy(&b, &f, 4);
        return b;
    }
    if (ty == PT_F64) {
        uint64_t b;
        memcpy(&b, &v, 8);
        return b;
    }
    if (l.is_float && l.fbits == 0) /* a decimal float where bits are wanted */
        return neg ? (uint64_t) - (int64_t)l.value : (uint64_t)(int64_t)l.value;
    return neg ? (uint64_t) - (int64_t)l.bits : l.bits;
}

/* ---- types and modifiers ------------------------------------------------------- */

static const struct {
    const char *name;
    ptx_type type;
} type_names[] = {
    {"b8", PT_B8},         {"b16", PT_B16}, {"b32", PT_B32}, {"b64", PT_B64},     {"u8", PT_U8},
    {"u16", PT_U16},       {"u32", PT_U32}, {"u64", PT_U64}, {"s8", PT_S8},       {"s16", PT_S16},
    {"s32", PT_S32},       {"s64", PT_S64}, {"f16", PT_F16}, {"f16x2", PT_F16X2}, {"bf16", PT_BF16},
    {"bf16x2", PT_BF16X2}, {"f32", PT_F32}, {"f64", PT_F64}, {"pred", PT_PRED},   {"b128", PT_B128},
};

static ptx_type type_of(const char *s, size_t len)
{
    for (size_t i = 0; i < sizeof type_names / sizeof *type_names; i++)
        if (strlen(type_names[i].name) == len && memcmp(type_names[i].name, s, len) == 0)
            return type_names[i].type;
    return PT_NONE;
}

unsigned ptx_type_size(int ty)
{
    static const unsigned char size[] = {
        [PT_B8] = 1,   [PT_B16] = 2,    [PT_B32] = 4, [PT_B64] = 8, [PT_U8] = 1,   [PT_U16] = 2,   [PT_U32] = 4,
        [PT_U64] = 8,  [PT_S8] = 1,     [PT_S16] = 2, [PT_S32] = 4, [PT_S64] = 8,  [PT_F16] = 2,   [PT_F16X2] = 4,
        [PT_BF16] = 2, [PT_BF16X2] = 4, [PT_F32] = 4, [PT_F64] = 8, [PT_PRED] = 1, [PT_B128] = 16,
    };
    return ty > 0 && ty < (int)sizeof size ? size[ty] : 0;
}

static const struct {
    const char *name;
    uint8_t value;
} cmp_names[] =
    {
        {"eq", PC_EQ},   {"ne", PC_NE},   {"lt", PC_LT},   {"le", PC_LE},   {"gt", PC_GT},   {"ge", PC_GE},
        {"lo", PC_LO},   {"ls", PC_LS},   {"hi", PC_HI},   {"hs", PC_HS},   {"equ", PC_EQU}, {"neu", PC_NEU},
        {"ltu", PC_LTU}, {"leu", PC_LEU}, {"gtu", PC_GTU}, {"geu", PC_GEU}, {"num", PC_NUM}, {"nan", PC_NAN},
},
  aop_names[] =
      {
          {"add", PA_ADD},   {"min", PA_MIN}, {"max", PA_MAX}, {"inc", PA_INC}, {"dec", PA_DEC},
          {"exch", PA_EXCH}, {"cas", PA_CAS}, {"and", PA_AND}, {"or", PA_OR},   {"xor", PA_XOR},
},
  rnd_names[] =
      {
          {"rn", PR_RN},   {"rz", PR_RZ},   {"rm", PR_RM},   {"rp", PR_RP},
          {"rni", PR_RNI}, {"rzi", PR_RZI}, {"rmi", PR_RMI}, {"rpi", PR_RPI},
},
  space_names[] = {
      {"global", PS_GLOBAL},     {"const", PS_CONST},        {"shared", PS_SHARED},          {"local", PS_LOCAL},
      {"param", PS_PARAM},       {"shared::cta", PS_SHARED}, {"shared::cluster", PS_SHARED}, {"param::entry", PS_PARAM},
      {"param::func", PS_PARAM},
};

#define LOOKUP(table, s, len, out)                                                                \
    ({                                                                                            \
        bool found_ = false;                                                                      \
        for (size_t i_ = 0; i_ < sizeof(table) / sizeof *(table) && !found_; i_++)                \
            if (strlen((table)[i_].name) == (len) && memcmp((table)[i_].name, (s), (len)) == 0) { \
                *(out) = (table)[i_].value;                                                       \
                found_ = true;                                                                    \
            }                                                                                     \
        found_;                                                                                   \
    })

/* Modifiers that change nothing fakecuda computes: cache and eviction
   hints, memory-consistency qualifiers (one thread runs a launch, in
   program order), .sync/.aligned (the warp runs in lockstep). */
static bool ignored_mod(const char *s, size_t len)
{
    static const char *const words[] = {"ca",      "cg",       "cs",       "lu",       "cv",      "wb",
                                        "wt",      "nc",       "volatile", "relaxed",  "acquire", "release",
                                        "acq_rel", "sc",       "gpu",      "sys",      "cta",     "cluster",
                                        "weak",    "sync",     "aligned",  "noftz",    "full",    "mmio",
                                        "uni",     "L2::128B", "L2::64B",  "L2::256B", "global"};
    if (len > 4 && (memcmp(s, "L1::", 4) == 0 || memcmp(s, "L2::", 4) == 0))
        return true;
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (strlen(words[i]) == len && memcmp(words[i], s, len) == 0)
            return true;
    return false;
}

static ptx_op op_of(const char *s, size_t len)
{
    static const char *const text[] = {
#define PTX_OP(name, t) t,
#include "ptx_ops.def"
#undef PTX_OP
    };
    for (size_t i = 0; i < PI_UNSUPPORTED; i++)
        if (strlen(text[i]) == len && memcmp(text[i], s, len) == 0)
            return (ptx_op)i;
    return PI_UNSUPPORTED;
}

/* Applies one ".word" of an instruction; false when it is not understood. */
static bool apply_mod(ptx_insn *in, const char *s, size_t len, unsigned *ntypes)
{
    uint8_t v;
    ptx_type ty = type_of(s, len);
    if (ty != PT_NONE) {
        if (*ntypes == 0)
            in->type = ty;
        else
            in->type2 = ty;
        ++*ntypes;
        return true;
    }
#define IS(w) (len == sizeof(w) - 1 && memcmp(s, w, len) == 0)
    if (IS("v2") || IS("v4") || IS("v8")) {
        in->vec = (uint8_t)(s[1] - '0');
        return true;
    }
    switch (in->op) {
    case PI_SETP:
    case PI_SET:
    case PI_SLCT:
        if (LOOKUP(cmp_names, s, len, &in->sub))
            return true;
        if (IS("and") || IS("or") || IS("xor")) {
            in->sub2 = IS("and") ? 1 : IS("or") ? 2 : 3;
            return true;
        }
        break;
    case PI_ATOM:
    case PI_RED:
    case PI_REDUX:
        if (LOOKUP(aop_names, s, len, &in->sub))
            return true;
        break;
    case PI_SHFL:
        if (IS("up") || IS("down") || IS("bfly") || IS("idx")) {
            in->sub = IS("up") ? PSH_UP : IS("down") ? PSH_DOWN : IS("bfly") ? PSH_BFLY : PSH_IDX;
            return true;
        }
        break;
    case PI_VOTE:
        if (IS("all") || IS("any") || IS("uni") || IS("ballot")) {
            in->sub = IS("all") ? PV_ALL : IS("any") ? PV_ANY : IS("uni") ? PV_UNI : PV_BALLOT;
            return true;
        }
        break;
    case PI_MATCH:
        if (IS("any") || IS("all")) {
            in->sub = IS("any") ? 1 : 2;
            return true;
        }
        break;
    case PI_BAR:
    case PI_BARRIER:
        if (IS("arrive") || IS("red") || IS("popc") || IS("warp")) {
            in->sub = IS("arrive") ? 1 : IS("red") ? 2 : IS("popc") ? 3 : 4;
            return true;
        }
        if (IS("and") || IS("or")) {
            in->sub2 = IS("and") ? 1 : 2;
            return true;
        }
        break;
    case PI_MUL:
    case PI_MAD:
    case PI_MUL24:
    case PI_MAD24:
        if (IS("hi") || IS("lo") || IS("wide")) {
            in->mods |= IS("hi") ? PM_HI : IS("lo") ? PM_LO : PM_WIDE;
            return true;
        }
        break;
    case PI_TEX: /* the geometry; arrays, cubes, mipmap levels and gradients are not read */
        if (IS("1d") || IS("2d") || IS("3d")) {
            in->sub = (uint8_t)(s[0] - '0');
            return true;
        }
        break;
    case PI_SHF:
        if (IS("l") || IS("r") || IS("wrap") || IS("clamp")) {
            in->mods |= IS("r") ? PM_SHIFTR : IS("clamp") ? PM_CLAMP : 0;
            return true;
        }
        break;
    case PI_PRMT:
        if (IS("f4e") || IS("b4e") || IS("rc8") || IS("ecl") || IS("ecr") || IS("rc16")) {
            in->sub = IS("f4e") ? 1 : IS("b4e") ? 2 : IS("rc8") ? 3 : IS("ecl") ? 4 : IS("ecr") ? 5 : 6;
            return true;
        }
        break;
    case PI_TESTP:
        if (IS("finite") || IS("infinite") || IS("number") || IS("notanumber") || IS("normal") || IS("subnormal")) {
            in->sub = IS("finite")       ? 1
                      : IS("infinite")   ? 2
                      : IS("number")     ? 3
                      : IS("notanumber") ? 4
                      : IS("normal")     ? 5
                                         : 6;
            return true;
        }
        break;
    case PI_BFIND:
        if (IS("shiftamt")) {
            in->sub = 1;
            return true;
        }
        break;
    case PI_MEMBAR:
    case PI_FENCE:
        if (IS("gl") || IS("proxy") || IS("async") || IS("alias") || IS("generic"))
            return true;
        break;
    case PI_CP: /* cp.async: 1 a copy; 2 commit_group; 3 wait_group; 4 wait_all; 5 (6) mbarrier.arrive(.noinc) */
        if (IS("mbarrier") && in->sub == 1) {
            in->sub = 5;
            return true;
        }
        if ((IS("arrive") || IS("noinc")) && in->sub >= 5) {
            in->sub = IS("noinc") ? 6 : in->sub;
            return true;
        }
        if (IS("async") || IS("commit_group") || IS("wait_group") || IS("wait_all")) {
            in->sub = IS("async") ? (in->sub ? in->sub : 1) : IS("commit_group") ? 2 : IS("wait_group") ? 3 : 4;
            return true;
        }
        if (in->sub == 1 && (IS("shared") || IS("shared::cta") || IS("global")))
            return true; /* cp.async's spaces are fixed: shared from global */
        break;
    case PI_MBARRIER: {
        static const struct {
            const char *name;
            uint8_t value;
        } mbar_names[] = {
            {"init", PMB_INIT},
            {"arrive", PMB_ARRIVE},
            {"arrive_drop", PMB_ARRIVE_DROP},
            {"expect_tx", PMB_EXPECT_TX},
            {"complete_tx", PMB_COMPLETE_TX},
            {"test_wait", PMB_TEST_WAIT},
            {"try_wait", PMB_TRY_WAIT},
            {"pending_count", PMB_PENDING_COUNT},
            {"inval", PMB_INVAL},
        };
        if (IS("parity")) {
            in->sub2 |= PMBF_PARITY;
            return true;
        }
        if (IS("expect_tx") && (in->sub == PMB_ARRIVE || in->sub == PMB_ARRIVE_DROP)) {
            in->sub2 |= PMBF_EXPECT_TX;
            return true;
        }
        if (!in->sub && LOOKUP(mbar_names, s, len, &in->sub))
            return true;
        break;
    }
    case PI_LD:
        if (IS("volatile") || IS("relaxed") || IS("acquire")) {
            in->mods |= PM_STRONG;
            return true;
        }
        break;
    case PI_CVTA:
        if (IS("to")) {
            in->mods |= PM_TO;
            return true;
        }
        break;
    case PI_ISSPACEP:
    case PI_PREFETCH:
    case PI_PREFETCHU:
        if (IS("L1") || IS("L2"))
            return true;
        break;
    default: break;
    }
    if (IS("cc")) {
        in->mods |= PM_CC;
        return true;
    }
    if (IS("sat") || IS("satfinite")) {
        in->mods |= PM_SAT;
        return true;
    }
    if (IS("ftz")) {
        in->mods |= PM_FTZ;
        return true;
    }
    if (IS("approx")) {
        in->mods |= PM_APPROX;
        return true;
    }
    if (IS("relu")) {
        in->mods |= PM_RELU;
        return true;
    }
    if (IS("uni")) {
        in->mods |= PM_UNI;
        return true;
    }
    if (IS("abs")) {
        in->mods |= PM_ABS;
        return true;
    }
#undef IS
    if (LOOKUP(rnd_names, s, len, &v)) {
        in->rnd = v;
        return true;
    }
    if (LOOKUP(space_names, s, len, &v) && in->op != PI_MEMBAR && in->op != PI_FENCE) {
        in->space = v;
        return true;
    }
    return ignored_mod(s, len);
}

/* ---- growing arrays ----------------------------------------------------------- */

static bool grow(void **v, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *g = realloc(*v, c * elem);
    if (!g)
        return false;
    memset((char *)g + *cap * elem, 0, (c - *cap) * elem);
    *v = g;
    *cap = c;
    return true;
}

static int32_t add_sym(parser *p, ptx_sym s)
{
    ptx_func *f = p->fn;
    if (!grow((void **)&f->sym, &p->sym_cap, f->nsym + 1u, sizeof *f->sym))
        return -1;
    f->sym[f->nsym] = s;
    return (int32_t)f->nsym++;
}

static uint64_t align_up(uint64_t x, uint64_t a)
{
    return a > 1 ? (x + a - 1) / a * a : x;
}

/* ---- declarations --------------------------------------------------------------- */

typedef struct decl {
    ptx_space space;
    ptx_type type;
    uint32_t align, vec;
    tok name;
    uint64_t count; /* array elements; 1 for a scalar; 0 for "[]" */
    bool array;
    int32_t range; /* %r<N>: N; else -1 */
} decl;

/* Reads ".space [.align N] [.vN] [.ptr ...] .type name[dims]" (the space already read). */
static bool read_decl(parser *p, decl *d)
{
    d->align = 0;
    d->vec = 1;
    d->type = PT_NONE;
    d->range = -1;
    for (;;) {
        const tok *t = peek(p);
        if (t->len < 2 || t->s[0] != '.')
            break;
        next(p);
        if (is(t, ".align")) {
            const tok *n = next(p); /* one statement each: argument order is unspecified */
            d->align = (uint32_t)parse_number(n->s, n->len).bits;
        } else if (is(t, ".v2") || is(t, ".v4")) {
            d->vec = (uint32_t)(t->s[2] - '0');
        } else if (type_of(t->s + 1, t->len - 1u) != PT_NONE) {
            d->type = type_of(t->s + 1, t->len - 1u);
        } else if (!(is(t, ".ptr") || is(t, ".global") || is(t, ".shared") || is(t, ".const") || is(t, ".local") ||
                     is(t, ".attribute") || is(t, ".texref") || is(t, ".surfref") || is(t, ".samplerref"))) {
            fail(p, t->line, "unknown declaration word '%.*s'", (int)t->len, t->s);
            return false;
        }
        if (is(t, ".attribute")) { /* .attribute(.managed) */
            while (!p->failed && !is(peek(p), ")") && peek(p)->len)
                next(p);
            next(p);
        }
    }
    if (d->type == PT_NONE) {
        fail(p, peek(p)->line, "declaration without a type");
        return false;
    }
    d->name = *next(p);
    d->count = 1;
    d->array = false;
    if (accept(p, "<")) {
        d->range = (int32_t)parse_number(peek(p)->s, peek(p)->len).bits;
        next(p);
        expect(p, ">");
    }
    while (accept(p, "[")) {
        d->array = true;
        if (accept(p, "]")) {
            d->count = 0;
            continue;
        }
        literal l = parse_number(peek(p)->s, peek(p)->len);
        next(p);
        d->count *= l.bits;
        expect(p, "]");
    }
    if (!d->align)
        d->align = ptx_type_size(d->type) * d->vec;
    return !p->failed;
}

static uint64_t decl_bytes(const decl *d)
{
    return (uint64_t)ptx_type_size(d->type) * d->vec * d->count;
}

/* "= {a, b, ...}" or "= a": the initial bytes of a variable. */
static int32_t find_func(parser *p, const tok *t);

static bool read_init(parser *p, ptx_var *v, const decl *d)
{
    unsigned elem = ptx_type_size(d->type);
    uint64_t n = 0, cap = v->size;
    if (!(v->init = calloc(1, cap ? cap : 1)))
        return false;
    int depth = 0;
    do {
        const tok *t = peek(p);
        if (is(t, "{")) {
            depth++;
            next(p);
            continue;
        }
        if (is(t, "}")) {
            depth--;
            next(p);
            continue;
        }
        if (is(t, ",")) {
            next(p);
            continue;
        }
        bool neg = accept(p, "-");
        t = next(p);
        int32_t fn = neg || is_number_start(t) ? -1 : find_func(p, t);
        if (fn < 0 && !is_number_start(t)) {
            fail(p, t->line, "initializer '%.*s' not supported", (int)t->len, t->s);
            return false;
        }
        /* a function's name is its address (a vtable's entries) */
        uint64_t bits =
            fn >= 0 ? ptx_func_address((unsigned)fn) : literal_bits(parse_number(t->s, t->len), d->type, neg);
        if ((n + 1) * elem <= cap)
            memcpy(v->init + n * elem, &bits, elem);
        n++;
    } while (depth > 0 && !p->failed);
    if (!v->size) { /* "[] = {...}" sizes the array */
        free(v->init);
        v->init = NULL;
        fail(p, peek(p)->line, "unsized initialised array not supported");
        return false;
    }
    return true;
}

/* A module-level (or function-level .shared) variable. */
static bool module_var(parser *p, ptx_space space, bool is_extern)
{
    decl d = {.space = space};
    if (!read_decl(p, &d))
        return false;
    fc_ptx_module *m = p->m;
    void *vars = m->var;
    size_t cap = m->nvars;
    if (!grow(&vars, &cap, m->nvars + 1u, sizeof *m->var))
        return false;
    m->var = vars;
    ptx_var *v = &m->var[m->nvars];
    *v = (ptx_var){.name = dup_tok(&d.name),
                   .space = (uint8_t)space,
                   .align = d.align,
                   .size = decl_bytes(&d),
                   .is_extern = is_extern && !(space == PS_SHARED && d.count == 0)};
    if (!v->name)
        return false;
    m->nvars++;
    if (accept(p, "=") && !read_init(p, v, &d))
        return false;
    return expect(p, ";");
}

/* ---- operands ------------------------------------------------------------------- */

static const struct {
    const char *name;
    uint8_t value;
} sreg_names[] = {
    {"%tid.x", SR_TID_X},
    {"%tid.y", SR_TID_Y},
    {"%tid.z", SR_TID_Z},
    {"%ntid.x", SR_NTID_X},
    {"%ntid.y", SR_NTID_Y},
    {"%ntid.z", SR_NTID_Z},
    {"%ctaid.x", SR_CTAID_X},
    {"%ctaid.y", SR_CTAID_Y},
    {"%ctaid.z", SR_CTAID_Z},
    {"%nctaid.x", SR_NCTAID_X},
    {"%nctaid.y", SR_NCTAID_Y},
    {"%nctaid.z", SR_NCTAID_Z},
    {"%laneid", SR_LANEID},
    {"%warpid", SR_WARPID},
    {"%nwarpid", SR_NWARPID},
    {"%smid", SR_SMID},
    {"%nsmid", SR_NSMID},
    {"%gridid", SR_GRIDID},
    {"%clock", SR_CLOCK},
    {"%clock64", SR_CLOCK64},
    {"%globaltimer", SR_GLOBALTIMER},
    {"%lanemask_eq", SR_LANEMASK_EQ},
    {"%lanemask_lt", SR_LANEMASK_LT},
    {"%lanemask_le", SR_LANEMASK_LE},
    {"%lanemask_gt", SR_LANEMASK_GT},
    {"%lanemask_ge", SR_LANEMASK_GE},
    {"%dynamic_smem_size", SR_DYN_SMEM},
    {"%total_smem_size", SR_TOTAL_SMEM},
    {"%envreg1", SR_ENVREG1},
    {"%envreg2", SR_ENVREG2},
    {"%tid", SR_TID_X}, /* the vector forms are not supported: caught by the .x check below */
};

static int32_t find_var(parser *p, const tok *t)
{
    for (uint32_t i = p->m->nvars; i-- > 0;)
        if (strlen(p->m->var[i].name) == t->len && memcmp(p->m->var[i].name, t->s, t->len) == 0)
            return (int32_t)i;
    return -1;
}

static int32_t find_func(parser *p, const tok *t)
{
    for (uint32_t i = 0; i < p->m->nfuncs; i++)
        if (strlen(p->m->func[i].name) == t->len && memcmp(p->m->func[i].name, t->s, t->len) == 0)
            return (int32_t)i;
    return -1;
}

/* The symbol of a module variable, made once per function and name. */
static int32_t var_sym(parser *p, const tok *t)
{
    int32_t v = find_var(p, t);
    if (v < 0)
        return -1;
    int32_t s = add_sym(p, (ptx_sym){SYM_VAR, p->m->var[v].space, (uint32_t)v, 0});
    if (s >= 0)
        names_put(&p->local, p->m->var[v].name, (uint32_t)strlen(p->m->var[v].name), 2, s);
    return s;
}

/* A name in an operand: a register, a symbol, a function, or (later) a label. */
static bool name_operand(parser *p, ptx_opnd *o, const tok *t, uint32_t insn, uint32_t opnd)
{
    name_slot *e = names_find(&p->local, t->s, t->len);
    if (e && e->kind == 1) {
        o->kind = PO_REG;
        o->reg = e->index;
        return true;
    }
    if (e && e->kind == 2) {
        o->kind = PO_SYM;
        o->sym = e->index;
        return true;
    }
    uint8_t sr = 0;
    if (t->s[0] == '%' && LOOKUP(sreg_names, t->s, t->len, &sr)) {
        o->kind = PO_SREG;
        o->reg = sr;
        return true;
    }
    int32_t s = var_sym(p, t);
    if (s >= 0) {
        o->kind = PO_SYM;
        o->sym = s;
        return true;
    }
    int32_t f = find_func(p, t);
    if (f >= 0) {
        o->kind = PO_FUNC;
        o->imm = (uint64_t)f;
        return true;
    }
    if (t->s[0] == '%') {
        fail(p, t->line, "unknown register '%.*s'", (int)t->len, t->s);
        return false;
    }
    o->kind = PO_LABEL;
    if (!grow((void **)&p->fix, &p->fix_cap, p->nfix + 1, sizeof *p->fix))
        return false;
    p->fix[p->nfix++] = (struct fixup){insn, opnd, *t};
    return true;
}

/* [base], [base+imm], [imm] */
static bool addr_operand(parser *p, ptx_opnd *o, uint32_t insn, uint32_t opnd)
{
    o->kind = PO_ADDR;
    o->reg = -1;
    o->sym = -1;
    const tok *t = next(p);
    if (is_number_start(t)) {
        o->imm = parse_number(t->s, t->len).bits;
    } else {
        ptx_opnd base = {0};
        if (!name_operand(p, &base, t, insn, opnd))
            return false;
        if (base.kind == PO_REG)
            o->reg = base.reg;
        else if (base.kind == PO_SYM)
            o->sym = base.sym;
        else {
            fail(p, t->line, "address base '%.*s' not supported", (int)t->len, t->s);
            return false;
        }
        while (is(peek(p), "+") || is(peek(p), "-")) {
            bool neg = is(next(p), "-");
            if (accept(p, "-"))
                neg = !neg;
            const tok *n = next(p);
            literal l = parse_number(n->s, n->len);
            if (!l.ok) {
                fail(p, n->line, "address offset '%.*s' not supported", (int)n->len, n->s);
                return false;
            }
            o->imm += neg ? (uint64_t) - (int64_t)l.bits : l.bits;
        }
    }
    return expect(p, "]");
}

/* One operand. Immediates are kept as literals until the instruction's type is known. */
static bool operand(parser *p, ptx_opnd *o, literal *lit, bool *lit_neg, uint32_t insn, uint32_t opnd)
{
    const tok *t = next(p);
    if (is(t, "["))
        return addr_operand(p, o, insn, opnd);
    if (is(t, "{")) {
        o->kind = PO_VEC;
        o->vec = 0;
        do {
            const tok *r = next(p);
            if (o->vec == 4) {
                fail(p, r->line, "vector of more than 4 not supported");
                return false;
            }
            ptx_opnd e = {0};
            if (is(r, "_")) {
                o->regs[o->vec++] = -1;
                continue;
            }
            if (opnd > 0 && is_number_start(r)) { /* a source element; only 0 is read (vec_zero_ok) */
                literal zero = parse_number(r->s, r->len);
                if (!zero.ok || zero.is_float || zero.bits != 0) {
                    fail(p, r->line, "vector element '%.*s': an immediate other than 0", (int)r->len, r->s);
                    return false;
                }
                o->regs[o->vec++] = PTX_VEC_ZERO;
                continue;
            }
            if (!name_operand(p, &e, r, insn, opnd) || e.kind != PO_REG) {
                fail(p, r->line, "vector element '%.*s' is not a register", (int)r->len, r->s);
                return false;
            }
            o->regs[o->vec++] = e.reg;
        } while (accept(p, ","));
        return expect(p, "}");
    }
    if (is(t, "!")) {
        o->neg = true;
        t = next(p);
    }
    bool neg = false;
    if (is(t, "-")) {
        neg = true;
        t = next(p);
    }
    if (is_number_start(t)) {
        *lit = parse_number(t->s, t->len);
        *lit_neg = neg;
        if (!lit->ok) {
            fail(p, t->line, "bad number '%.*s'", (int)t->len, t->s);
            return false;
        }
        o->kind = PO_IMM;
        return true;
    }
    if (is(t, "_")) {
        o->kind = PO_SINK;
        return true;
    }
    if (is(t, "WARP_SZ")) { /* PTX's predefined constant */
        *lit = (literal){.ok = true, .bits = 32};
        *lit_neg = neg;
        o->kind = PO_IMM;
        return true;
    }
    if (neg) {
        fail(p, t->line, "negated operand '%.*s' not supported", (int)t->len, t->s);
        return false;
    }
    return name_operand(p, o, t, insn, opnd);
}

/* The type an immediate operand i of in is read as. */
static ptx_type imm_type(const ptx_insn *in, unsigned i)
{
    switch (in->op) {
    case PI_CVT: return (ptx_type)in->type2;
    case PI_SET: return (ptx_type)in->type2;
    case PI_SLCT: return i == 3 ? (ptx_type)in->type2 : (ptx_type)in->type;
    case PI_SHL:
    case PI_SHR:
    case PI_SHF:
    case PI_BFE:
    case PI_BFI: return i >= 2 ? PT_U32 : (ptx_type)in->type;
    default: return (ptx_type)in->type;
    }
}

/* ---- statements -------------------------------------------------------------------- */

static ptx_insn *new_insn(parser *p)
{
    ptx_func *f = p->fn;
    if (!grow((void **)&f->insn, &p->insn_cap, f->ninsn + 1u, sizeof *f->insn))
        return NULL;
    ptx_insn *in = &f->insn[f->ninsn];
    memset(in, 0, sizeof *in);
    in->pred = -1;
    in->vec = 1;
    return in;
}

/* Keeps the text of a statement the parser cannot decode, for the launch's message. */
/* Whether in's immediate vector elements (PTX_VEC_ZERO) are where the
   executor reads them: a mov's packing source. Elsewhere (a store's
   vector) an entry that is no register would be skipped, not written. */
static bool vec_zero_ok(const ptx_insn *in)
{
    for (unsigned i = 0; i < in->nops; i++)
        if (in->o[i].kind == PO_VEC && (in->op != PI_MOV || i != 1))
            for (unsigned e = 0; e < in->o[i].vec; e++)
                if (in->o[i].regs[e] == PTX_VEC_ZERO)
                    return false;
    return true;
}

static void unsupported(parser *p, ptx_insn *in, size_t first, const char *why)
{
    size_t last = p->lx.at;
    while (last < p->lx.n && !is(&p->lx.t[last], ";"))
        last++;
    const char *s = p->lx.t[first].s;
    size_t n = last < p->lx.n ? (size_t)(p->lx.t[last].s - s) : strlen(s);
    if (n > 160)
        n = 160;
    char *text = malloc(n + strlen(why) + 8);
    fc_ptx_module *m = p->m;
    void *strs = m->strings;
    size_t cap = m->nstrings;
    if (text && grow(&strs, &cap, m->nstrings + 1u, sizeof *m->strings)) {
        m->strings = strs;
        snprintf(text, n + strlen(why) + 8, "%.*s (%s)", (int)n, s, why);
        for (char *c = text; *c; c++)
            if (*c == '\n' || *c == '\t')
                *c = ' ';
        m->strings[m->nstrings++] = text;
        in->text = text;
    } else {
        free(text);
        in->text = "(out of memory)";
    }
    in->op = PI_UNSUPPORTED;
    in->nops = 0;
    p->lx.at = last < p->lx.n ? last + 1 : last;
    p->failed = false;
}

/* tex.geom.v4.dtype.ctype {d, d, d, d}, [handle, {coordinates}]; a 64-bit
   register handle (a texture object), as many coordinates as dimensions
   (3d: four, the last unused). */
static bool tex_operands(parser *p, ptx_insn *in, uint32_t index)
{
    literal lit;
    bool neg;
    if (!in->sub || in->vec != 4 || !operand(p, &in->o[0], &lit, &neg, index, 0) || in->o[0].kind != PO_VEC ||
        !expect(p, ",") || !expect(p, "["))
        return false;
    const tok *t = next(p);
    if (!name_operand(p, &in->o[1], t, index, 1) || in->o[1].kind != PO_REG) {
        fail(p, t->line, "texture '%.*s' is not a register (texture references are not supported)", (int)t->len, t->s);
        return false;
    }
    if (!expect(p, ",") || !operand(p, &in->o[2], &lit, &neg, index, 2) || in->o[2].kind != PO_VEC ||
        in->o[2].vec < in->sub || !expect(p, "]"))
        return false;
    for (unsigned k = 0; k < in->sub; k++)
        if (in->o[2].regs[k] < 0)
            return false;
    in->nops = 3;
    return expect(p, ";");
}

/* call[.uni] [(ret),] func[, (args)]; */
static bool call_operands(parser *p, ptx_insn *in)
{
    in->o[0].kind = PO_NONE;
    if (accept(p, "(")) {
        const tok *t = next(p);
        if (!name_operand(p, &in->o[0], t, 0, 0) || in->o[0].kind != PO_SYM) {
            fail(p, t->line, "call return '%.*s' is not a .param", (int)t->len, t->s);
            return false;
        }
        expect(p, ")");
        expect(p, ",");
    }
    const tok *f = next(p);
    if (!name_operand(p, &in->o[1], f, 0, 1) || (in->o[1].kind != PO_FUNC && in->o[1].kind != PO_REG)) {
        fail(p, f->line, "call of '%.*s', neither a function nor a register", (int)f->len, f->s);
        return false;
    }
    bool indirect = in->o[1].kind == PO_REG;
    in->nops = 2;
    if (accept(p, ",") && is(peek(p), "(") && expect(p, "(")) {
        int32_t args[64];
        unsigned n = 0;
        if (!is(peek(p), ")"))
            do {
                const tok *a = next(p);
                ptx_opnd o = {0};
                if (!name_operand(p, &o, a, 0, 0) || o.kind != PO_SYM || n == 64) {
                    fail(p, a->line, "call argument '%.*s' is not a .param", (int)a->len, a->s);
                    return false;
                }
                args[n++] = o.sym;
            } while (accept(p, ","));
        expect(p, ")");
        /* The argument symbols, as a PO_VEC chain over operands 2.. (4 a piece). */
        if (n > 4 * (PTX_MAX_OPS - 2)) {
            fail(p, f->line, "call with %u arguments not supported", n);
            return false;
        }
        for (unsigned i = 0; i < n; i++) {
            ptx_opnd *o = &in->o[2 + i / 4];
            o->kind = PO_VEC;
            o->regs[i % 4] = args[i];
            o->vec = (uint8_t)(i % 4 + 1);
        }
        in->nops = (uint8_t)(2 + (n + 3) / 4);
    }
    /* an indirect call names its prototype or target list: the callee's own
       declaration says what the executor needs (push_frame checks the
       arguments against it) */
    if (indirect) {
        accept(p, ","); /* after an argument list */
        if (!is(peek(p), ";"))
            next(p); /* the prototype's or the target list's label */
    } else if (accept(p, ",")) {
        fail(p, peek(p)->line, "a direct call with a prototype");
        return false;
    }
    return expect(p, ";");
}

static bool instruction(parser *p)
{
    size_t first = p->lx.at;
    ptx_insn *in = new_insn(p);
    if (!in)
        return false;
    uint32_t index = p->fn->ninsn;
    in->line = peek(p)->line;
    if (accept(p, "@")) {
        bool negp = accept(p, "!");
        const tok *t = next(p);
        name_slot *e = names_find(&p->local, t->s, t->len);
        if (!e || e->kind != 1) {
            fail(p, t->line, "guard '%.*s' is not a register", (int)t->len, t->s);
            return false;
        }
        in->pred = e->index;
        in->pred_neg = negp;
    }
    const tok *opt = next(p);
    const char *s = opt->s, *end = opt->s + opt->len, *dot = memchr(s, '.', opt->len);
    in->op = (uint16_t)op_of(s, dot ? (size_t)(dot - s) : opt->len);
    p->fn->ninsn++;
    if (in->op == PI_UNSUPPORTED) {
        unsupported(p, in, first, "unknown instruction");
        return true;
    }
    unsigned ntypes = 0;
    while (dot && dot < end) {
        const char *w = dot + 1, *e = w;
        while (e < end && *e != '.') {
            if (*e == ':' && e + 1 < end && e[1] == ':')
                e++;
            e++;
        }
        if (!apply_mod(in, w, (size_t)(e - w), &ntypes)) {
            unsupported(p, in, first, "unknown modifier");
            return true;
        }
        dot = e;
    }
    if (in->op == PI_TEX) {
        if (!tex_operands(p, in, index))
            unsupported(p, in, first, "texture fetch form");
        return true;
    }
    if (in->op == PI_CALL) {
        if (!call_operands(p, in)) {
            unsupported(p, in, first, p->err);
            return true;
        }
        return true;
    }
    literal lits[PTX_MAX_OPS];
    bool lneg[PTX_MAX_OPS] = {0};
    unsigned n = 0;
    if (!is(peek(p), ";"))
        do {
            if (n == PTX_MAX_OPS - 1) {
                unsupported(p, in, first, "too many operands");
                return true;
            }
            if (!operand(p, &in->o[n], &lits[n], &lneg[n], index, n)) {
                unsupported(p, in, first, p->err);
                return true;
            }
            n++;
            if (accept(p, "|")) { /* d|p: the second destination goes last */
                if (!operand(p, &in->o[PTX_MAX_OPS - 1], &lits[0], &lneg[0], index, PTX_MAX_OPS - 1) ||
                    in->o[PTX_MAX_OPS - 1].kind != PO_REG) {
                    unsupported(p, in, first, "second destination");
                    return true;
                }
            }
        } while (accept(p, ","));
    in->nops = (uint8_t)n;
    if (!vec_zero_ok(in)) {
        unsupported(p, in, first, "an immediate vector element outside a mov's source");
        return true;
    }
    /* an access's address must be one: the executor reads it as [base+offset] */
    unsigned at = in->op == PI_ST || in->op == PI_RED || in->op == PI_CP ? 0 : 1;
    bool access = in->op == PI_LD || in->op == PI_LDU || in->op == PI_ST || in->op == PI_ATOM || in->op == PI_RED ||
                  (in->op == PI_CP && in->sub == 1);
    if (access && (n <= at || in->o[at].kind != PO_ADDR || (in->op == PI_CP && (n < 3 || in->o[1].kind != PO_ADDR)))) {
        p->lx.at = first;
        unsupported(p, in, first, "operands");
        return true;
    }
    for (unsigned i = 0; i < n; i++)
        if (in->o[i].kind == PO_IMM)
            in->o[i].imm = literal_bits(lits[i], imm_type(in, i), lneg[i]);
    if (!expect(p, ";"))
        unsupported(p, in, first, "syntax");
    return true;
}

/* .reg .type names: each %name<N> is N registers %name0..%name(N-1). */
static bool reg_decl(parser *p)
{
    decl d = {0};
    do {
        if (!read_decl(p, &d))
            return false;
        uint32_t count = d.range >= 0 ? (uint32_t)d.range : 1;
        for (uint32_t i = 0; i < count; i++) {
            char buf[128];
            int len = d.range >= 0 ? snprintf(buf, sizeof buf, "%.*s%u", (int)d.name.len, d.name.s, i)
                                   : snprintf(buf, sizeof buf, "%.*s", (int)d.name.len, d.name.s);
            if (len <= 0 || (size_t)len >= sizeof buf)
                return false;
            /* names must outlive the parser's table: kept in the module's strings */
            char *keep = strdup(buf);
            fc_ptx_module *m = p->m;
            void *strs = m->strings;
            size_t cap = m->nstrings;
            if (!keep || !grow(&strs, &cap, m->nstrings + 1u, sizeof *m->strings)) {
                free(keep);
                return false;
            }
            m->strings = strs;
            m->strings[m->nstrings++] = keep;
            names_put(&p->local, keep, (uint32_t)len, 1, (int32_t)p->fn->nregs + (int32_t)(d.vec > 1 ? 0 : 0));
            p->fn->nregs++;
        }
        if (d.vec > 1) {
            fail(p, d.name.line, "vector registers not supported");
            return false;
        }
        /* the next name of the same declaration keeps its type */
        while (accept(p, ",")) {
            const tok *nt = next(p);
            decl more = d;
            more.name = *nt;
            more.range = -1;
            if (accept(p, "<")) {
                more.range = (int32_t)parse_number(peek(p)->s, peek(p)->len).bits;
                next(p);
                expect(p, ">");
            }
            uint32_t c = more.range >= 0 ? (uint32_t)more.range : 1;
            for (uint32_t i = 0; i < c; i++) {
                char buf[128];
                int len = more.range >= 0 ? snprintf(buf, sizeof buf, "%.*s%u", (int)nt->len, nt->s, i)
                                          : snprintf(buf, sizeof buf, "%.*s", (int)nt->len, nt->s);
                char *keep = strdup(buf);
                fc_ptx_module *m = p->m;
                void *strs = m->strings;
                size_t cap = m->nstrings;
                if (!keep || len <= 0 || !grow(&strs, &cap, m->nstrings + 1u, sizeof *m->strings)) {
                    free(keep);
                    return false;
                }
                m->strings = strs;
                m->strings[m->nstrings++] = keep;
                names_put(&p->local, keep, (uint32_t)len, 1, (int32_t)p->fn->nregs++);
            }
        }
    } while (0);
    return expect(p, ";");
}

/* A per-thread slot of the frame: .local variables and .param in a body. */
static bool frame_decl(parser *p, ptx_space space)
{
    decl d = {0};
    if (!read_decl(p, &d))
        return false;
    uint64_t bytes = decl_bytes(&d);
    if (bytes == 0)
        bytes = 8;
    uint64_t off = align_up(p->fn->frame_bytes, d.align ? d.align : 1);
    p->fn->frame_bytes = off + bytes;
    int32_t s = add_sym(p, (ptx_sym){SYM_FRAME, (uint8_t)space, 0, off});
    if (s < 0)
        return false;
    names_put(&p->local, d.name.s, d.name.len, 2, s);
    return expect(p, ";");
}

/* Skips tokens to the end of the source line (.loc has no ';'). */
static void skip_line(parser *p)
{
    uint32_t line = peek(p)->line;
    while (p->lx.at < p->lx.n && peek(p)->line == line)
        next(p);
}

static void skip_statement(parser *p)
{
    while (p->lx.at < p->lx.n && !is(peek(p), ";"))
        next(p);
    next(p);
}

/* Reads a body after its "{"; returns the braces left open (0: read whole). */
static int body(parser *p)
{
    int depth = 1;
    while (depth > 0 && !p->failed) {
        const tok *t = peek(p);
        if (!t->len) {
            fail(p, t->line, "unterminated function body");
            return false;
        }
        if (is(t, "{")) {
            next(p);
            depth++;
        } else if (is(t, "}")) {
            next(p);
            depth--;
        } else if (is(t, ".reg")) {
            next(p);
            reg_decl(p);
        } else if (is(t, ".local") || is(t, ".param")) {
            next(p);
            frame_decl(p, is(t, ".local") ? PS_LOCAL : PS_PARAM);
        } else if (is(t, ".shared")) {
            next(p);
            module_var(p, PS_SHARED, false);
        } else if (is(t, ".loc") || is(t, ".file")) {
            skip_line(p);
        } else if (is(t, ".callprototype") || is(t, ".calltargets")) { /* "label: .callprototype ...;" */
            skip_statement(p);
        } else if (is(t, ".pragma") || is(t, ".maxnreg") || is(t, ".maxntid") || is(t, ".reqntid") ||
                   is(t, ".minnctapersm")) {
            skip_statement(p);
        } else if (p->lx.at + 1 < p->lx.n && is(&p->lx.t[p->lx.at + 1], ":") && t->s[0] != '@') {
            names_put(&p->local, t->s, t->len, 3, (int32_t)p->fn->ninsn);
            next(p);
            next(p);
        } else {
            instruction(p);
        }
    }
    return depth;
}

/* "(.param .type name, ...)": the parameters, laid out from offset 0. */
static bool param_list(parser *p, ptx_param **out, uint32_t *count, uint64_t *bytes, bool frame)
{
    *out = NULL;
    *count = 0;
    *bytes = 0;
    size_t cap = 0;
    if (!accept(p, "("))
        return true;
    if (accept(p, ")"))
        return true;
    do {
        if (!expect(p, ".param") && !(p->failed = false, accept(p, ".reg"))) {
            fail(p, peek(p)->line, "parameter not in .param");
            return false;
        }
        decl d = {0};
        if (!read_decl(p, &d))
            return false;
        uint64_t size = decl_bytes(&d);
        uint64_t off = align_up(frame ? p->fn->frame_bytes : *bytes, d.align ? d.align : 1);
        if (!grow((void **)out, &cap, *count + 1u, sizeof **out))
            return false;
        (*out)[(*count)++] = (ptx_param){off, size};
        if (frame)
            p->fn->frame_bytes = off + size;
        *bytes = off + size;
        int32_t s = add_sym(p, (ptx_sym){frame ? SYM_FRAME : SYM_KPARAM, PS_PARAM, *count - 1, off});
        if (s < 0)
            return false;
        names_put(&p->local, d.name.s, d.name.len, 2, s);
    } while (accept(p, ","));
    return expect(p, ")");
}

static void resolve_labels(parser *p)
{
    for (size_t i = 0; i < p->nfix; i++) {
        struct fixup *x = &p->fix[i];
        name_slot *e = names_find(&p->local, x->name.s, x->name.len);
        if (!e || e->kind != 3) {
            fail(p, x->name.line, "unknown name '%.*s'", (int)x->name.len, x->name.s);
            return;
        }
        p->fn->insn[x->insn].o[x->opnd].imm = (uint64_t)e->index;
    }
}

#ifndef NDEBUG
static bool reg_ok(int32_t r, const ptx_func *f)
{
    return r >= 0 && (uint32_t)r < f->nregs;
}

/* Whether operand o of f is resolved (ptx_ir.h's invariant). */
static bool operand_resolved(const ptx_opnd *o, const fc_ptx_module *m, const ptx_func *f)
{
    switch (o->kind) {
    case PO_REG: return reg_ok(o->reg, f);
    case PO_SREG: return o->reg >= 0 && o->reg < SR_COUNT;
    case PO_ADDR: return (o->reg < 0 || reg_ok(o->reg, f)) && (o->sym < 0 || (uint32_t)o->sym < f->nsym);
    case PO_SYM: return o->sym >= 0 && (uint32_t)o->sym < f->nsym;
    case PO_LABEL: return o->imm < f->ninsn;
    case PO_FUNC: return o->imm < m->nfuncs;
    case PO_VEC:
        for (unsigned i = 0; i < o->vec && i < 4; i++)
            if (o->regs[i] != -1 && o->regs[i] != PTX_VEC_ZERO && !reg_ok(o->regs[i], f))
                return false;
        return o->vec <= 4;
    default: return true;
    }
}

/* Whether every index f holds is in range: its operands, guards and symbols. */
static bool func_resolved(const fc_ptx_module *m, const ptx_func *f)
{
    for (uint32_t i = 0; i < f->ninsn; i++) {
        const ptx_insn *in = &f->insn[i];
        if (in->pred >= 0 && !reg_ok(in->pred, f))
            return false;
        for (unsigned j = 0; j < in->nops && j < PTX_MAX_OPS; j++)
            if (!operand_resolved(&in->o[j], m, f))
                return false;
    }
    for (uint32_t i = 0; i < f->nsym; i++)
        if (f->sym[i].kind == SYM_VAR && f->sym[i].index >= m->nvars)
            return false;
    return true;
}
#endif

static ptx_builtin builtin_of(const char *name)
{
    return strcmp(name, "vprintf") == 0                   ? PB_VPRINTF
           : strcmp(name, "__assertfail") == 0            ? PB_ASSERTFAIL
           : strcmp(name, "malloc") == 0                  ? PB_MALLOC
           : strcmp(name, "free") == 0                    ? PB_FREE
           : strcmp(name, "cudaGraphSetConditional") == 0 ? PB_SETCOND
                                                          : PB_NONE;
}

/* .entry/.func: a declaration, or a definition (a repeated name is the same function). */
static bool function(parser *p, bool entry)
{
    ptx_func tmp = {0};
    /* the function being read; reset by the next function(), never used after it returns */
    // cppcheck-suppress autoVariables
    p->fn = &tmp;
    p->sym_cap = p->insn_cap = 0;
    p->nfix = 0;
    memset(&p->local, 0, sizeof p->local);
    ptx_param *ret = NULL;
    uint64_t rbytes;
    if (!entry && is(peek(p), "(") && !param_list(p, &ret, &tmp.nret, &rbytes, true))
        goto out;
    tmp.ret = ret;
    const tok *name = next(p);
    if (!(tmp.name = dup_tok(name)))
        goto out;
    uint64_t bytes;
    if (!param_list(p, &tmp.param, &tmp.nparams, &bytes, !entry))
        goto out;
    tmp.entry = entry;
    tmp.param_bytes = entry ? bytes : 0;
    while (peek(p)->len && peek(p)->s[0] == '.' && !is(peek(p), ".func") && !is(peek(p), ".entry")) {
        next(p); /* .maxntid 256, 1, 1 and friends */
        while (is_number_start(peek(p)) || is(peek(p), ","))
            next(p);
    }
    /* register the name before the body so that it can call itself */
    int32_t idx = find_func(p, name);
    fc_ptx_module *m = p->m;
    if (idx < 0) {
        void *fs = m->func;
        size_t cap = m->nfuncs;
        if (!grow(&fs, &cap, m->nfuncs + 1u, sizeof *m->func))
            goto out;
        m->func = fs;
        idx = (int32_t)m->nfuncs++;
        m->func[idx] = (ptx_func){.name = strdup(tmp.name), .entry = entry, .builtin = (uint8_t)builtin_of(tmp.name)};
        if (!m->func[idx].name)
            goto out;
    }
    if (accept(p, ";"))
        goto out;
    if (!expect(p, "{"))
        goto out;
    int open = body(p);
    if (!p->failed)
        resolve_labels(p);
    assert((p->failed || func_resolved(m, &tmp)) && "every index the IR holds is checked here");
    ptx_func *f = &m->func[idx];
    free(f->name);
    free(f->param);
    free(f->ret);
    free(f->insn);
    free(f->sym);
    *f = tmp;
    f->defined = true;
    f->builtin = PB_NONE;
    if (p->failed) {
        f->error = strdup(p->err);
        p->failed = false;
        int depth = open; /* skip the rest of the body, if any */
        while (depth > 0 && p->lx.at < p->lx.n) {
            const tok *t = next(p);
            depth += is(t, "{") - is(t, "}");
        }
    }
    free(p->local.slot);
    return true;
out:
    free(p->local.slot);
    free(tmp.name);
    free(tmp.param);
    free(tmp.ret);
    free(tmp.insn);
    free(tmp.sym);
    return !p->failed;
}

static void skip_braces(parser *p)
{
    while (p->lx.at < p->lx.n && !is(peek(p), "{"))
        next(p);
    int depth = 0;
    do {
        const tok *t = next(p);
        depth += is(t, "{") - is(t, "}");
    } while (depth > 0 && p->lx.at < p->lx.n);
}

static bool top_level(parser *p)
{
    bool is_extern = false;
    while (p->lx.at < p->lx.n && !p->failed) {
        const tok *t = next(p);
        if (is(t, ".version") || is(t, ".address_size")) {
            next(p);
        } else if (is(t, ".target")) {
            do
                next(p);
            while (accept(p, ","));
        } else if (is(t, ".file")) {
            next(p);
            next(p);
            while (accept(p, ","))
                next(p);
        } else if (is(t, ".section")) {
            skip_braces(p);
        } else if (is(t, ".pragma")) {
            skip_statement(p);
        } else if (is(t, ".extern")) {
            is_extern = true;
            continue;
        } else if (is(t, ".visible") || is(t, ".weak") || is(t, ".common")) {
            continue;
        } else if (is(t, ".entry") || is(t, ".func")) {
            if (!function(p, is(t, ".entry")))
                return false;
        } else if (is(t, ".global") || is(t, ".const") || is(t, ".shared")) {
            if (!module_var(p, is(t, ".global") ? PS_GLOBAL : is(t, ".const") ? PS_CONST : PS_SHARED, is_extern))
                return false;
        } else if (is(t, ".alias")) {
            skip_statement(p);
        } else {
            fail(p, t->line, "unexpected '%.*s' at module level", (int)t->len, t->s);
            return false;
        }
        is_extern = false;
    }
    return !p->failed;
}

/* Lays out the module's static shared memory: every .shared variable at
   its alignment, in declaration order; extern arrays all start after them. */
static bool layout(fc_ptx_module *m)
{
    if (!(m->var_addr = calloc(m->nvars ? m->nvars : 1, sizeof *m->var_addr)))
        return false;
    uint64_t at = 0, dyn_align = 16;
    for (uint32_t i = 0; i < m->nvars; i++) {
        ptx_var *v = &m->var[i];
        if (v->space != PS_SHARED)
            continue;
        if (v->size == 0) {
            if (v->align > dyn_align)
                dyn_align = v->align;
            continue;
        }
        at = align_up(at, v->align ? v->align : 1);
        m->var_addr[i] = at;
        at += v->size;
    }
    m->shared_static = at;
    m->shared_align = align_up(at, dyn_align);
    for (uint32_t i = 0; i < m->nvars; i++)
        if (m->var[i].space == PS_SHARED && m->var[i].size == 0)
            m->var_addr[i] = m->shared_align;
    return true;
}

fc_ptx_module *fc_ptx_parse(const char *text, size_t n, char *err, size_t errlen)
{
    parser p = {0};
    p.m = calloc(1, sizeof *p.m);
    if (!p.m || !lex(&p.lx, text, n)) {
        snprintf(err, errlen, "out of memory");
        free(p.m);
        free(p.lx.t);
        return NULL;
    }
    bool ok = top_level(&p) && layout(p.m);
    free(p.lx.t);
    free(p.fix);
    if (!ok) {
        snprintf(err, errlen, "%s", p.failed ? p.err : "out of memory");
        fc_ptx_free(p.m);
        return NULL;
    }
    return p.m;
}

void fc_ptx_free(fc_ptx_module *m)
{
    if (!m)
        return;
    for (uint32_t i = 0; i < m->nfuncs; i++) {
        ptx_func *f = &m->func[i];
        free(f->name);
        free(f->insn);
        free(f->sym);
        free(f->param);
        free(f->ret);
        free(f->error);
    }
    for (uint32_t i = 0; i < m->nvars; i++) {
        free(m->var[i].name);
        free(m->var[i].init);
    }
    for (uint32_t i = 0; i < m->nstrings; i++)
        free(m->strings[i]);
    free(m->strings);
    free(m->func);
    free(m->var);
    free(m->var_addr);
    free(m);
}
