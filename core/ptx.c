/*
 * ptx.c - the directions of a PTX kernel's parameters (ptx.h says what is
 * promised), read from its .entry's body.
 *
 * Owns: reading PTX text as far as the question needs (PTX ISA 9.0, as
 * nvcc 13.0 writes it and as inline asm may): finding the entry at the top
 * level, its parameter list, the body's statements (scopes, labels,
 * guards, directives, an opcode and its operands), and what each kind of
 * instruction does with the names it holds.
 *
 * The reading runs backwards.  A node is a parameter, or a register or
 * symbol the body names; it holds the ways it is used (LOADS, STORES).  An
 * edge d -> s says d is computed from s (or read from parameter s by
 * ld.param), so every use of d is a use of s.  Addresses and escapes mark
 * nodes, and a worklist spreads the marks along the edges to a fixpoint;
 * a parameter's direction is its node's marks.  It is flow-insensitive: a
 * name is one node however often it is assigned, and scopes are not told
 * apart (inline asm's `.reg .pred p` in two blocks is one p), which only
 * adds edges: sound.
 *
 * Invariants:
 * - The lexer never reads at or past end, nor past a NUL: every loop over
 *   bytes stops at one, and lex moves end to it.
 * - A statement ends at a ';' outside all brackets, braces and parentheses;
 *   a ';' inside them, a closing one never opened, two words in a row
 *   within an operand (a ';' gone missing) or text that ends first makes
 *   the body unreadable, so no statement is ever read as part of another.
 * - Every name an instruction holds is a destination (with edges to its
 *   sources), a source, an address marked with what is done through it,
 *   or marked BOTH.  It is passed over only where the instruction moves no
 *   data through it and cannot store it: a prefetch's address, a branch's
 *   label, a barrier's count, the operands after a load's address (cache
 *   policy, stride), a copy's sizes, wmma.store's stride.
 * - A parameter's own name anywhere but as the address of an ld.param that
 *   reads within it takes its address; address arithmetic in the parameter
 *   space reaches every parameter, so then all of them are BOTH.  So does
 *   an ld.param or st.param at any address but a parameter's name or a
 *   .param the body declares (a register, a number).
 * - At most CT_PTX_MAX_PARAMS parameters, CT_PTX_MAX_NAMES nodes and
 *   CT_PTX_MAX_EDGES edges; past any of them the answer is -1.  The
 *   worklist holds a node at most once at a time and a node's marks grow
 *   at most twice, so spreading is linear in nodes and edges.
 */
#include "ptx.h"

#include "ct_hash.h"

#include <assert.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define BOTH CT_PTX_BOTH
#define QUEUED 0x80u      /* a node's flag while the worklist holds it */
#define PARAM_SPACE 0x40u /* a node's flag: a .param the body declares (a call's) */
#define NONE UINT32_MAX
/* One instruction's operands, and the names they hold. */
#define MAX_OPERANDS 256
#define MAX_STMT_NAMES 4096

/* ---- the lexer ----------------------------------------------------------------- */

typedef enum tkind { T_END, T_BAD, T_WORD, T_PUNCT, T_STRING } tkind;

typedef struct token {
    tkind kind;
    bool nl; /* a line ended between it and the token before (in white space or a comment) */
    const char *p;
    size_t n;
} token;

typedef struct lexer {
    const char *p, *end;
} lexer;

/* [A-Za-z0-9_$.%] as a bitmap of ASCII (image.c's tokens). */
static bool is_word_char(unsigned char c)
{
    static const uint64_t word[2] = {0x03ff403000000000, 0x07fffffe87fffffe};
    return c < 128 && (word[c >> 6] >> (c & 63) & 1);
}

/* Past a block comment that opens at lx->p, through its close; false when
 * the text (or a NUL) ends first. */
static bool skip_block_comment(lexer *lx, bool *nl)
{
    for (const char *q = lx->p + 2; q < lx->end && *q; q++) {
        *nl |= *q == '\n';
        if (q[0] == '*' && lx->end - q >= 2 && q[1] == '/') {
            lx->p = q + 2;
            return true;
        }
    }
    return false;
}

/* Past white space and comments; false when a block comment is left open.
 * A line comment stops at its NUL, where lex ends the text. */
static bool skip_blank(lexer *lx, bool *nl)
{
    while (lx->p < lx->end) {
        const char *q = lx->p;
        size_t left = (size_t)(lx->end - q);
        if (*q == '\n') {
            *nl = true;
            lx->p++;
        } else if (*q == ' ' || *q == '\t' || *q == '\r' || *q == '\f' || *q == '\v') {
            lx->p++;
        } else if (left >= 2 && q[0] == '/' && q[1] == '/') {
            while (q < lx->end && *q != '\n' && *q)
                q++;
            lx->p = q;
            if (q < lx->end && !*q)
                return true;
        } else if (left >= 2 && q[0] == '/' && q[1] == '*') {
            if (!skip_block_comment(lx, nl))
                return false;
        } else {
            return true;
        }
    }
    return true;
}

/* Where the word from q ends: "::" goes on with it (ld.shared::cta is one word). */
static const char *word_end(const char *q, const char *end)
{
    for (;;) {
        while (q < end && is_word_char((unsigned char)*q))
            q++;
        if (end - q < 2 || q[0] != ':' || q[1] != ':')
            return q;
        q += 2;
    }
}

/* The next token: a word, a string (escapes skipped), or one character of
 * punctuation; T_BAD for a comment or string left open.  A NUL ends the
 * text: end moves to it. */
static token lex(lexer *lx)
{
    token t = {.kind = T_END};
    if (!skip_blank(lx, &t.nl)) {
        t.kind = T_BAD;
        return t;
    }
    if (lx->p < lx->end && !*lx->p)
        lx->end = lx->p;
    if (lx->p == lx->end)
        return t;
    const char *q = t.p = lx->p;
    if (is_word_char((unsigned char)*q)) {
        t.kind = T_WORD;
        q = word_end(q, lx->end);
    } else if (*q == '"') {
        for (q++; q < lx->end && *q != '"' && *q; q++)
            if (*q == '\\' && lx->end - q > 1 && q[1])
                q++;
        if (q == lx->end || !*q) {
            t.kind = T_BAD;
            return t;
        }
        t.kind = T_STRING;
        q++;
    } else {
        t.kind = T_PUNCT;
        q++;
    }
    t.n = (size_t)(q - t.p);
    lx->p = q;
    return t;
}

static bool is_punct(token t, char c)
{
    return t.kind == T_PUNCT && *t.p == c;
}

static bool is_word(token t, const char *w)
{
    size_t n = strlen(w);
    return t.kind == T_WORD && t.n == n && memcmp(t.p, w, n) == 0;
}

/* A directive word: `d` itself, or `d` with parts glued on (.param.u64). */
static bool is_directive(token t, const char *d)
{
    size_t n = strlen(d);
    return t.kind == T_WORD && t.n >= n && memcmp(t.p, d, n) == 0 && (t.n == n || t.p[n] == '.');
}

/* A register or symbol: PTX names start with a letter, '_', '$' or '%'. */
static bool is_name(token t)
{
    return t.kind == T_WORD && *t.p != '.' && !(*t.p >= '0' && *t.p <= '9');
}

/* An opcode: a word that starts with a letter. */
static bool is_opcode(token t)
{
    return t.kind == T_WORD && ((*t.p >= 'a' && *t.p <= 'z') || (*t.p >= 'A' && *t.p <= 'Z'));
}

static bool is_end(token t)
{
    return t.kind == T_END || t.kind == T_BAD;
}

/* t as a decimal (no leading zero) or 0x number of at most 2^32; false when it is none. */
static bool number(token t, uint64_t *v)
{
    if (t.kind != T_WORD)
        return false;
    const char *p = t.p, *end = t.p + t.n;
    unsigned base = 10;
    if (t.n > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        base = 16;
        p += 2;
    } else if (t.n > 1 && p[0] == '0') {
        return false; /* octal, binary: never an offset nvcc writes */
    }
    uint64_t n = 0;
    for (; p < end; p++) {
        char c = *p;
        unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
                                            : 16;
        if (d >= base || (n = n * base + d) > (1ull << 32))
            return false;
    }
    *v = n;
    return true;
}

/* Is any byte of v b?  (The classic test for a zero byte, on v ^ b.) */
static bool has_byte(uint64_t v, unsigned char b)
{
    uint64_t x = v ^ (0x0101010101010101ull * b);
    return ((x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull) != 0;
}

/* Past the bytes from q that no block's end depends on: all but braces,
 * '/', '"' and NUL, eight at a time while a word of them holds none. */
static const char *skip_plain(const char *q, const char *end)
{
    static const bool stop[256] = {['{'] = true, ['}'] = true, ['/'] = true, ['"'] = true, ['\0'] = true};
    for (uint64_t v; end - q >= 8; q += 8) {
        memcpy(&v, q, sizeof v);
        if (has_byte(v, '{') || has_byte(v, '}') || has_byte(v, '/') || has_byte(v, '"') || has_byte(v, 0))
            break;
    }
    while (q < end && !stop[(unsigned char)*q])
        q++;
    return q;
}

/* Past the '}' that closes a block just opened at the top level (another
 * function's body, a debug section, an initializer), where only braces,
 * comments and strings matter: the hot loop of finding an entry.  False
 * when the text ends inside it. */
static bool skip_block(lexer *lx)
{
    size_t depth = 1;
    while (lx->p < lx->end) {
        const char *q = lx->p = skip_plain(lx->p, lx->end);
        if (q == lx->end || !*q)
            break;
        bool nl = false;
        if (*q == '/') {
            if (!skip_blank(lx, &nl))
                return false;
            if (lx->p == q)
                lx->p++; /* a '/' that opens no comment */
        } else if (*q == '"') {
            if (lex(lx).kind == T_BAD)
                return false;
        } else {
            lx->p++;
            if (*q == '{')
                depth++;
            else if (--depth == 0)
                return true;
        }
    }
    return false;
}

/* ---- names and edges ------------------------------------------------------------- */

typedef struct node {
    const char *p; /* its name in the text; NULL for an instruction's own node */
    uint32_t n, hash;
    uint64_t key; /* a name of at most 8 bytes, zero-padded: compared without the text */
} node;

typedef struct edge {
    uint32_t from, to; /* from is computed from to: to's uses include from's */
} edge;

typedef struct param {
    const char *p;
    size_t n;
    uint64_t size; /* its type's bytes times its count; 0 when its type is none this reader knows */
} param;

/* An operand's shape so far, as a plain address: [name], [name+imm], [name+-imm], [name-imm]. */
enum { SHAPE_START, SHAPE_OPEN, SHAPE_NAME, SHAPE_SIGN, SHAPE_NUMBER, SHAPE_ADDRESS, SHAPE_OTHER };

typedef struct operand {
    uint32_t first, n; /* its names: the statement's names[first, first + n) */
    bool bracket;      /* it holds a '[': a memory operand */
    bool vector;       /* it holds a '{' */
    uint8_t shape;
    bool negative;   /* a plain address's offset is below its name */
    bool after_word; /* its last token was a word */
    uint64_t offset;
} operand;

typedef struct stmt {
    token op;
    unsigned n_ops, n_names;
    unsigned consumed; /* the operand ld.param reads a parameter at; MAX_OPERANDS: none */
    operand ops[MAX_OPERANDS];
    uint32_t names[MAX_STMT_NAMES];
} stmt;

typedef struct analysis {
    unsigned n_params;
    param params[CT_PTX_MAX_PARAMS]; /* nodes 0 .. n_params - 1 */
    node *nodes;
    uint8_t *uses; /* per node: CT_PTX_* marks, QUEUED, PARAM_SPACE */
    size_t n_nodes, nodes_cap;
    uint32_t *slots; /* open addressing: a named node's index + 1, 0 free */
    size_t n_slots;  /* a power of two above twice the nodes */
    edge *edges;
    size_t n_edges, edges_cap;
    bool all_both; /* a parameter's address was taken */
    bool failed;   /* a cap, or memory, ran out: nothing is known */
    stmt s;
} analysis;

static bool room_for_node(analysis *a)
{
    if (a->n_nodes < a->nodes_cap)
        return true;
    if (a->n_nodes >= CT_PTX_MAX_NAMES)
        return false;
    size_t cap = a->nodes_cap ? a->nodes_cap * 2 : 1024;
    node *nodes = realloc(a->nodes, cap * sizeof *nodes);
    if (!nodes)
        return false;
    a->nodes = nodes;
    uint8_t *uses = realloc(a->uses, cap);
    if (!uses)
        return false;
    a->uses = uses;
    a->nodes_cap = cap;
    return true;
}

/* The n bytes at p as a key, when n is at most 8; 0 when longer. */
static uint64_t key_of(const char *p, size_t n)
{
    uint64_t key = 0;
    if (n <= sizeof key)
        memcpy(&key, p, n);
    return key;
}

static uint32_t new_node(analysis *a, const char *p, uint32_t n, uint32_t hash)
{
    if (!room_for_node(a)) {
        a->failed = true;
        return NONE;
    }
    uint32_t k = (uint32_t)a->n_nodes++;
    a->nodes[k] = (node){p, n, hash, p ? key_of(p, n) : 0};
    a->uses[k] = 0;
    return k;
}

/* The slot of slots (mask + 1 of them) that holds the node named by the n
 * bytes at p (key: key_of them), or the free one it would take.  Names of
 * registers are short: their keys alone tell them apart. */
static size_t slot_of(const uint32_t *slots, size_t mask, const node *nodes, const char *p, uint32_t n, uint32_t hash,
                      uint64_t key)
{
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
        if (slots[i] == 0)
            return i;
        const node *k = &nodes[slots[i] - 1];
        if (k->hash == hash && k->n == n && k->key == key && (n <= sizeof key || memcmp(k->p, p, n) == 0))
            return i;
    }
}

/* Twice the slots (at least 2048), every named node in them again. */
static bool rehash(analysis *a)
{
    size_t n_slots = a->n_slots ? a->n_slots * 2 : 2048;
    uint32_t *slots = calloc(n_slots, sizeof *slots);
    if (!slots)
        return false;
    for (size_t i = 0; i < a->n_nodes; i++) {
        const node *k = &a->nodes[i];
        if (k->p)
            slots[slot_of(slots, n_slots - 1, a->nodes, k->p, k->n, k->hash, k->key)] = (uint32_t)i + 1;
    }
    free(a->slots);
    a->slots = slots;
    a->n_slots = n_slots;
    return true;
}

/* The node named by the n bytes at p, made when new; NONE (and failed)
 * past the cap or out of memory. */
static uint32_t node_of(analysis *a, const char *p, size_t n)
{
    if (n > UINT32_MAX || (2 * (a->n_nodes + 1) > a->n_slots && !rehash(a))) {
        a->failed = true;
        return NONE;
    }
    assert(2 * a->n_nodes < a->n_slots && "a free slot ends every probe");
    uint32_t hash = (uint32_t)ct_fnv1a(CT_FNV_OFFSET, p, n);
    size_t i = slot_of(a->slots, a->n_slots - 1, a->nodes, p, (uint32_t)n, hash, key_of(p, n));
    if (a->slots[i])
        return a->slots[i] - 1;
    uint32_t k = new_node(a, p, (uint32_t)n, hash);
    if (k != NONE)
        a->slots[i] = k + 1;
    return k;
}

static void add_edge(analysis *a, uint32_t from, uint32_t to)
{
    if (from == to)
        return;
    if (a->n_edges == a->edges_cap) {
        size_t cap = a->edges_cap ? a->edges_cap * 2 : 4096;
        edge *edges = a->n_edges < CT_PTX_MAX_EDGES ? realloc(a->edges, cap * sizeof *edges) : NULL;
        if (!edges) {
            a->failed = true;
            return;
        }
        a->edges = edges;
        a->edges_cap = cap;
    }
    a->edges[a->n_edges++] = (edge){from, to};
}

/* ---- an instruction's operands ------------------------------------------------------ */

/* The operand's shape after token t (name: t is one; num: t is the number v). */
static void shape_after(operand *o, token t, bool name, bool num, uint64_t v)
{
    uint8_t next = SHAPE_OTHER;
    switch (o->shape) {
    case SHAPE_START:
        if (is_punct(t, '['))
            next = SHAPE_OPEN;
        break;
    case SHAPE_OPEN:
        if (name)
            next = SHAPE_NAME;
        break;
    case SHAPE_NAME:
        if (is_punct(t, ']')) {
            next = SHAPE_ADDRESS;
        } else if (is_punct(t, '+') || is_punct(t, '-')) {
            next = SHAPE_SIGN;
            o->negative = is_punct(t, '-');
        }
        break;
    case SHAPE_SIGN:
        if (num) {
            next = SHAPE_NUMBER;
            o->offset = v;
        } else if (is_punct(t, '-') && !o->negative) {
            next = SHAPE_SIGN; /* [name+-4] */
            o->negative = true;
        }
        break;
    case SHAPE_NUMBER:
        if (is_punct(t, ']'))
            next = SHAPE_ADDRESS;
        break;
    }
    o->shape = next;
}

/* Name t's node into operand o, a vector's component or a special
 * register's part left out (%v.x is %v, %tid.x is %tid). */
static bool add_name(analysis *a, stmt *s, operand *o, token t)
{
    const char *dot = memchr(t.p + 1, '.', t.n - 1);
    size_t n = dot ? (size_t)(dot - t.p) : t.n;
    uint32_t k = s->n_names < MAX_STMT_NAMES ? node_of(a, t.p, n) : NONE;
    if (k == NONE)
        return false;
    s->names[s->n_names++] = k;
    o->n++;
    return true;
}

/* Brackets, braces and parentheses open within a statement. */
typedef struct nesting {
    unsigned square, curly, round;
} nesting;

/* Token t, in operand o; false when the statement cannot be read. */
static bool operand_token(analysis *a, stmt *s, operand *o, nesting *nest, token t)
{
    uint64_t v = 0;
    bool name = is_name(t), num = !name && number(t, &v);
    shape_after(o, t, name, num, v);
    if (t.kind == T_WORD && o->after_word)
        return false; /* two words in a row: a ';' went missing, the next instruction would be read as operands */
    o->after_word = t.kind == T_WORD;
    if (name)
        return add_name(a, s, o, t);
    if (t.kind != T_PUNCT)
        return true;
    switch (*t.p) {
    case '[':
        nest->square++;
        o->bracket = true;
        return true;
    case ']': return nest->square-- > 0;
    case '{':
        nest->curly++;
        o->vector = true;
        return true;
    case '}': return nest->curly-- > 0;
    case '(': nest->round++; return true;
    case ')': return nest->round-- > 0;
    case ';': return false; /* inside a nest: no PTX */
    default: return true;
    }
}

/* The operands after an opcode, through the ';' that ends them; commas
 * inside brackets, braces and parentheses (a call's list) split nothing. */
static bool read_operands(analysis *a, lexer *lx, stmt *s)
{
    nesting nest = {0};
    operand *o = NULL;
    s->n_ops = s->n_names = 0;
    for (;;) {
        token t = lex(lx);
        if (is_end(t))
            return false;
        bool top = !nest.square && !nest.curly && !nest.round;
        if (top && is_punct(t, ';'))
            return true;
        if (top && is_punct(t, ',')) {
            o = NULL;
            continue;
        }
        if (!o) {
            if (s->n_ops == MAX_OPERANDS)
                return false;
            o = &s->ops[s->n_ops++];
            *o = (operand){.first = s->n_names};
        }
        if (!operand_token(a, s, o, &nest, t))
            return false;
        assert(o->first + o->n == s->n_names && "an operand's names are the last ones read");
    }
}

/* ---- opcodes ------------------------------------------------------------------------ */

/* The dot-separated part of word w at *at, *at moved to the next one
 * (NULL after the last); ".param.u64" is "", "param", "u64". */
static bool next_part(token w, const char **at, const char **part, size_t *n)
{
    if (!*at)
        return false;
    const char *end = w.p + w.n;
    const char *dot = memchr(*at, '.', (size_t)(end - *at));
    *part = *at;
    *n = (size_t)((dot ? dot : end) - *at);
    *at = dot ? dot + 1 : NULL;
    return true;
}

/* Is `part` one of op's parts after its base ("param" is in ld.param::entry.u64)? */
static bool has_part(token op, const char *part)
{
    size_t want = strlen(part), n;
    const char *at = op.p, *p;
    next_part(op, &at, &p, &n);
    while (next_part(op, &at, &p, &n))
        if (n >= want && memcmp(p, part, want) == 0 && (n == want || p[want] == ':'))
            return true;
    return false;
}

static bool base_is(token op, const char *base)
{
    size_t want = strlen(base), n;
    const char *at = op.p, *p;
    return next_part(op, &at, &p, &n) && n == want && memcmp(p, base, n) == 0;
}

/* The bytes of a fundamental type's name (b8 ... b128, f16x2); 0 for another word. */
static unsigned type_bytes(const char *w, size_t n)
{
    static const struct {
        const char *name;
        unsigned bytes;
    } types[] = {
        {"b8", 1},   {"u8", 1},  {"s8", 1},  {"b16", 2}, {"u16", 2},   {"s16", 2},   {"f16", 2},
        {"bf16", 2}, {"b32", 4}, {"u32", 4}, {"s32", 4}, {"f32", 4},   {"f16x2", 4}, {"bf16x2", 4},
        {"b64", 8},  {"u64", 8}, {"s64", 8}, {"f64", 8}, {"b128", 16},
    };
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        if (strlen(types[i].name) == n && memcmp(types[i].name, w, n) == 0)
            return types[i].bytes;
    return 0;
}

/* The first type among a word's parts (.param.u64, ld.param.v2.u32); 0 when none. */
static unsigned word_type(token w)
{
    size_t n;
    const char *at = w.p, *p;
    while (next_part(w, &at, &p, &n))
        if (type_bytes(p, n))
            return type_bytes(p, n);
    return 0;
}

/* The bytes an ld.param reads: its vector's count times its type's; 0 when it does not say. */
static uint64_t access_bytes(token op)
{
    unsigned count = has_part(op, "v2") ? 2 : has_part(op, "v4") ? 4 : has_part(op, "v8") ? 8 : 1;
    return (uint64_t)count * word_type(op);
}

typedef enum kind {
    K_DERIVE, /* destinations computed from sources: any opcode not below */
    K_LOAD,   /* ld, ldu, wmma.load: dst, [address], ... */
    K_STORE,  /* st, wmma.store: [address], data... */
    K_ATOM,   /* dst, [address] read and written, data... */
    K_COPY,   /* cp.async [dst], [src], sizes */
    K_CVTA,   /* its space says */
    K_BOTH,   /* every name it holds is BOTH (red, call, multimem, bulk copies, tensor maps) */
    K_NONE,   /* moves no data through its names (prefetch, branches, barriers) */
} kind;

/* Does word w hold `sub` anywhere? */
static bool contains(token w, const char *sub)
{
    size_t n = strlen(sub);
    for (size_t i = 0; i + n <= w.n; i++)
        if (w.p[i] == sub[0] && memcmp(w.p + i, sub, n) == 0)
            return true;
    return false;
}

#define BASE(name, kind)            \
    {                               \
        name, sizeof name - 1, kind \
    }

static kind kind_of(token op)
{
    static const struct {
        const char *name;
        size_t n;
        kind k;
    } bases[] = {
        BASE("ld", K_LOAD),         BASE("ldu", K_LOAD),       BASE("st", K_STORE),     BASE("atom", K_ATOM),
        BASE("red", K_BOTH),        BASE("cp", K_COPY),        BASE("cvta", K_CVTA),    BASE("call", K_BOTH),
        BASE("brx", K_BOTH),        BASE("multimem", K_BOTH),  BASE("wgmma", K_BOTH),   BASE("stackrestore", K_BOTH),
        BASE("prefetch", K_NONE),   BASE("prefetchu", K_NONE), BASE("bra", K_NONE),     BASE("ret", K_NONE),
        BASE("exit", K_NONE),       BASE("trap", K_NONE),      BASE("brkpt", K_NONE),   BASE("membar", K_NONE),
        BASE("fence", K_NONE),      BASE("nanosleep", K_NONE), BASE("pmevent", K_NONE), BASE("griddepcontrol", K_NONE),
        BASE("setmaxnreg", K_NONE), BASE("bar", K_NONE),       BASE("barrier", K_NONE),
    };
    /* cp.async.bulk*, cp.reduce.async.bulk*, st.bulk, tensormap.*, prefetch.tensormap */
    if (contains(op, "bulk") || contains(op, "tensormap"))
        return K_BOTH;
    if (base_is(op, "wmma"))
        return has_part(op, "load") ? K_LOAD : has_part(op, "store") ? K_STORE : K_DERIVE;
    if ((base_is(op, "bar") || base_is(op, "barrier")) && has_part(op, "red"))
        return K_DERIVE; /* bar.red has a destination */
    const char *dot = memchr(op.p, '.', op.n);
    size_t n = dot ? (size_t)(dot - op.p) : op.n;
    for (size_t i = 0; i < sizeof bases / sizeof *bases; i++)
        if (bases[i].n == n && memcmp(bases[i].name, op.p, n) == 0)
            return bases[i].k;
    return K_DERIVE;
}

/* ---- what instructions do ------------------------------------------------------------ */

static void mark_operands(analysis *a, const stmt *s, unsigned from, unsigned to, uint8_t bits)
{
    for (unsigned i = from; i < to; i++)
        for (uint32_t j = 0; j < s->ops[i].n; j++)
            a->uses[s->names[s->ops[i].first + j]] |= bits;
}

static void mark_all(analysis *a, const stmt *s)
{
    mark_operands(a, s, 0, s->n_ops, BOTH);
}

/* Operand i as an address: its name gets bits when it is a plain one;
 * every name in any other is BOTH. */
static void address(analysis *a, const stmt *s, unsigned i, uint8_t bits)
{
    const operand *o = &s->ops[i];
    if (o->shape != SHAPE_ADDRESS) {
        mark_operands(a, s, i, i + 1, BOTH);
        return;
    }
    assert(o->n == 1 && o->bracket && "a plain address holds one name");
    a->uses[s->names[o->first]] |= bits;
}

/* Operand 0's names computed from every other operand's: an edge each, or
 * through a node of the instruction's own when both are several (a
 * vector's worth either way).  A memory operand among the sources is an
 * access this reader does not know, and no destination leaves nothing to
 * follow: BOTH. */
static void derive(analysis *a, const stmt *s)
{
    if (s->n_ops == 0)
        return;
    const operand *d = &s->ops[0];
    if (d->bracket || d->n == 0) {
        mark_all(a, s);
        return;
    }
    uint32_t sources = 0;
    for (unsigned i = 1; i < s->n_ops; i++) {
        if (s->ops[i].bracket)
            mark_operands(a, s, i, i + 1, BOTH);
        else
            sources += s->ops[i].n;
    }
    uint32_t via = d->n > 1 && sources > 1 ? new_node(a, NULL, 0, 0) : NONE;
    if (a->failed)
        return;
    for (uint32_t j = 0; j < d->n; j++) {
        uint32_t from = s->names[d->first + j];
        if (via != NONE) {
            add_edge(a, from, via);
            continue;
        }
        for (unsigned i = 1; i < s->n_ops; i++)
            for (uint32_t k = 0; k < s->ops[i].n && !s->ops[i].bracket; k++)
                add_edge(a, from, s->names[s->ops[i].first + k]);
    }
    for (unsigned i = 1; via != NONE && i < s->n_ops; i++)
        for (uint32_t k = 0; k < s->ops[i].n && !s->ops[i].bracket; k++)
            add_edge(a, via, s->names[s->ops[i].first + k]);
}

/* ld.param dst, [name(+imm)]: the destinations are read from that
 * parameter (a .param the body declares for a call is none of the
 * entry's: nothing).  Any other address (a register, a number), or a read
 * past the parameter's end, may read any parameter: all BOTH. */
static void param_load(analysis *a, stmt *s)
{
    const operand *at = &s->ops[1];
    if (at->shape != SHAPE_ADDRESS) {
        a->all_both = true;
        return;
    }
    uint32_t p = s->names[at->first];
    if (p >= a->n_params) {
        a->all_both |= !(a->uses[p] & PARAM_SPACE); /* a register's address */
        return;
    }
    s->consumed = 1;
    uint64_t bytes = access_bytes(s->op);
    if (at->negative || bytes == 0 || at->offset + bytes > a->params[p].size) {
        a->all_both = true;
        return;
    }
    const operand *d = &s->ops[0];
    for (uint32_t j = 0; j < d->n; j++)
        add_edge(a, s->names[d->first + j], p);
}

/* ld dst, [address], ...: what it reads is memory, not the pointer, so the
 * destinations are computed from nothing here; the operands after the
 * address (a cache policy, wmma's stride) move nothing. */
static void load(analysis *a, stmt *s)
{
    if (s->n_ops < 2 || s->ops[0].bracket || !s->ops[1].bracket)
        mark_all(a, s);
    else if (has_part(s->op, "param"))
        param_load(a, s);
    else
        address(a, s, 1, CT_PTX_LOADS);
}

/* st [address], data...: a pointer stored as data escapes (BOTH).  An
 * st.param's address is a .param the body declares, by name; any other
 * may be an entry's.  wmma.store's last operand is its stride, which moves
 * nothing. */
static void store(analysis *a, const stmt *s)
{
    if (s->n_ops == 0 || !s->ops[0].bracket) {
        mark_all(a, s);
        return;
    }
    const operand *at = &s->ops[0];
    if (has_part(s->op, "param") && (at->shape != SHAPE_ADDRESS || !(a->uses[s->names[at->first]] & PARAM_SPACE)))
        a->all_both = true;
    address(a, s, 0, CT_PTX_STORES);
    unsigned end = s->n_ops;
    const operand *last = &s->ops[end - 1];
    if (base_is(s->op, "wmma") && end >= 3 && !last->vector && !last->bracket)
        end--;
    mark_operands(a, s, 1, end, BOTH);
}

/* atom dst, [address], data...: the address is read and written and the
 * data stored (BOTH); dst is memory's old value, computed from nothing. */
static void atom(analysis *a, const stmt *s)
{
    mark_operands(a, s, s->n_ops && !s->ops[0].bracket ? 1 : 0, s->n_ops, BOTH);
}

/* cp.async [dst], [src], size...: src is loaded, dst stored; its sizes and
 * cache policy move nothing.  Any other cp (cp.async.mbarrier.arrive, a
 * form not known here) is BOTH; waits and commits name nothing. */
static void copy(analysis *a, const stmt *s)
{
    bool async = s->op.n > 9 && memcmp(s->op.p, "cp.async.", 9) == 0;
    if (!async || s->n_ops < 2 || !s->ops[0].bracket || !s->ops[1].bracket) {
        mark_all(a, s);
        return;
    }
    address(a, s, 0, CT_PTX_STORES);
    address(a, s, 1, CT_PTX_LOADS);
}

/* cvta to or from the global space computes an address; from the
 * parameter space it takes a parameter's (all BOTH); to or from shared,
 * local or const it leaves what this reading follows: BOTH. */
static void cvta(analysis *a, const stmt *s)
{
    if (has_part(s->op, "param"))
        a->all_both = true;
    else if (has_part(s->op, "global"))
        derive(a, s);
    else
        mark_all(a, s);
}

/* A parameter named anywhere but where ld.param reads it: its address taken. */
static void params_named(analysis *a, const stmt *s)
{
    for (unsigned i = 0; i < s->n_ops; i++)
        for (uint32_t j = 0; j < s->ops[i].n && i != s->consumed; j++)
            if (s->names[s->ops[i].first + j] < a->n_params)
                a->all_both = true;
}

/* The instruction whose opcode op was read: its operands, and what it does with them. */
static bool instruction(analysis *a, lexer *lx, token op)
{
    stmt *s = &a->s;
    s->op = op;
    s->consumed = MAX_OPERANDS;
    if (!read_operands(a, lx, s))
        return false;
    switch (kind_of(op)) {
    case K_DERIVE: derive(a, s); break;
    case K_LOAD: load(a, s); break;
    case K_STORE: store(a, s); break;
    case K_ATOM: atom(a, s); break;
    case K_COPY: copy(a, s); break;
    case K_CVTA: cvta(a, s); break;
    case K_BOTH: mark_all(a, s); break;
    case K_NONE: break;
    }
    params_named(a, s);
    return !a->failed;
}

/* ---- the body ------------------------------------------------------------------------ */

/* To the ';' that ends a directive, outside anything it opens. */
static bool skip_statement(lexer *lx)
{
    unsigned depth = 0;
    for (;;) {
        token t = lex(lx);
        if (is_end(t))
            return false;
        if (t.kind != T_PUNCT)
            continue;
        if (*t.p == ';')
            return depth == 0;
        if (*t.p == '{' || *t.p == '[' || *t.p == '(')
            depth++;
        else if ((*t.p == '}' || *t.p == ']' || *t.p == ')') && depth-- == 0)
            return false;
    }
}

/* `.loc file line column[, function_name label[, inlined_at file line
 * column]]`, which ends with its line: any other word on it would be an
 * instruction read as part of it. */
static bool loc(lexer *lx)
{
    for (;;) {
        lexer at = *lx;
        token t = lex(lx);
        uint64_t v;
        if (t.kind == T_BAD)
            return false;
        if (t.kind == T_END || t.nl) {
            *lx = at;
            return true;
        }
        if (!number(t, &v) && !is_punct(t, ',') && !is_word(t, "function_name") && !is_word(t, "inlined_at") &&
            !(t.kind == T_WORD && *t.p == '$'))
            return false;
    }
}

/* `.param <attributes> .<type> <name>[<count>];` in a body: a call's
 * parameter (or return value), which ld.param and st.param may name. */
static bool declare_param(analysis *a, lexer *lx)
{
    for (;;) {
        token t = lex(lx);
        if (is_punct(t, ';'))
            return true;
        uint32_t k = is_name(t) ? node_of(a, t.p, t.n) : NONE;
        if (k != NONE)
            a->uses[k] |= PARAM_SPACE;
        else if (a->failed || !(t.kind == T_WORD || is_punct(t, '[') || is_punct(t, ']')))
            return false;
    }
}

/* A directive in a body: declarations and .pragma end at their ';', .loc
 * with its line; one not known here may be anything: unreadable. */
static bool directive(analysis *a, lexer *lx, token d)
{
    static const char *const declarations[] = {
        ".reg", ".local", ".shared", ".const", ".global", ".pragma", ".branchtargets", ".calltargets", ".callprototype",
    };
    if (is_word(d, ".loc"))
        return loc(lx);
    if (is_directive(d, ".param"))
        return declare_param(a, lx);
    for (size_t i = 0; i < sizeof declarations / sizeof *declarations; i++)
        if (is_directive(d, declarations[i]))
            return skip_statement(lx);
    return false;
}

/* One statement from its first token t: an empty one, a label, a guarded
 * instruction (@p, @!p), a directive or an instruction. */
static bool statement(analysis *a, lexer *lx, token t)
{
    if (is_punct(t, ';'))
        return true;
    if (is_punct(t, '@')) {
        t = lex(lx);
        if (is_punct(t, '!'))
            t = lex(lx);
        if (!is_name(t))
            return false;
        t = lex(lx);
        return is_opcode(t) && instruction(a, lx, t);
    }
    if (t.kind == T_WORD && *t.p == '.')
        return directive(a, lx, t);
    if (!is_name(t))
        return false;
    lexer at = *lx;
    if (is_punct(lex(lx), ':'))
        return true;
    *lx = at;
    return is_opcode(t) && instruction(a, lx, t);
}

/* The body from after its '{' through the '}' that closes it; scopes nest. */
static bool read_body(analysis *a, lexer *lx)
{
    size_t depth = 1;
    for (;;) {
        token t = lex(lx);
        if (is_end(t))
            return false;
        if (is_punct(t, '{')) {
            depth++;
        } else if (is_punct(t, '}')) {
            if (--depth == 0)
                return true;
        } else if (!statement(a, lx, t)) {
            return false;
        }
    }
}

/* ---- the entry ------------------------------------------------------------------------ */

/* Past `.entry <entry>` at the top level; false when the text ends (or
 * turns unreadable) first. */
static bool find_entry(lexer *lx, const char *entry)
{
    bool after_entry = false;
    for (;;) {
        token t = lex(lx);
        if (is_end(t))
            return false;
        if (after_entry && is_word(t, entry))
            return true;
        if (is_punct(t, '{') && !skip_block(lx))
            return false;
        after_entry = is_word(t, ".entry");
    }
}

/* One parameter from its first token t: `.param <attributes> .<type>
 * <name>[<count>]`, through the ',' or ')' after it (*last: the ')'). */
static bool read_param(analysis *a, lexer *lx, token t, bool *last)
{
    if (a->n_params == CT_PTX_MAX_PARAMS || !is_directive(t, ".param"))
        return false;
    param *p = &a->params[a->n_params++];
    *p = (param){0};
    uint64_t type = 0, count = 1;
    for (;; t = lex(lx)) {
        uint64_t v;
        if (t.kind == T_WORD && *t.p == '.') {
            type = type ? type : word_type(t);
        } else if (is_name(t) && !p->p) {
            *p = (param){t.p, t.n, 0};
        } else if (is_punct(t, '[') && p->p && count == 1) {
            if (!number(lex(lx), &count) || count == 0 || !is_punct(lex(lx), ']'))
                return false;
        } else if (is_punct(t, ',') || is_punct(t, ')')) {
            *last = is_punct(t, ')');
            p->size = type * count;
            return p->p != NULL;
        } else if (!number(t, &v) || p->p) {
            return false; /* only .align's number comes before the name */
        }
    }
}

/* The parameter list, from after its '(' through its ')'. */
static bool read_params(analysis *a, lexer *lx)
{
    token t = lex(lx);
    if (is_punct(t, ')'))
        return true;
    for (bool last = false;; t = lex(lx)) {
        if (!read_param(a, lx, t, &last))
            return false;
        if (last)
            return true;
    }
}

typedef enum header { HEADER_BODY, HEADER_DECLARATION, HEADER_BAD } header;

/* After the entry's name: its parameters (none when no '(' follows), then
 * its performance directives, to the '{' that opens its body or the ';'
 * that makes it a declaration. */
static header read_header(analysis *a, lexer *lx)
{
    a->n_params = 0;
    token t = lex(lx);
    if (is_punct(t, '(')) {
        if (!read_params(a, lx))
            return HEADER_BAD;
        t = lex(lx);
    }
    for (;; t = lex(lx)) {
        if (is_end(t) || is_punct(t, '}'))
            return HEADER_BAD;
        if (is_punct(t, '{'))
            return HEADER_BODY;
        if (is_punct(t, ';'))
            return HEADER_DECLARATION;
        if (is_word(t, ".pragma") && !skip_statement(lx))
            return HEADER_BAD; /* its ';' ends no declaration */
    }
}

/* The parameters as nodes 0 .. n_params - 1; false when two share a name. */
static bool name_params(analysis *a)
{
    for (unsigned i = 0; i < a->n_params; i++)
        if (node_of(a, a->params[i].p, a->params[i].n) != i)
            return false;
    return true;
}

static bool read_entry(analysis *a, lexer *lx, const char *entry)
{
    header h = HEADER_DECLARATION;
    while (h == HEADER_DECLARATION) {
        if (!find_entry(lx, entry))
            return false;
        h = read_header(a, lx);
    }
    return h == HEADER_BODY && name_params(a) && read_body(a, lx) && !a->failed;
}

/* ---- the fixpoint --------------------------------------------------------------------- */

/* Each node's marks onto the nodes it is computed from (to[start[d] ..
 * start[d + 1]) for node d), until none grows. */
static void spread(analysis *a, const uint32_t *start, const uint32_t *to, uint32_t *stack)
{
    size_t sp = 0;
    for (uint32_t i = 0; i < a->n_nodes; i++)
        if (a->uses[i] & BOTH) {
            a->uses[i] |= QUEUED;
            stack[sp++] = i;
        }
    while (sp) {
        uint32_t d = stack[--sp];
        a->uses[d] &= (uint8_t)~QUEUED;
        uint8_t bits = a->uses[d] & BOTH;
        for (uint32_t j = start[d]; j < start[d + 1]; j++) {
            uint32_t s = to[j];
            if ((bits & ~a->uses[s]) == 0)
                continue;
            a->uses[s] |= bits;
            if (!(a->uses[s] & QUEUED)) {
                a->uses[s] |= QUEUED;
                stack[sp++] = s;
            }
        }
        assert(sp <= a->n_nodes && "the worklist holds each node once at most");
    }
}

/* The edges by their from (a counting sort), then spread. */
static bool propagate(analysis *a)
{
    size_t n = a->n_nodes, e = a->n_edges;
    uint32_t *start = calloc(n + 1, sizeof *start);
    uint32_t *to = malloc((e ? e : 1) * sizeof *to);
    uint32_t *stack = malloc((n ? n : 1) * sizeof *stack);
    bool ok = start && to && stack;
    if (ok) {
        for (size_t i = 0; i < e; i++)
            start[a->edges[i].from + 1]++;
        for (size_t i = 0; i < n; i++)
            start[i + 1] += start[i];
        for (size_t i = 0; i < e; i++)
            to[start[a->edges[i].from]++] = a->edges[i].to;
        memmove(start + 1, start, n * sizeof *start); /* each node's end is the next one's start */
        start[0] = 0;
        spread(a, start, to, stack);
    }
    free(start);
    free(to);
    free(stack);
    return ok;
}

/* ---- the answer ------------------------------------------------------------------------ */

int ct_ptx_directions(const char *ptx, size_t len, const char *entry, uint8_t *dirs, unsigned cap)
{
    if (!ptx || !entry || (!dirs && cap))
        return -1;
    lexer lx = {ptx, ptx + len};
    analysis *a = calloc(1, sizeof *a);
    if (!a)
        return -1;
    int n = -1;
    if (read_entry(a, &lx, entry) && (a->all_both || propagate(a))) {
        for (unsigned i = 0; i < a->n_params && i < cap; i++)
            dirs[i] = a->all_both ? CT_PTX_BOTH : a->uses[i] & CT_PTX_BOTH;
        n = (int)a->n_params;
    }
    free(a->nodes);
    free(a->uses);
    free(a->slots);
    free(a->edges);
    free(a);
    return n;
}
