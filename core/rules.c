/*
 * rules.c - the decisions of rules.h.
 *
 * Owns: what a read to the host refuses and poisons, and when a launch, a
 * device copy or a graph launch whose input carries a failure is skipped
 * (and, for a graph, which of its reads names the skip); which refused
 * images are answered with a stand-in.  Every check here
 * is arithmetic on the caller's numbers or a look at the store (taint.h).
 *
 * Invariants:
 * - Overflow is checked, never wrapped: a span that would pass 2^64 is
 *   malformed, not a short one.
 * - A read is refused only when a byte of its own rows carries a failure
 *   and it does not run past the end of the known allocation it starts in
 *   (a read starting outside every known one is judged by its bytes
 *   alone); a failed read's host rows are poisoned only when it lay
 *   wholly inside one known allocation.  Both are decided from one look
 *   at the allocation (fits, ct_failed_read_poisons): a rule runs without
 *   the store's lock, so a second look may see another thread's free.
 */
#include "rules.h"

#include "ct_status.h"

#include <assert.h>
#include <string.h>

/* The first byte to one past the last of the rows; false when a size is one
 * the driver must reject (rows overlapping, a span past 2^64). */
static bool span_of(const ct_rows *r, ct_range *span)
{
    uint64_t rows_end, slices_end;
    if (r->pitch < r->width || (r->depth > 1 && r->slice < r->pitch * (r->height - 1) + r->width) ||
        __builtin_mul_overflow(r->height - 1, r->pitch, &rows_end) ||
        __builtin_mul_overflow(r->depth - 1, r->slice, &slices_end) ||
        __builtin_add_overflow(rows_end, slices_end, &span->len) ||
        __builtin_add_overflow(span->len, r->width, &span->len))
        return false;
    assert(span->len >= r->width && "a span that would pass 2^64 is malformed, never wrapped short");
    span->addr = r->addr;
    return true;
}

/* The host side is written where its pitch says, so it too must be a shape
 * the driver accepts before cutaint writes there. */
static bool host_side_valid(const ct_rows *host)
{
    return host->pitch >= host->width && (host->depth <= 1 || host->slice >= host->pitch * host->height);
}

/* Inside its allocation, or outside every known one (which never refuses). */
static bool fits(ct_store *s, const ct_range *span)
{
    uint64_t base = 0, size = 0;
    return !ct_store_resolve(s, span->addr, &base, &size) || span->len <= base + size - span->addr;
}

/* Whether a byte of the rows themselves carries a failure: the span's gaps
 * (between rows, between slices) may be all that does, and are not read. */
static bool rows_carry(ct_store *s, const ct_rows *r)
{
    for (uint64_t z = 0; z < r->depth; z++) {
        for (uint64_t y = 0; y < r->height; y++) {
            ct_range row = {r->addr + z * r->slice + y * r->pitch, r->width};
            if (ct_check_written(s, &row, 1, NULL) != CT_OK)
                return true;
        }
    }
    return false;
}

ct_read_verdict ct_read_rule(ct_store *s, const ct_rows *src, const ct_rows *host, ct_refusal *why)
{
    if (!src || !host || src->width == 0 || src->height == 0 || src->depth == 0 || !ct_store_tainted(s))
        return CT_READ_CLEAN;
    ct_range span;
    if (!span_of(src, &span) || !host_side_valid(host))
        return CT_READ_MALFORMED;
    /* Nothing carried in the span, gaps included: the common case, cheap. */
    if (!ct_read_failure(s, &span, 1, NULL))
        return CT_READ_CLEAN;
    if (!fits(s, &span))
        return CT_READ_PAST_END;
    if (why) /* one survey decides and describes */
        return ct_check_rows_written(s, src, why) != CT_OK ? CT_READ_REFUSE : CT_READ_CLEAN;
    return rows_carry(s, src) ? CT_READ_REFUSE : CT_READ_CLEAN;
}

ct_read_verdict ct_skipped_read_rule(ct_store *s, const ct_rows *src, const ct_rows *host, const ct_range *skipped,
                                     ct_refusal *why)
{
    ct_read_verdict v = ct_read_rule(s, src, host, why);
    if (v != CT_READ_CLEAN || !skipped || !host || !src || src->width == 0 || src->height == 0 || src->depth == 0)
        return v;
    return ct_check_written(s, skipped, 1, why) != CT_OK ? CT_READ_REFUSE : CT_READ_CLEAN;
}

bool ct_failed_read_poisons(ct_store *s, const ct_rows *src, const ct_rows *host)
{
    ct_range span;
    uint64_t base = 0, size = 0;
    if (!src || !host || host->addr == 0 || src->width == 0 || src->height == 0 || src->depth == 0 ||
        !span_of(src, &span) || !host_side_valid(host))
        return false;
    return ct_store_resolve(s, span.addr, &base, &size) && span.len <= base + size - span.addr;
}

static bool listed(const int *codes, size_t n, int code)
{
    for (size_t i = 0; codes && i < n; i++)
        if (codes[i] == code)
            return true;
    return false;
}

int ct_skip_result(ct_on_skip on_skip, int root_error, int success)
{
    return on_skip == CT_SKIP_ERROR ? root_error : success;
}

int ct_batch_result(bool refused, int refused_code, bool skipped, int skip_result, int root_error)
{
    if (refused)
        return refused_code;
    return skipped ? skip_result : root_error;
}

static uint8_t role_of_direction(uint8_t dir)
{
    switch (dir) {
    case CT_PTX_LOADS: return CT_ROLE_READ;
    case CT_PTX_STORES: return CT_ROLE_STORE;
    case CT_PTX_UNUSED: return CT_ROLE_IGNORE;
    default: return CT_ROLE_READWRITE;
    }
}

ct_param_role ct_param_role_rule(const ct_param_facts *f, unsigned i, uint32_t size)
{
    const ct_signature *sig = f->sig;
    const ct_arg_rule *rule = f->rule;
    ct_param_role r;
    if (sig && i < sig->n_params) {
        uint8_t kind = sig->kind[i];
        r.role = kind == CT_PARAM_CONST_PTR                           ? CT_ROLE_READ
                 : kind == CT_PARAM_PTR || kind == CT_PARAM_AGGREGATE ? CT_ROLE_READWRITE
                                                                      : CT_ROLE_IGNORE;
        r.scan = kind == CT_PARAM_AGGREGATE;
    } else {
        r.role = size >= 8 ? CT_ROLE_READWRITE : CT_ROLE_IGNORE;
        r.scan = size > 8;
    }
    /* What the code does wins over what the signature says, for anything
     * that can hold a pointer (a uint64_t used as one, a const pointer
     * stored through after a cast). */
    if (f->dirs && i < f->n_dirs && size >= 8)
        r.role = role_of_direction(f->dirs[i]);
    if (rule && i < rule->n_roles && rule->role[i] != CT_ROLE_DEFAULT)
        r.role = rule->role[i];
    return r;
}

bool ct_survives_simulated_loss(const char *family, const char *const *ways_out, size_t n)
{
    for (size_t i = 0; family && i < n; i++)
        if (ways_out[i] && strcmp(family, ways_out[i]) == 0)
            return true;
    return false;
}

ct_answer_verdict ct_answer_rule(const ct_answer_kinds *k, int answer)
{
    if (answer == k->success || answer == k->not_ready)
        return CT_ANSWER_ALIVE;
    if (answer == k->deinitialized || listed(k->no_context, k->n_no_context, answer))
        return CT_ANSWER_NO_CONTEXT;
    if (listed(k->capture, k->n_capture, answer))
        return CT_ANSWER_CAPTURE;
    return CT_ANSWER_LOST;
}

bool ct_probe_rule(const ct_answer_kinds *k, int error)
{
    return error != k->success && error != k->not_ready && error != k->deinitialized &&
           !listed(k->capture, k->n_capture, error);
}

uint64_t ct_poison_rows(const ct_rows *host)
{
    return host && host_side_valid(host) ? host->height * host->depth : 0;
}

bool ct_poison_row(const ct_rows *host, uint64_t i, ct_range *row)
{
    if (!row || i >= ct_poison_rows(host))
        return false;
    uint64_t z = i / host->height, y = i % host->height;
    *row = (ct_range){host->addr + z * host->slice + y * host->pitch, host->width};
    return true;
}

/* Every skip verdict comes from here, whoever asked the context. */
static ct_skip_verdict skip_verdict(ct_failure_id found, bool has_context)
{
    if (!found)
        return CT_RUN;
    return has_context ? CT_SKIP : CT_RUN_NO_CONTEXT;
}

ct_skip_verdict ct_skip_rule(ct_failure_id found, ct_context_query has_context)
{
    return skip_verdict(found, found && has_context && has_context());
}

static ct_failure_id root_of(ct_store *s, const ct_range *in, size_t n, ct_failure_id *root, int *error)
{
    int found_error = 0;
    ct_failure_id found = n ? ct_read_failure(s, in, n, &found_error) : 0;
    if (root)
        *root = found;
    if (error)
        *error = found_error;
    return found;
}

ct_skip_verdict ct_copy_rule(ct_store *s, const ct_range *in, size_t n, uint64_t dst, ct_context_query has_context,
                             ct_failure_id *root, int *error)
{
    ct_failure_id found = root_of(s, in, n, root, error);
    /* The destination is looked up only once a root is found: rare. */
    if (found && !ct_store_resolve(s, dst, NULL, NULL))
        return CT_RUN_UNTRACKED;
    return ct_skip_rule(found, has_context);
}

ct_skip_verdict ct_launch_rule(ct_store *s, const ct_range *in, size_t n, ct_context_query has_context,
                               ct_failure_id *root, int *error)
{
    return ct_skip_rule(root_of(s, in, n, root, error), has_context);
}

/* A final avalanche (splitmix64's), so keys that differ in one byte differ
 * all over. */
uint64_t ct_launch_key_end(uint64_t h, uint64_t total_bytes)
{
    h ^= total_bytes * 0xbf58476d1ce4e5b9ULL;
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
    return h ^ (h >> 31);
}

uint64_t ct_launch_threads(const uint32_t grid[3], const uint32_t block[3])
{
    uint64_t t = 1;
    for (int i = 0; i < 6; i++) {
        uint64_t d = i < 3 ? grid[i] : block[i - 3];
        t = d && t > UINT64_MAX / d ? UINT64_MAX : t * d;
    }
    return t;
}

/* Does now redo one of f's attempts? */
static bool repeats_an_attempt(const ct_attempts_view *f, void *ctx)
{
    const ct_launch_key *now = ctx;
    if (!f->intact)
        return false;
    for (uint32_t i = 0; i < f->n_keys; i++)
        if (f->keys[i].function == now->function && f->keys[i].params == now->params &&
            now->threads >= f->keys[i].threads)
            return true;
    return false;
}

bool ct_retry_rule(ct_store *s, const ct_retry_facts *f, ct_failure_id *retried)
{
    ct_failure_id oldest = 0;
    bool retry = f && !f->context_lost && f->n_in <= CT_RETRY_WORDS_MAX && f->n_out <= CT_RETRY_WORDS_MAX &&
                 ct_carried_within(s, f->in, f->n_in, f->out, f->n_out, repeats_an_attempt, (void *)&f->key, &oldest) &&
                 oldest != 0;
    if (retried)
        *retried = retry ? oldest : 0;
    return retry;
}

ct_skip_verdict ct_launch_skip_rule(ct_store *s, const ct_range *in, size_t n, ct_context_query has_context,
                                    ct_retry_facts_of facts_of, const void *launch, ct_failure_id *root, int *error,
                                    ct_failure_id *retried)
{
    if (retried)
        *retried = 0;
    ct_skip_verdict v = ct_launch_rule(s, in, n, has_context, root, error);
    if (v != CT_SKIP || !facts_of)
        return v;
    ct_retry_facts f;
    facts_of(launch, &f);
    return ct_retry_rule(s, &f, retried) ? CT_RUN_RETRY : CT_SKIP;
}

ct_skip_verdict ct_exec_rule(ct_store *s, const ct_range *reads, size_t n, bool has_context, ct_failure_id *root,
                             int *error, size_t *at)
{
    ct_failure_id found = root_of(s, reads, n, root, error);
    size_t first = 0;
    /* The ranges are looked at one by one only once the whole set carries
     * a root, which is rare; the oldest over all is the oldest of some
     * range, so one of them is found. */
    for (size_t i = 0; found && i < n; i++)
        if (ct_read_failure(s, &reads[i], 1, NULL) == found) {
            first = i;
            break;
        }
    if (at)
        *at = first;
    return skip_verdict(found, has_context);
}

ct_graph_use_verdict ct_graph_use_rule(const ct_graph_use_facts *f)
{
    bool surely_written = f->extent_known && !f->in_body;
    return (ct_graph_use_verdict){
        .checked = true,
        .tainted = true,
        .released = surely_written,
        .satisfies = surely_written && f->exact_node,
    };
}

ct_skip_verdict ct_batch_rule(ct_store *s, size_t n, ct_copy_sources sources, const void *batch, ct_range *room,
                              ct_context_query has_context, ct_failure_id *root, int *error, size_t *first)
{
    ct_failure_id found = 0;
    int found_error = 0;
    size_t i = 0;
    for (; i < n && !found; i++) {
        unsigned k = sources(batch, i, room);
        found = k ? ct_read_failure(s, room, k, &found_error) : 0;
    }
    if (root)
        *root = found;
    if (error)
        *error = found_error;
    if (first)
        *first = found ? i - 1 : n;
    return ct_skip_rule(found, has_context);
}

ct_stand_in_verdict ct_stand_in_rule(const ct_stand_in_facts *f)
{
    bool refused = f->refused == CT_REFUSED_IMAGE || (f->refused == CT_REFUSED_KERNEL && f->lookup);
    if (!refused || !f->runtime_image || f->eager)
        return CT_DRIVER_ANSWERS;
    return f->library_ahead ? CT_DRIVER_ANSWERS_AHEAD : CT_STAND_IN;
}

ct_stand_in_call_verdict ct_stand_in_call_rule(const ct_stand_in_call_facts *f)
{
    if (f->unloaded)
        return CT_STAND_IN_UNLOADED;
    if (!f->kernel)
        return CT_STAND_IN_DEFERRED;
    if (f->gets_function)
        return CT_STAND_IN_ITSELF;
    return f->sets_node ? CT_STAND_IN_REPLACED : CT_STAND_IN_DEFERRED;
}

ct_region_verdict ct_region_rule(const ct_region_facts *f)
{
    if (f->freeing)
        return f->is_region_base ? CT_REGION_DONE : CT_REGION_UNKNOWN;
    if (f->bytes == 0 || f->overflows)
        return CT_REGION_EMPTY;
    if (!f->within_allocation)
        return CT_REGION_OUTSIDE;
    return f->overlaps_region ? CT_REGION_OVERLAPS : CT_REGION_DONE;
}

const char *ct_region_verdict_text(ct_region_verdict v)
{
    switch (v) {
    case CT_REGION_DONE: return "done";
    case CT_REGION_EMPTY: return "it is empty or runs past the end of the address space";
    case CT_REGION_OUTSIDE: return "it does not lie wholly inside one device allocation cutaint knows";
    case CT_REGION_OVERLAPS: return "it overlaps a live region";
    case CT_REGION_UNKNOWN: return "no live region begins there";
    case CT_REGION_NO_MEMORY: return "cutaint is out of memory";
    }
    return "?";
}

bool ct_pool_rule(const ct_pool_facts *f)
{
    return !f->said && !f->in_region && f->from > f->allocation && f->pointers >= CT_POOL_POINTERS;
}

bool ct_bypass_rule(const ct_bypass_facts *f)
{
    bool initialised = f->as_exit_began == CT_DRIVER_INITIALISED || f->at_unload == CT_DRIVER_INITIALISED;
    return !f->reached && !f->forked && f->driver_loaded && initialised;
}

bool ct_suspect_rule(uint64_t epoch, const ct_proven *p)
{
    if (p->context >= epoch || p->stream >= epoch)
        return false;
    return p->nonblocking || p->blocking < epoch;
}

/* ---- library calls ------------------------------------------------------ */

/* a * b, or CT_TO_END past 2^64. */
static uint64_t mul_or_end(uint64_t a, uint64_t b)
{
    uint64_t r;
    return __builtin_mul_overflow(a, b, &r) ? CT_TO_END : r;
}

static uint64_t add_or_end(uint64_t a, uint64_t b)
{
    uint64_t r;
    return a == CT_TO_END || b == CT_TO_END || __builtin_add_overflow(a, b, &r) ? CT_TO_END : r;
}

uint64_t ct_lib_matrix_bytes(int64_t rows, int64_t cols, int64_t ld, uint64_t esize)
{
    if (rows < 0 || cols < 0 || ld < rows)
        return CT_TO_END;
    if (rows == 0 || cols == 0)
        return 0;
    uint64_t elements = add_or_end(mul_or_end((uint64_t)cols - 1, (uint64_t)ld), (uint64_t)rows);
    return elements == CT_TO_END ? CT_TO_END : mul_or_end(elements, esize);
}

uint64_t ct_lib_op_matrix_bytes(bool transposed, int64_t rows, int64_t cols, int64_t ld, uint64_t esize)
{
    return transposed ? ct_lib_matrix_bytes(cols, rows, ld, esize) : ct_lib_matrix_bytes(rows, cols, ld, esize);
}

uint64_t ct_lib_vector_bytes(int64_t n, int64_t inc, uint64_t esize)
{
    if (n <= 0)
        return 0;
    uint64_t step = inc < 0 ? 0 - (uint64_t)inc : (uint64_t)inc;
    uint64_t elements = add_or_end(mul_or_end((uint64_t)n - 1, step), 1);
    return elements == CT_TO_END ? CT_TO_END : mul_or_end(elements, esize);
}

uint64_t ct_lib_count_bytes(int64_t n, uint64_t esize)
{
    return n < 0 ? CT_TO_END : mul_or_end((uint64_t)n, esize);
}

uint64_t ct_lib_strided_bytes(uint64_t one_bytes, int64_t stride, int64_t batch, uint64_t esize)
{
    if (batch < 0 || stride < 0)
        return CT_TO_END;
    if (batch == 0)
        return 0;
    uint64_t apart = mul_or_end(mul_or_end((uint64_t)batch - 1, (uint64_t)stride), esize);
    return apart == CT_TO_END ? CT_TO_END : add_or_end(apart, one_bytes);
}

uint64_t ct_lib_layout_bytes(const ct_lib_layout *l)
{
    if (!l->described || !l->plain_order || l->planar || l->pointer_array || l->rows > INT64_MAX || l->cols > INT64_MAX)
        return CT_TO_END;
    uint64_t one = ct_lib_op_matrix_bytes(l->row_major, (int64_t)l->rows, (int64_t)l->cols, l->ld, l->esize);
    return ct_lib_strided_bytes(one, l->stride, l->batch, l->esize);
}

bool ct_lib_reads_output(ct_lib_scalar beta)
{
    if (beta.zero)
        return false;
    if (!beta.host || beta.size == 0 || beta.size > 16) /* the widest scalar: a double complex */
        return true;
    /* Or-ed byte by byte: a memcmp call would cost more than the 2 to 16
     * bytes it compares, on every library call while anything is tainted. */
    const unsigned char *byte = beta.host;
    unsigned char any = 0;
    for (uint64_t i = 0; i < beta.size; i++)
        any |= byte[i];
    return any != 0;
}

/* Each kind's element bytes and which side is real. */
static const struct {
    uint8_t in_size, out_size;
    bool real_in, real_out;
} fft_kinds[CT_FFT_N_KINDS] = {
    [CT_FFT_C2C] = {8, 8, false, false}, [CT_FFT_Z2Z] = {16, 16, false, false}, [CT_FFT_R2C] = {4, 8, true, false},
    [CT_FFT_D2Z] = {8, 16, true, false}, [CT_FFT_C2R] = {8, 4, false, true},    [CT_FFT_Z2D] = {16, 8, false, true},
};

/* The elements one side spans: batch arrays of dims, laid out basic (side
 * NULL: side by side) or by side; CT_TO_END when the layout is invalid. */
static uint64_t fft_side_elements(const int64_t *dims, int64_t rank, int64_t batch, const ct_fft_side *side)
{
    uint64_t one = 1;
    for (int64_t d = 0; d < rank; d++)
        one = mul_or_end(one, (uint64_t)dims[d]);
    if (!side)
        return one == CT_TO_END ? CT_TO_END : mul_or_end(one, (uint64_t)batch);
    if (side->stride < 1 || side->dist < 0)
        return CT_TO_END;
    uint64_t last = 0, pitch = 1; /* the last element's offset in one array; a dimension's pitch */
    for (int64_t d = rank - 1; d >= 0; d--) {
        last = add_or_end(last, mul_or_end((uint64_t)dims[d] - 1, pitch));
        if (d > 0) {
            if (side->embed[d] < 1)
                return CT_TO_END;
            pitch = mul_or_end(pitch, (uint64_t)side->embed[d]);
        }
    }
    uint64_t apart = mul_or_end((uint64_t)batch - 1, (uint64_t)side->dist);
    return add_or_end(add_or_end(apart, mul_or_end(last, (uint64_t)side->stride)), 1);
}

void ct_lib_fft_bytes(const ct_fft_plan *p, bool in_place, uint64_t *in, uint64_t *out)
{
    *in = *out = CT_TO_END;
    if (p->kind < 0 || p->kind >= CT_FFT_N_KINDS || p->rank < 1 || p->rank > CT_FFT_MAX_RANK || p->batch < 1)
        return;
    int64_t real[CT_FFT_MAX_RANK], complex[CT_FFT_MAX_RANK];
    for (int64_t d = 0; d < p->rank; d++) {
        if (p->n[d] < 1)
            return;
        real[d] = complex[d] = p->n[d];
    }
    complex[p->rank - 1] = p->n[p->rank - 1] / 2 + 1; /* a real transform's Hermitian half */
    bool real_transform = fft_kinds[p->kind].real_in || fft_kinds[p->kind].real_out;
    const int64_t *in_dims = fft_kinds[p->kind].real_out ? complex : real;
    const int64_t *out_dims = fft_kinds[p->kind].real_in ? complex : real;
    uint64_t in_elements = fft_side_elements(in_dims, p->rank, p->batch, p->advanced ? &p->in : NULL);
    uint64_t out_elements = fft_side_elements(out_dims, p->rank, p->batch, p->advanced ? &p->out : NULL);
    *in = in_elements == CT_TO_END ? CT_TO_END : mul_or_end(in_elements, fft_kinds[p->kind].in_size);
    *out = out_elements == CT_TO_END ? CT_TO_END : mul_or_end(out_elements, fft_kinds[p->kind].out_size);
    if (in_place && real_transform && !p->advanced) {
        /* The real side is padded: its rows run 2 * (n / 2 + 1) reals. */
        uint64_t padded = fft_kinds[p->kind].real_in ? *out : *in;
        *in = *out = padded;
    }
}

ct_lib_verdict ct_lib_call_rule(ct_store *s, unsigned depth, const ct_range *in, size_t n, ct_failure_id *root,
                                int *error)
{
    if (depth > 0) {
        root_of(s, NULL, 0, root, error);
        return CT_LIB_PASS;
    }
    return root_of(s, in, n, root, error) ? CT_LIB_SKIP : CT_LIB_RUN;
}

bool ct_lib_wrote(int status, int success)
{
    return status == success;
}

bool ct_lib_info_failed(ct_lib_info_kind kind, int32_t info)
{
    return info < 0 || (info > 0 && kind == CT_INFO_NONZERO_FAILED);
}
