/*
 * test_ptx.c - the directions of a PTX kernel's parameters (core/ptx.h).
 *
 * Suite ptx: PTX written here, one construct at a time, whole and broken.
 * Suite ptx_nvcc: the PTX tests/unit/meson.build has nvcc write from
 * ptx_kernels.cu (plain, -lineinfo, -G), found in CT_PTX_DIR; meson
 * reports it skipped where there is no nvcc.
 *
 * Directions are written one letter per parameter: L loaded through, S
 * stored through, B both, - neither.
 */
#include <criterion/criterion.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx.h"

/* ---- asking ------------------------------------------------------------------- */

/* ct_ptx_directions on the first n bytes of text, copied to a buffer of
 * exactly n bytes (no NUL), so that a read past len is AddressSanitizer's. */
static int directions_n(const char *text, size_t n, const char *entry, uint8_t *dirs, unsigned cap)
{
    char *copy = malloc(n ? n : 1);
    cr_assert(copy);
    memcpy(copy, text, n);
    int got = ct_ptx_directions(copy, n, entry, dirs, cap);
    free(copy);
    return got;
}

static int directions(const char *text, const char *entry, uint8_t *dirs, unsigned cap)
{
    return directions_n(text, strlen(text), entry, dirs, cap);
}

#define MAX_LETTERS 64

/* dirs[0 .. n) as letters. */
static const char *letters(const uint8_t *dirs, int n, char *out)
{
    for (int i = 0; i < n; i++) {
        cr_assert(dirs[i] <= CT_PTX_BOTH, "parameter %d: direction %u", i, dirs[i]);
        out[i] = "-LSB"[dirs[i]];
    }
    out[n < 0 ? 0 : n] = '\0';
    return out;
}

/* The answer for entry, in letters; NULL when it is -1. */
static const char *answer_n(const char *text, size_t n, const char *entry, char *out)
{
    uint8_t dirs[MAX_LETTERS];
    int got = directions_n(text, n, entry, dirs, MAX_LETTERS);
    cr_assert(got >= -1 && got <= MAX_LETTERS, "%s: %d parameters", entry, got);
    return got < 0 ? NULL : letters(dirs, got, out);
}

static void assert_dirs(const char *text, const char *entry, const char *want)
{
    char out[MAX_LETTERS + 1];
    const char *got = answer_n(text, strlen(text), entry, out);
    cr_assert(got, "%s: unreadable, want %s", entry, want);
    cr_assert_str_eq(got, want, "%s: %s, want %s", entry, got, want);
}

static void assert_unknown(const char *text, const char *entry, const char *why)
{
    char out[MAX_LETTERS + 1];
    const char *got = answer_n(text, strlen(text), entry, out);
    cr_assert(!got, "%s: %s read as %s", entry, why, got);
}

#define HEAD ".version 9.0\n.target sm_90\n.address_size 64\n\n"
/* Entry k(p0, p1: pointers, n: int) and a body; %rd3 and %rd4 are p0's and
 * p1's global addresses, %r1 is n, %rd1 and %rd2 p0 and p1 as passed. */
#define K(body)                                                                                    \
    HEAD ".visible .entry k(\n\t.param .u64 p0,\n\t.param .u64 p1,\n\t.param .u32 n\n)\n{\n"       \
         "\t.reg .b64 %rd<20>;\n\t.reg .b32 %r<20>;\n\t.reg .f32 %f<20>;\n\t.reg .pred %p<4>;\n\n" \
         "\tld.param.u64 %rd1, [p0];\n\tld.param.u64 %rd2, [p1];\n\tld.param.u32 %r1, [n];\n"      \
         "\tcvta.to.global.u64 %rd3, %rd1;\n\tcvta.to.global.u64 %rd4, %rd2;\n" body "\tret;\n}\n"

/* ---- suite ptx: loads, stores, both ------------------------------------------------------ */

Test(ptx, load_only)
{
    assert_dirs(K("\tld.global.f32 %f1, [%rd3];\n"), "k", "L--");
}

Test(ptx, store_only)
{
    assert_dirs(K("\tst.global.f32 [%rd4+4], %f1;\n"), "k", "-S-");
}

Test(ptx, load_then_store)
{
    assert_dirs(K("\tld.global.f32 %f1, [%rd3];\n\tadd.f32 %f2, %f1, %f1;\n\tst.global.f32 [%rd3], %f2;\n"), "k",
                "B--");
}

/* Loads and stores of every form nvcc writes: .nc, ldu, vectors, negative
 * offsets, a cache policy after the address, a guard. */
Test(ptx, load_and_store_forms)
{
    assert_dirs(K("\tld.global.nc.f32 %f1, [%rd3];\n"
                  "\tldu.global.f32 %f2, [%rd3+8];\n"
                  "\tld.volatile.global.v2.f32 {%f3, %f4}, [%rd3+-8];\n"
                  "\tld.f32 %f5, [%rd1];\n"
                  "\tcvt.u64.u32 %rd9, %r1;\n"
                  "\tld.global.L2::cache_hint.f32 %f6, [%rd3], %rd9;\n"
                  "\tsetp.eq.s32 %p1, %r1, 0;\n"
                  "\t@!%p1 st.global.v2.f32 [%rd4], {%f1, %f2};\n"
                  "\t@%p1 st.relaxed.gpu.global.f32 [%rd4+16], %f5;\n"),
                "k", "LS-");
}

/* A pointer read from a parameter's buffer is memory contents, not the
 * parameter: storing through it stores through none of them. */
Test(ptx, loaded_pointer_is_not_the_parameter)
{
    assert_dirs(K("\tld.global.u64 %rd5, [%rd3];\n\tst.global.f32 [%rd5], %f1;\n"), "k", "L--");
}

Test(ptx, atom_and_red)
{
    assert_dirs(K("\tatom.global.add.u32 %r2, [%rd3], 1;\n\tred.global.add.f32 [%rd4], %f1;\n"), "k", "BB-");
}

/* atom's data is stored: a pointer as atom's data escapes. */
Test(ptx, atom_data_escapes)
{
    assert_dirs(K("\tatom.global.exch.b64 %rd5, [%rd4], %rd1;\n"), "k", "BB-");
}

/* cp.async: its source loaded, its destination stored; its sizes move
 * nothing; any other cp.async form is BOTH. */
Test(ptx, cp_async)
{
    assert_dirs(K("\t.shared .align 4 .b8 tile[64];\n"
                  "\tmov.u32 %r2, tile;\n"
                  "\tcp.async.ca.shared.global [%r2], [%rd3], 4;\n"
                  "\tcp.async.cg.shared.global.L2::128B [%r2+16], [%rd3+16], 16, %r1;\n"
                  "\tcp.async.ca.shared.global [%rd4], [%r2], 4;\n"
                  "\tcp.async.commit_group;\n"
                  "\tcp.async.wait_group 0;\n"),
                "k", "LS-");
    assert_dirs(K("\tcp.async.mbarrier.arrive.b64 [%rd3];\n"), "k", "B--");
}

/* ---- escapes ---------------------------------------------------------------------------------- */

/* Stored as data, a pointer may be written through by anyone later. */
Test(ptx, escape_by_store)
{
    assert_dirs(K("\tst.global.u64 [stash], %rd1;\n"
                  "\tmov.u64 %rd9, __local_depot0;\n"
                  "\tst.local.v2.u64 [%rd9], {%rd4, %rd4};\n"),
                "k", "BB-");
}

/* A call's argument (through st.param, or a register) may be anything to
 * the callee, which is not followed. */
Test(ptx, escape_by_call)
{
    assert_dirs(K("\t{\n\t.param .b64 param0;\n\tst.param.b64 [param0+0], %rd3;\n"
                  "\tcall.uni helper, (param0);\n\t}\n"
                  "\tcall.uni helper2, (%rd4);\n"),
                "k", "BB-");
}

/* A call through a register that holds p1, and brx.idx on n. */
Test(ptx, escape_by_indirect_call)
{
    assert_dirs(K("\tmov.u64 %rd9, 0;\n"
                  "proto: .callprototype (.param .b32 _) _ (.param .b64 _);\n"
                  "\t{\n\t.param .b64 param0;\n\t.param .b32 retval0;\n"
                  "\tst.param.b64 [param0], %rd9;\n"
                  "\tcall (retval0), %rd2, (param0), proto;\n"
                  "\tld.param.b32 %r5, [retval0];\n\t}\n"
                  "$L_t: .branchtargets $L_a, $L_b;\n"
                  "\tbrx.idx %r1, $L_t;\n$L_a:\n$L_b:\n"),
                "k", "-BB");
}

/* A parameter's address (mov, cvta.param, an ld.param through a register)
 * reaches every parameter in the parameter space: all BOTH. */
Test(ptx, param_address_taken)
{
    assert_dirs(K("\tmov.u64 %rd9, p0;\n"), "k", "BBB");
    assert_dirs(K("\tmov.u64 %rd9, p0;\n\tld.param.u32 %r5, [%rd9+8];\n"), "k", "BBB");
    assert_dirs(K("\tcvta.param.u64 %rd9, %rd8;\n"), "k", "BBB");
    assert_dirs(K("\tmov.u64 %rd9, 8;\n\tld.param.u32 %r5, [%rd9];\n"), "k", "BBB");
    assert_dirs(K("\tld.param.u32 %r5, [8];\n"), "k", "BBB");
    assert_dirs(K("\tst.param.u32 [p1], %r2;\n"), "k", "BBB");
    assert_dirs(K("\tst.param.b64 [%rd9], %rd8;\n"), "k", "BBB");
}

/* An ld.param that reads past its parameter's end reads the next one. */
Test(ptx, param_read_out_of_bounds)
{
    assert_dirs(K("\tld.param.u32 %r5, [p0+4];\n"), "k", "---");
    assert_dirs(K("\tld.param.u64 %rd9, [p0+8];\n"), "k", "BBB");
    assert_dirs(K("\tld.param.v2.u64 {%rd9, %rd10}, [p0];\n"), "k", "BBB");
    assert_dirs(K("\tld.param.u64 %rd9, [p0+-8];\n"), "k", "BBB");
    assert_dirs(K("\tld.param %rd9, [p0];\n"), "k", "BBB");
}

Test(ptx, bulk_and_tensor_copies)
{
    static const char *const bodies[] = {
        K("\tcp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r2], [%rd3], 64, [%r3];\n"),
        K("\tcp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%rd3], [%r2], 64;\n"),
        K("\tcp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r2], "
          "[%rd3, {%r4, %r5}], [%r3];\n"),
        K("\ttensormap.replace.tile.global_address.global.b1024.b64 [%rd9], %rd3;\n"),
        K("\tcp.async.bulk.prefetch.L2.global [%rd3], 64;\n"),
        K("\tprefetch.tensormap [%rd3];\n"),
        K("\tfence.proxy.tensormap::generic.acquire.gpu [%rd3], 128;\n"),
    };
    for (size_t i = 0; i < sizeof bodies / sizeof *bodies; i++)
        assert_dirs(bodies[i], "k", "B--");
}

Test(ptx, multimem)
{
    assert_dirs(K("\tmultimem.ld_reduce.relaxed.sys.global.add.f32 %f1, [%rd3];\n"
                  "\tmultimem.st.relaxed.sys.global.f32 [%rd4], %f1;\n"),
                "k", "BB-");
}

/* ---- derivation ------------------------------------------------------------------------------- */

Test(ptx, loop_reassigns)
{
    assert_dirs(K("\tmov.u64 %rd5, %rd3;\n\tmov.u32 %r2, 0;\n"
                  "$L_loop:\n"
                  "\tld.global.f32 %f1, [%rd5];\n"
                  "\tadd.s64 %rd5, %rd5, 4;\n"
                  "\tadd.s32 %r2, %r2, 1;\n"
                  "\tsetp.lt.s32 %p1, %r2, %r1;\n"
                  "\t@%p1 bra $L_loop;\n"),
                "k", "L--");
}

/* The back edge carries p1 to a store that comes before, in the text,
 * the assignments that make its address p1's: only a fixpoint sees it. */
Test(ptx, use_before_definition)
{
    assert_dirs(K("\tmov.u64 %rd6, 0;\n"
                  "$L_loop:\n"
                  "\tst.global.f32 [%rd6], %f1;\n"
                  "\tmov.u64 %rd6, %rd7;\n"
                  "\tmov.u64 %rd7, %rd8;\n"
                  "\tadd.s64 %rd8, %rd4, 4;\n"
                  "\t@%p1 bra $L_loop;\n"),
                "k", "-S-");
}

Test(ptx, mad_wide_and_cvta)
{
    assert_dirs(K("\tmov.u32 %r2, %tid.x;\n"
                  "\tmad.wide.s32 %rd5, %r2, 4, %rd1;\n"
                  "\tcvta.to.global.u64 %rd6, %rd5;\n"
                  "\tld.global.f32 %f1, [%rd6];\n"
                  "\tmul.wide.u32 %rd7, %r2, 4;\n"
                  "\tshl.b64 %rd8, %rd7, 1;\n"
                  "\tadd.s64 %rd9, %rd4, %rd8;\n"
                  "\tst.global.f32 [%rd9], %f1;\n"),
                "k", "LS-");
    assert_dirs(K("\tmov.u32 %r2, %tid.x;\n\tsetp.eq.s32 %p1, %r2, 0;\n\tselp.b64 %rd5, %rd3, %rd4, %p1;\n"
                  "\tld.global.f32 %f1, [%rd5];\n"),
                "k", "LL-");
    /* a predicate of n's picks the address: n is in it */
    assert_dirs(K("\tsetp.eq.s32 %p1, %r1, 0;\n\tselp.b64 %rd5, %rd3, %rd4, %p1;\n\tld.global.f32 %f1, [%rd5];\n"), "k",
                "LLL");
    /* vectors: mov.b64 packs and unpacks */
    assert_dirs(K("\tmov.b64 {%r2, %r3}, %rd1;\n\tmov.b64 %rd5, {%r3, %r2};\n\tld.f32 %f1, [%rd5];\n"), "k", "L--");
}

Test(ptx, struct_by_value)
{
    static const char text[] = HEAD ".visible .entry s(\n\t.param .align 8 .b8 pair[24],\n\t.param .u64 out\n)\n{\n"
                                    "\tld.param.u64 %rd1, [pair+8];\n"
                                    "\tld.param.u32 %r1, [pair+16];\n"
                                    "\tld.param.v2.u32 {%r2, %r3}, [pair+16];\n"
                                    "\tld.param.u64 %rd2, [out];\n"
                                    "\tcvta.to.global.u64 %rd3, %rd1;\n"
                                    "\tst.global.f32 [%rd3], %f1;\n"
                                    "\tret;\n}\n";
    assert_dirs(text, "s", "S-");
}

Test(ptx, unused_and_scalar)
{
    assert_dirs(K("\tsetp.ge.s32 %p1, %r1, 100;\n\t@%p1 bra $L_end;\n$L_end:\n"), "k", "---");
}

/* A scalar is "used as an address" when it goes into one: an index here;
 * stored as data it escapes like a pointer would. */
Test(ptx, scalar_as_index)
{
    assert_dirs(K("\tmul.wide.s32 %rd5, %r1, 4;\n\tadd.s64 %rd6, %rd3, %rd5;\n\tld.global.f32 %f1, [%rd6];\n"
                  "\tst.global.u32 [%rd4], %r1;\n"),
                "k", "LSB");
}

Test(ptx, prefetch_moves_nothing)
{
    assert_dirs(K("\tprefetch.global.L2 [%rd3];\n\tprefetchu.L1 [%rd4];\n"), "k", "---");
}

/* Not known here: a memory operand, or no destination, is BOTH; a
 * destination is computed from its sources. */
Test(ptx, unknown_instructions)
{
    assert_dirs(K("\tdiscard.global.L2 [%rd3], 128;\n\tfrob.b64 %rd5, %rd4, 7;\n\tst.global.f32 [%rd5], %f1;\n"), "k",
                "BS-");
    assert_dirs(K("\tfrob 3, %rd3;\n"), "k", "B--");
    assert_dirs(K("\tfrob.b32 %r5, [%rd3];\n"), "k", "B--");
}

/* Into shared, local or const a generic address leaves what is followed here. */
Test(ptx, space_changes)
{
    assert_dirs(K("\tcvta.to.shared.u64 %rd5, %rd1;\n\tcvta.local.u64 %rd6, %rd2;\n"), "k", "BB-");
    assert_dirs(K("\tisspacep.global %p1, %rd3;\n\tcvta.global.u64 %rd5, %rd9;\n"), "k", "---");
}

/* Inline asm's own registers, with no '%'; scopes are not told apart, so
 * two blocks' t are one (more derivations: sound). */
Test(ptx, scoped_registers)
{
    assert_dirs(K("\t{\n\t.reg .pred p;\n\t.reg .b64 t;\n"
                  "\tsetp.ne.b32 p, %r1, 0;\n"
                  "\tmov.b64 t, %rd4;\n"
                  "\t@p st.global.v4.u32 [t], {%r2, %r3, %r4, %r5};\n\t}\n"),
                "k", "-S-");
    assert_dirs(K("\t{ .reg .b64 t; mov.b64 t, %rd3; }\n\t{ .reg .b64 t; ld.global.f32 %f1, [t]; }\n"), "k", "L--");
}

/* wmma's loads and stores; their stride moves nothing. */
Test(ptx, wmma)
{
    assert_dirs(K("\twmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9}, "
                  "[%rd3], %r1;\n"
                  "\twmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%rd4], {%f1, %f2, %f3, %f4, %f5, %f6, %f7, "
                  "%f8}, %r1;\n"),
                "k", "LS-");
}

/* ---- reading the text ------------------------------------------------------------------------- */

Test(ptx, comments_and_strings)
{
    assert_dirs(K("\t// st.global.f32 [%rd3], %f1;\n"
                  "\t/* st.global.f32 [%rd3], %f1; } } { */\n"
                  "\t.pragma \"nounroll; }\";\n"
                  "\tld.global.f32 /* } */ %f1, [%rd3]; // }\n"),
                "k", "L--");
}

/* .loc ends with its line (nvcc -lineinfo); anything else on it would be
 * an instruction read as part of it. */
Test(ptx, loc_lines)
{
    assert_dirs(K("\t.loc 1 5 3\n\tld.global.f32 %f1, [%rd3];\n"
                  "\t.loc 2 107 3, function_name $L__info_string0, inlined_at 1 29 30\n"
                  "\tst.global.f32 [%rd4], %f1;\n"),
                "k", "LS-");
    assert_unknown(K("\t.loc 1 5 3 st.global.f32 [%rd3], %f1;\n"), "k", "an instruction on a .loc line");
}

/* -1 until the body's '}' is within the text, then the whole answer. */
Test(ptx, truncated_at_every_offset)
{
    static const char text[] = K("\tld.global.f32 %f1, [%rd3]; // a comment\n\t.pragma \"a\\\"b\";\n"
                                 "\tst.global.f32 [%rd4], %f1;\n") "// after\n";
    size_t end = (size_t)(strstr(text, "\n}\n") - text) + 2;
    char out[MAX_LETTERS + 1];
    for (size_t n = 0; n <= sizeof text - 1; n++) {
        const char *got = answer_n(text, n, "k", out);
        if (n < end)
            cr_assert(!got, "cut at %zu of %zu: read as %s", n, end, got);
        else
            cr_assert(got && strcmp(got, "LS-") == 0, "cut at %zu: %s", n, got ? got : "unreadable");
    }
}

Test(ptx, malformed_bodies)
{
    static const struct {
        const char *text, *why;
    } cases[] = {
        {K("\tld.global.f32 %f1, [%rd3;\n"), "a ';' inside brackets"},
        {K("\tld.global.f32 %f1, [%rd3; ];\n"), "a ';' inside brackets, closed after it"},
        {K("\tst.global.f32 %rd3], %f1;\n"), "a ']' never opened"},
        {K("\tst.global.v2.f32 [%rd3], {%f1, %f2;\n"), "a ';' inside braces"},
        {K("\tadd.s32 %r2, %r1, 1\n"), "a '}' ending an instruction"},
        {K("\t.foo 1;\n"), "a directive not known"},
        {K("\t/* never closed\n"), "a comment left open"},
        {K("\t.pragma \"never closed;\n"), "a string left open"},
        {K("\t{\n\tld.global.f32 %f1, [%rd3];\n"), "a scope never closed"},
        {K("\t@ bra $L;\n"), "a guard with no predicate"},
        {K("\t] ;\n"), "a statement of punctuation"},
        {HEAD ".entry k(.param .u64) { ret; }\n", "a parameter with no name"},
        {HEAD ".entry k(.param .u64 a .u64 b) { ret; }\n", "a parameter of two names"},
        {HEAD ".entry k(.reg .u64 a) { ret; }\n", "a parameter that is no .param"},
        {HEAD ".entry k(.param .u64 a, .param .u32 a) { ret; }\n", "two parameters of one name"},
        {HEAD ".entry k(.param .b8 a[0]) { ret; }\n", "an array of none"},
        {HEAD ".entry k(.param .u64 a) } { ret; }\n", "a '}' before the body"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        assert_unknown(cases[i].text, "k", cases[i].why);
}

/* Any bytes: an answer in bounds or -1, never a crash (ASan sees reads
 * past the end).  PTX-ish bytes where a parameter list is wanted, then
 * where a body is (so that they are read to their end), and a whole text
 * with bytes overwritten. */
Test(ptx, garbage)
{
    static const char alphabet[] = "  \n\t{}[](),;:@!+-|\"\\/*.entry k .param .u64 p %rd1 %r2 ld.param st.global "
                                   "mov cvta.to.global atom call 0 8 $L .loc";
    static const char header[] = HEAD ".entry k(.param .u64 p0, .param .u32 n)\n{\n";
    static const char valid[] = K("\tld.global.f32 %f1, [%rd3];\n\tst.global.f32 [%rd4], %f1;\n");
    char text[sizeof valid + 256];
    uint32_t x = 12345;
    uint8_t dirs[8];
    for (int round = 0; round < 30000; round++) {
        size_t n = 0;
        if (round % 3 == 2) {
            memcpy(text, valid, sizeof valid - 1);
            n = sizeof valid - 1;
            for (int k = 0; k < 3; k++) {
                x = x * 1103515245u + 12345u;
                text[(x >> 8) % n] = alphabet[(x >> 20) % (sizeof alphabet - 1)];
            }
        } else {
            const char *start = round % 3 ? header : ".entry k(";
            n = strlen(start);
            memcpy(text, start, n);
            for (size_t end = n + 200; n < end; n++) {
                x = x * 1103515245u + 12345u;
                text[n] = (x >> 24) < 8 ? (char)(x >> 16) : alphabet[(x >> 16) % (sizeof alphabet - 1)];
            }
        }
        int got = directions_n(text, n, "k", dirs, sizeof dirs);
        cr_assert(got >= -1 && got <= CT_PTX_MAX_PARAMS, "round %d: %d", round, got);
        for (int i = 0; i < got && i < (int)sizeof dirs; i++)
            cr_assert(dirs[i] <= CT_PTX_BOTH);
    }
}

/* PTX in memory ends at its NUL. */
Test(ptx, nul_ends_text)
{
    static const char text[] = K("\tld.global.f32 %f1, [%rd3];\n\tst.global.f32 [%rd4], %f1;\n");
    char copy[sizeof text + 16];
    memcpy(copy, text, sizeof text);
    char out[MAX_LETTERS + 1];
    copy[strstr(text, "st.global") - text] = '\0';
    cr_assert(!answer_n(copy, sizeof text - 1, "k", out), "a NUL inside the body ends it");
    memcpy(copy, text, sizeof text);
    copy[strstr(text, "ret;") - text] = '\0';
    cr_assert(!answer_n(copy, sizeof text - 1, "k", out), "a NUL before the body's end ends it");
    static const char commented[] = K("\t// a comment \0 of two parts\n\tld.global.f32 %f1, [%rd3];\n");
    cr_assert(!answer_n(commented, sizeof commented - 1, "k", out), "a NUL inside a comment ends the text");
    static const char quoted[] = K("\t.pragma \"a string \0 of two parts\";\n");
    cr_assert(!answer_n(quoted, sizeof quoted - 1, "k", out), "a NUL inside a string ends the text");
    memcpy(copy, text, sizeof text);
    memcpy(copy + sizeof text, "garbage{{{", 10);
    const char *got = answer_n(copy, sizeof text + 10, "k", out);
    cr_assert(got && strcmp(got, "LS-") == 0, "what follows the NUL is no text: %s", got ? got : "unreadable");
}

Test(ptx, entry_not_there)
{
    uint8_t dirs[4];
    static const char text[] = K("\tld.global.f32 %f1, [%rd3];\n");
    assert_unknown(text, "other", "another entry's name");
    assert_unknown(text, "", "the empty name");
    assert_unknown(HEAD "// .entry k(.param .u64 p) { ret; }\n", "k", "in a comment");
    assert_unknown(HEAD ".pragma \".entry k(.param .u64 p) { ret; }\";\n", "k", "in a string");
    assert_unknown(HEAD ".visible .entry k2(.param .u64 p) { ret; }\n", "k", "a name k is a prefix of");
    assert_dirs(HEAD ".visible .entry k2(.param .u64 p) { ret; }\n", "k2", "-");
    assert_unknown(HEAD ".func k(.param .u64 p) { ret; }\n", "k", "a device function");
    assert_unknown(HEAD ".func f() { .entry k(.param .u64 p) { ret; } }\n", "k", "not at the top level");
    assert_unknown(HEAD ".entry k(.param .u64 p);\n", "k", "a declaration alone");
    cr_assert_eq(ct_ptx_directions(NULL, 0, "k", dirs, 4), -1);
    cr_assert_eq(ct_ptx_directions(text, sizeof text - 1, NULL, dirs, 4), -1);
    cr_assert_eq(ct_ptx_directions(text, sizeof text - 1, "k", NULL, 4), -1);
}

Test(ptx, declaration_then_definition)
{
    assert_dirs(HEAD ".visible .entry k(.param .u64 a, .param .u64 b);\n"
                     ".visible .entry k(.param .u64 q)\n.maxntid 256, 1, 1\n.pragma \"nounroll\";\n{\n"
                     "\tld.param.u64 %rd1, [q];\n\tst.global.u32 [%rd1], 1;\n\tret;\n}\n",
                "k", "S");
}

/* Two entries, after a device function and a debug section whose braces
 * hide in strings and comments: each its own. */
Test(ptx, two_entries)
{
    static const char text[] =
        HEAD ".func (.param .b32 r) helper(.param .b64 x)\n{\n\t.pragma \"{\";\n\t// }\n\t/* { */ ret;\n}\n"
             ".section .debug_info { .b8 1, 2, 3 }\n"
             ".visible .entry first(\n\t.param .u64 a,\n\t.param .u64 b\n)\n{\n"
             "\tld.param.u64 %rd1, [a];\n\tld.global.f32 %f1, [%rd1];\n\tret;\n}\n"
             ".visible .entry second(\n\t.param .u64 a,\n\t.param .u64 b\n)\n{\n"
             "\tld.param.u64 %rd1, [b];\n\tst.global.f32 [%rd1], %f1;\n\tret;\n}\n";
    assert_dirs(text, "first", "L-");
    assert_dirs(text, "second", "-S");
}

Test(ptx, cap_of_dirs)
{
    static const char text[] = K("\tst.global.f32 [%rd3], %f1;\n\tld.global.f32 %f1, [%rd4];\n");
    uint8_t dirs[3] = {0xee, 0xee, 0xee};
    cr_assert_eq(directions(text, "k", dirs, 1), 3);
    cr_assert(dirs[0] == CT_PTX_STORES && dirs[1] == 0xee && dirs[2] == 0xee, "only cap written");
    cr_assert_eq(directions(text, "k", NULL, 0), 3);
}

/* ---- caps ---------------------------------------------------------------------------------------- */

typedef struct text {
    char *p;
    size_t n, cap;
} text;

static void add(text *t, const char *s)
{
    size_t n = strlen(s);
    if (t->n + n + 1 > t->cap) {
        t->cap = (t->n + n + 1) * 2;
        t->p = realloc(t->p, t->cap);
        cr_assert(t->p);
    }
    memcpy(t->p + t->n, s, n + 1);
    t->n += n;
}

static int directions_of(text *t, const char *entry)
{
    int got = ct_ptx_directions(t->p, t->n, entry, NULL, 0);
    free(t->p);
    return got;
}

static int with_params(unsigned n)
{
    text t = {0};
    char line[64];
    add(&t, HEAD ".entry k(");
    for (unsigned i = 0; i < n; i++) {
        snprintf(line, sizeof line, "%s.param .u64 p%u", i ? ", " : "", i);
        add(&t, line);
    }
    add(&t, ") { ret; }\n");
    return directions_of(&t, "k");
}

Test(ptx, param_cap)
{
    cr_assert_eq(with_params(CT_PTX_MAX_PARAMS), CT_PTX_MAX_PARAMS);
    cr_assert_eq(with_params(CT_PTX_MAX_PARAMS + 1), -1);
}

/* n distinct registers besides its one parameter. */
static int with_registers(unsigned n)
{
    text t = {0};
    char line[64];
    add(&t, HEAD ".entry k(.param .u64 p)\n{\n");
    for (unsigned i = 0; i < n; i++) {
        snprintf(line, sizeof line, "mov.b32 %%r%u, 0;\n", i);
        add(&t, line);
    }
    add(&t, "}\n");
    return directions_of(&t, "k");
}

Test(ptx, name_cap)
{
    cr_assert_eq(with_registers(CT_PTX_MAX_NAMES - 1), 1);
    cr_assert_eq(with_registers(CT_PTX_MAX_NAMES), -1);
}

/* n instructions of 4000 edges each: mov.b64 %rd, {%r0, ..., %r3999}. */
static int with_edges(unsigned n)
{
    text vector = {0}, t = {0};
    char name[16];
    add(&vector, "mov.b64 %rd, {");
    for (unsigned i = 0; i < 4000; i++) {
        snprintf(name, sizeof name, "%s%%r%u", i ? "," : "", i);
        add(&vector, name);
    }
    add(&vector, "};\n");
    add(&t, HEAD ".entry k(.param .u64 p)\n{\n");
    for (unsigned i = 0; i < n; i++)
        add(&t, vector.p);
    add(&t, "}\n");
    free(vector.p);
    return directions_of(&t, "k");
}

Test(ptx, edge_cap)
{
    cr_assert_eq(with_edges(CT_PTX_MAX_EDGES / 4000), 1);
    cr_assert_eq(with_edges(CT_PTX_MAX_EDGES / 4000 + 1), -1);
}

/* One instruction of n names: n operands of one name each, or one vector of them all. */
static int with_operands(unsigned n, bool one_operand)
{
    text t = {0};
    char name[16];
    add(&t, HEAD ".entry k(.param .u64 p)\n{\nfrob ");
    add(&t, one_operand ? "{%r0" : "%r0");
    for (unsigned i = 1; i < n; i++) {
        snprintf(name, sizeof name, ", %%r%u", i);
        add(&t, name);
    }
    add(&t, one_operand ? "};\n}\n" : ";\n}\n");
    return directions_of(&t, "k");
}

Test(ptx, statement_caps)
{
    cr_assert_eq(with_operands(256, false), 1);
    cr_assert_eq(with_operands(257, false), -1, "operands past the cap");
    cr_assert_eq(with_operands(4096, true), 1);
    cr_assert_eq(with_operands(4097, true), -1, "names past the cap");
}

/* ---- suite ptx_nvcc: what nvcc writes ---------------------------------------------------------- */

static text load(const char *file)
{
    const char *dir = getenv("CT_PTX_DIR");
    if (!dir || !*dir)
        cr_skip_test("CT_PTX_DIR is not set: meson test runs these on the PTX nvcc writes");
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "rb");
    cr_assert(f, "%s: not built", path);
    text t = {0};
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk - 1, f)) > 0) {
        chunk[n] = '\0';
        add(&t, chunk);
    }
    fclose(f);
    return t;
}

/* ptx_kernels.cu's kernels and the directions it says of each. */
static const struct {
    const char *name, *want;
} nvcc_kernels[] = {
    {"_Z8sum_intoPfS_i", "SL-"},    {"_Z5scalePfi", "B-"},
    {"_Z12atomic_countPi", "B"},    {"_Z9copy_pair4Pair", "B"},
    {"_Z6gather4PairPf", "LS"},     {"_Z6unusedPfi", "--"},
    {"_Z9read_onlyPKfPf", "LS"},    {"_Z4leakPf", "B"},
    {"_Z5callsPfS_", "BL"},         {"_Z5chasePPfS_", "LS"},
    {"_Z10async_copyPKfPf", "LS"},  {"_Z8mma_tilePK6__halfS1_Pfj", "LLS-"},
    {"_Z7indexed5TableiPf", "BBB"},
};
#define N_NVCC (sizeof nvcc_kernels / sizeof *nvcc_kernels)

Test(ptx_nvcc, directions)
{
    text t = load("ptx_kernels.ptx");
    for (size_t i = 0; i < N_NVCC; i++)
        assert_dirs(t.p, nvcc_kernels[i].name, nvcc_kernels[i].want);
    /* and every entry nvcc wrote is one of them */
    size_t entries = 0;
    for (const char *p = t.p; (p = strstr(p, ".entry ")); p++)
        entries++;
    cr_assert_eq(entries, N_NVCC, "%zu entries in ptx_kernels.ptx, %zu known", entries, N_NVCC);
    free(t.p);
}

/* -lineinfo: the same code with .loc lines (some naming inlined functions). */
Test(ptx_nvcc, lineinfo)
{
    text t = load("ptx_kernels_lineinfo.ptx");
    cr_assert(strstr(t.p, "inlined_at"), "-lineinfo writes .loc lines");
    for (size_t i = 0; i < N_NVCC; i++)
        assert_dirs(t.p, nvcc_kernels[i].name, nvcc_kernels[i].want);
    free(t.p);
}

/* -G: debug sections at the top level and unoptimised bodies, which copy
 * parameters through local memory (an escape: BOTH); every direction of
 * the optimised build is still there. */
Test(ptx_nvcc, debug_build)
{
    text t = load("ptx_kernels_debug.ptx");
    cr_assert(strstr(t.p, ".section"), "-G writes debug sections");
    char out[MAX_LETTERS + 1];
    for (size_t i = 0; i < N_NVCC; i++) {
        const char *name = nvcc_kernels[i].name, *want = nvcc_kernels[i].want;
        const char *got = answer_n(t.p, t.n, name, out);
        cr_assert(got && strlen(got) == strlen(want), "%s: %s", name, got ? got : "unreadable");
        for (size_t j = 0; want[j]; j++) {
            unsigned w = (unsigned)(strchr("-LSB", want[j]) - "-LSB"), g = (unsigned)(strchr("-LSB", got[j]) - "-LSB");
            cr_assert((w & g) == w, "%s: parameter %zu is %c, optimised %c", name, j, got[j], want[j]);
        }
    }
    free(t.p);
}

/* Every cut of nvcc's text: -1 until the entry's body is whole, then its answer. */
Test(ptx_nvcc, cut_at_every_offset)
{
    text t = load("ptx_kernels.ptx");
    static const size_t cases[] = {0, 4, 11};
    char out[MAX_LETTERS + 1], entry[256];
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const char *name = nvcc_kernels[cases[c]].name, *want = nvcc_kernels[cases[c]].want;
        snprintf(entry, sizeof entry, ".entry %s(", name);
        const char *at = strstr(t.p, entry);
        cr_assert(at, "%s", name);
        size_t end = (size_t)(strstr(at, "\n}\n") - t.p) + 2;
        for (size_t n = 0; n <= end + 64 && n <= t.n; n++) {
            const char *got = answer_n(t.p, n, name, out);
            if (n < end)
                cr_assert(!got, "%s cut at %zu of %zu: read as %s", name, n, end, got);
            else
                cr_assert(got && strcmp(got, want) == 0, "%s cut at %zu: %s", name, n, got ? got : "unreadable");
        }
    }
    free(t.p);
}
