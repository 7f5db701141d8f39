/*
 * libcalls.c - the CUDA libraries' entry points (cuBLAS, cuBLASLt, cuRAND,
 * cuFFT, cuSOLVER, cuSPARSE) as work, generated from libcalls.def: a call whose inputs carry
 * a failure is skipped (its outputs take the root failure, it answers
 * CUTAINT_ON_SKIP in the library's own codes); one that returns an error
 * status taints what it was to write with a failure naming the call and the
 * status; one that succeeds releases exactly its outputs' extents.  Core
 * decides (rules.h, ct_lib_*); this file translates.
 *
 * Only the dynamically linked libraries are reachable: an exported
 * definition here comes before the library's own in the program's lookup,
 * and the real one is the next definition (dlsym RTLD_NEXT), or, where the
 * library was loaded into a local scope (a Python extension module is
 * dlopened RTLD_LOCAL, and the libcublas it needs with it), the one a
 * loaded object's own scope finds.  A lookup by dlsym on the library's own
 * handle gets the wrapper too (dlsym.c asks ct_lib_wrapper_find).  A
 * library linked statically into the program binds its calls at link time.
 *
 * cuFFT's executions take their extents from their plans: the calls that
 * make plans are wrapped to record each plan's shape (core/fftplans.h),
 * cufftDestroy to forget it.
 *
 * Invariants:
 * - The real function is never this library's own wrapper (asserted).
 * - Only the outermost wrapped library call of a thread is accounted
 *   (lib_depth: cuBLAS calls cuBLASLt); nested calls pass through, and so
 *   does every call under CUTAINT_DISABLE=1.
 * - A call has at most CT_LIB_RANGES extents each way (asserted).
 * - No heap allocation, lock or system call on the clean path (a plan
 *   lookup is lock-free; only making or destroying a plan takes the plan
 *   table's writers' flag); the driver calls the library makes inside are
 *   the driver wrappers' own.
 */
#include <assert.h>
#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>
#include <cublas_api.h>
#include <cufft.h>
#include <curand.h>
#include <cusolverDn.h>
#define DISABLE_CUSPARSE_DEPRECATED /* its deprecated legacy API: not ours to warn about */
#include <cusparse.h>

#include "fftplans.h"
#include "shim.h"

#define CT_LIB_RANGES 8

enum ct_lib_id {
#define CT_LIBRARY(lib, ...) CT_LIB_##lib,
#include "libcalls.def"
    CT_N_LIBS
};

/* A library's status type, success and execution failure, by its name. */
#define CT_LIBRARY(lib, status_type, success, exec_failure) \
    typedef status_type ct_status_##lib;                    \
    enum { ct_success_##lib = success, ct_exec_failure_##lib = exec_failure };
#include "libcalls.def"

static const char *const lib_names[CT_N_LIBS] = {
#define CT_LIBRARY(lib, ...) [CT_LIB_##lib] = #lib,
#include "libcalls.def"
};

/* What one call reads and writes, gathered from its row's extents.  Its
 * inputs are computed only while something is tainted anywhere
 * (ct_inputs_checked): a clean store has nothing for them to carry. */
typedef struct ct_lib_call {
    const char *api;
    int library;
    bool inputs_checked;
    unsigned n_in, n_out;
    ct_range in[CT_LIB_RANGES], out[CT_LIB_RANGES];
    const int *info; /* the devInfo its outputs wait on (CT_INFO), or NULL */
    ct_lib_info_kind info_kind;
    bool batched; /* a *Batched call: its matrices behind batch's arrays (CT_BATCH) */
    ct_reported_batch batch;
} ct_lib_call;

/* Library calls the thread is inside. */
static CT_HOT_TLS unsigned lib_depth;

/* The loaded objects' names, gathered under the loader's lock and opened
 * after it (dlopen inside dl_iterate_phdr's callback could wait on it). */
typedef struct loaded_objects {
    unsigned n, cap;
    char **names;
} loaded_objects;

static int gather_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    loaded_objects *l = data;
    if (info->dlpi_name && info->dlpi_name[0] && l->n < l->cap) {
        char *copy = strdup(info->dlpi_name);
        if (copy)
            l->names[l->n++] = copy;
    }
    return 0;
}

/* A definition of name no global lookup past this library finds: the one
 * a loaded object's own scope (itself and what it needs) finds, never this
 * library's.  Once per entry point at most, then cached. */
static void *local_definition(const char *name, const void *self)
{
    loaded_objects l = {0, 1024, calloc(1024, sizeof(char *))};
    if (!l.names)
        return NULL;
    dl_iterate_phdr(gather_object, &l);
    void *found = NULL;
    for (unsigned i = 0; i < l.n; i++) {
        void *handle = found ? NULL : dlopen(l.names[i], RTLD_LAZY | RTLD_NOLOAD);
        if (handle) {
            void *f = ct_real_dlsym(handle, name);
            found = f != self ? f : NULL;
            dlclose(handle);
        }
        free(l.names[i]);
    }
    free(l.names);
    return found;
}

static void *lib_real(void *_Atomic *slot, const char *name, void *self)
{
    void *real = atomic_load_explicit(slot, memory_order_acquire);
    if (CT_UNLIKELY(!real)) {
        real = ct_real_dlsym(RTLD_NEXT, name);
        if (!real)
            real = local_definition(name, self);
        assert(real != self && "the next definition is the library's, never our wrapper");
        (void)self;
        atomic_store_explicit(slot, real, memory_order_release);
    }
    return real;
}

static void add_range(ct_range *to, unsigned *n, uint64_t addr, uint64_t len)
{
    if (!addr || !len)
        return;
    assert(*n < CT_LIB_RANGES && "a row names at most CT_LIB_RANGES extents each way");
    to[(*n)++] = (ct_range){addr, len};
}

static void read_extent(ct_lib_call *c, const void *p, uint64_t len)
{
    add_range(c->in, &c->n_in, (uint64_t)(uintptr_t)p, len);
}

static void write_extent(ct_lib_call *c, const void *p, uint64_t len)
{
    add_range(c->out, &c->n_out, (uint64_t)(uintptr_t)p, len);
}

/* An element of a cudaDataType, in bytes. */
static uint64_t ct_lib_data_type_size(cudaDataType type)
{
    switch (type) {
    case CUDA_R_8I:
    case CUDA_R_8U: return 1;
    case CUDA_R_16F:
    case CUDA_R_16BF:
    case CUDA_C_8I:
    case CUDA_C_8U: return 2;
    case CUDA_R_32F:
    case CUDA_R_32I:
    case CUDA_R_32U:
    case CUDA_C_16F:
    case CUDA_C_16BF: return 4;
    case CUDA_R_64F:
    case CUDA_C_32F: return 8;
    case CUDA_C_64F: return 16;
    default: return CT_TO_END; /* unknown: its matrices run to their allocations' ends */
    }
}

/* A dense cuSPARSE operand: where its values lie and their bytes, as the
 * library's own getter says at the call (a host-side read of the
 * descriptor); none when there is no getter or it refuses. */
typedef struct dense_operand {
    const void *at;
    uint64_t bytes;
} dense_operand;

typedef cusparseStatus_t dense_vector_get(cusparseConstDnVecDescr_t, int64_t *, const void **, cudaDataType *);
typedef cusparseStatus_t dense_matrix_get(cusparseConstDnMatDescr_t, int64_t *, int64_t *, int64_t *, const void **,
                                          cudaDataType *, cusparseOrder_t *);

static dense_operand dense_vector(cusparseConstDnVecDescr_t d)
{
    static void *_Atomic slot;
    dense_vector_get *get = (dense_vector_get *)lib_real(&slot, "cusparseConstDnVecGet", (void *)dense_vector);
    int64_t size;
    const void *values;
    cudaDataType type;
    if (!get || !d || get(d, &size, &values, &type) != CUSPARSE_STATUS_SUCCESS)
        return (dense_operand){NULL, 0};
    return (dense_operand){values, ct_lib_count_bytes(size, ct_lib_data_type_size(type))};
}

/* Column-major: columns ld apart; row-major: rows ld apart. */
static dense_operand dense_matrix(cusparseConstDnMatDescr_t d)
{
    static void *_Atomic slot;
    dense_matrix_get *get = (dense_matrix_get *)lib_real(&slot, "cusparseConstDnMatGet", (void *)dense_matrix);
    int64_t rows, cols, ld;
    const void *values;
    cudaDataType type;
    cusparseOrder_t order;
    if (!get || !d || get(d, &rows, &cols, &ld, &values, &type, &order) != CUSPARSE_STATUS_SUCCESS)
        return (dense_operand){NULL, 0};
    return (dense_operand){values, ct_lib_op_matrix_bytes(order == CUSPARSE_ORDER_ROW, rows, cols, ld,
                                                          ct_lib_data_type_size(type))};
}

/* beta as cuBLAS takes it: a pointer into device memory
 * (CUBLAS_POINTER_MODE_DEVICE) is never dereferenced. */
static ct_lib_scalar blas_scalar(const void *beta, uint64_t size)
{
    bool on_device = !beta || ct_store_resolve(ct_g.store, (uint64_t)(uintptr_t)beta, NULL, NULL);
    return (ct_lib_scalar){.host = on_device ? NULL : beta, .size = size};
}

typedef cusparseStatus_t sparse_mode_get(cusparseHandle_t, cusparsePointerMode_t *);

/* beta of a cuSPARSE call, of its compute type: on the host only under the
 * handle's CUSPARSE_POINTER_MODE_HOST (a mode the library would not tell:
 * on the device). */
static ct_lib_scalar sparse_scalar(cusparseHandle_t handle, const void *beta, cudaDataType type)
{
    static void *_Atomic slot;
    sparse_mode_get *get = (sparse_mode_get *)lib_real(&slot, "cusparseGetPointerMode", (void *)sparse_scalar);
    cusparsePointerMode_t mode = CUSPARSE_POINTER_MODE_DEVICE;
    if (!get || get(handle, &mode) != CUSPARSE_STATUS_SUCCESS)
        mode = CUSPARSE_POINTER_MODE_DEVICE;
    ct_lib_scalar scalar = blas_scalar(beta, ct_lib_data_type_size(type));
    if (mode != CUSPARSE_POINTER_MODE_HOST)
        scalar.host = NULL;
    return scalar;
}

typedef cublasStatus_t matmul_desc_get(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, void *, size_t, size_t *);

/* One int32_t attribute of a matmul descriptor; false: the library would
 * not say. */
static bool matmul_attribute(matmul_desc_get *get, cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attribute,
                             int32_t *value)
{
    size_t written = 0;
    return get(d, attribute, value, sizeof *value, &written) == CUBLAS_STATUS_SUCCESS && written == sizeof *value;
}

/* beta of a cublasLtMatmul, of its descriptor's scale type, where its
 * pointer mode says: on the host (HOST, ALPHA_DEVICE_VECTOR_BETA_HOST),
 * zero (ALPHA_DEVICE_VECTOR_BETA_ZERO) or on the device (the rest, and a
 * descriptor the library would not describe). */
static ct_lib_scalar matmul_scalar(cublasLtMatmulDesc_t desc, const void *beta)
{
    static void *_Atomic slot;
    matmul_desc_get *get = (matmul_desc_get *)lib_real(&slot, "cublasLtMatmulDescGetAttribute", (void *)matmul_scalar);
    int32_t type = 0, mode = CUBLASLT_POINTER_MODE_DEVICE;
    if (!get || !desc || !matmul_attribute(get, desc, CUBLASLT_MATMUL_DESC_SCALE_TYPE, &type) ||
        !matmul_attribute(get, desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, &mode))
        return (ct_lib_scalar){.size = CT_TO_END};
    ct_lib_scalar scalar = blas_scalar(beta, ct_lib_data_type_size((cudaDataType)type));
    scalar.zero = mode == CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO;
    if (mode != CUBLASLT_POINTER_MODE_HOST && mode != CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST)
        scalar.host = NULL;
    return scalar;
}

typedef cublasStatus_t layout_get(cublasLtMatrixLayout_t, cublasLtMatrixLayoutAttribute_t, void *, size_t, size_t *);

/* One attribute of a layout; false: the library would not say. */
static bool layout_attribute(layout_get *get, cublasLtMatrixLayout_t d, cublasLtMatrixLayoutAttribute_t attribute,
                             void *value, size_t size)
{
    size_t written = 0;
    return get(d, attribute, value, size, &written) == CUBLAS_STATUS_SUCCESS && written == size;
}

/* A cuBLASLt matrix's bytes as its layout describes it, at the call; core
 * decides what a layout it cannot describe covers (ct_lib_layout_bytes). */
static uint64_t layout_bytes(cublasLtMatrixLayout_t d)
{
    static void *_Atomic slot;
    layout_get *get = (layout_get *)lib_real(&slot, "cublasLtMatrixLayoutGetAttribute", (void *)layout_bytes);
    uint32_t type = 0, batch_mode = 0;
    int32_t order = CUBLASLT_ORDER_COL, batch = 1;
    int64_t plane = 0;
    ct_lib_layout l = {0};
    l.described = get && d && layout_attribute(get, d, CUBLASLT_MATRIX_LAYOUT_TYPE, &type, sizeof type) &&
                  layout_attribute(get, d, CUBLASLT_MATRIX_LAYOUT_ROWS, &l.rows, sizeof l.rows) &&
                  layout_attribute(get, d, CUBLASLT_MATRIX_LAYOUT_COLS, &l.cols, sizeof l.cols) &&
                  layout_attribute(get, d, CUBLASLT_MATRIX_LAYOUT_LD, &l.ld, sizeof l.ld);
    if (l.described) {
        /* Absent from older libraries: their defaults. */
        (void)layout_attribute(get, d, CUBLASLT_MATRIX_LAYOUT_ORDER, &order, sizeof order);
        (void)layout_attribute(get, d, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch);
        (void)layout_attribute(get, d, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &l.stride, sizeof l.stride);
        (void)layout_attribute(get, d, CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET, &plane, sizeof plane);
        (void)layout_attribute(get, d, CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, &batch_mode, sizeof batch_mode);
    }
    l.plain_order = order == CUBLASLT_ORDER_COL || order == CUBLASLT_ORDER_ROW;
    l.row_major = order == CUBLASLT_ORDER_ROW;
    l.planar = plane != 0;
    l.pointer_array = batch_mode != 0;
    l.batch = batch;
    l.esize = ct_lib_data_type_size((cudaDataType)type);
    return ct_lib_layout_bytes(&l);
}

/* The cuFFT plans made through these wrappers, by handle. */
static ct_fft_plans fft_plans;

/* A cufftType as core's kind; -1 (no kind: CT_TO_END) for one it lacks. */
static int64_t fft_kind(cufftType type)
{
    switch (type) {
    case CUFFT_C2C: return CT_FFT_C2C;
    case CUFFT_Z2Z: return CT_FFT_Z2Z;
    case CUFFT_R2C: return CT_FFT_R2C;
    case CUFFT_D2Z: return CT_FFT_D2Z;
    case CUFFT_C2R: return CT_FFT_C2R;
    case CUFFT_Z2D: return CT_FFT_Z2D;
    default: return -1;
    }
}

static ct_fft_plan fft_dims(cufftType type, long long batch, int rank, int nx, int ny, int nz)
{
    return (ct_fft_plan){.kind = fft_kind(type), .rank = rank, .batch = batch, .n = {nx, ny, nz}};
}

/* cufftPlanMany's arrays, of int or long long (the _64 forms): read once
 * the library accepted them.  A rank past CT_FFT_MAX_RANK is kept for core
 * to refuse, its arrays not read past it. */
#define CT_FFT_MANY_OF(suffix, T)                                                                                 \
    static ct_fft_plan fft_many_##suffix(cufftType type, long long batch, int rank, const T *n, const T *inembed, \
                                         long long istride, long long idist, const T *onembed, long long ostride, \
                                         long long odist)                                                         \
    {                                                                                                             \
        ct_fft_plan p = {.kind = fft_kind(type),                                                                  \
                         .rank = n ? rank : 0,                                                                    \
                         .batch = batch,                                                                          \
                         .advanced = inembed && onembed,                                                          \
                         .in = {.stride = istride, .dist = idist},                                                \
                         .out = {.stride = ostride, .dist = odist}};                                              \
        for (int d = 0; n && d < rank && d < CT_FFT_MAX_RANK; d++) {                                              \
            p.n[d] = n[d];                                                                                        \
            p.in.embed[d] = p.advanced ? inembed[d] : 0;                                                          \
            p.out.embed[d] = p.advanced ? onembed[d] : 0;                                                         \
        }                                                                                                         \
        return p;                                                                                                 \
    }
CT_FFT_MANY_OF(int, int)
CT_FFT_MANY_OF(long, long long)

static void fft_plan_made(int handle, ct_fft_plan p)
{
    static atomic_bool said;
    if (!ct_fft_plans_record(&fft_plans, handle, &p) && !atomic_exchange(&said, true))
        ct_log(CT_LOG_WARN,
               "more cuFFT plans than cutaint keeps (%d): executions of the plans past them are taken to cover "
               "the rest of their buffers' allocations",
               CT_FFT_SLOTS);
}

/* An execution of plan over idata -> odata: what it reads (input) or
 * writes; a plan never seen made runs to its buffers' allocations' ends. */
static uint64_t fft_bytes(cufftHandle plan, const void *idata, const void *odata, bool input)
{
    ct_fft_plan p;
    uint64_t in, out;
    if (!ct_fft_plans_find(&fft_plans, plan, &p))
        return CT_TO_END;
    ct_lib_fft_bytes(&p, idata == odata, &in, &out);
    return input ? in : out;
}

/* The name of a library's status, for the failure and the log. */
static const char *status_name(int lib, int status)
{
#define CT_LIB_STATUS(lib_, status_)                      \
    if (lib == CT_LIB_##lib_ && status == (int)(status_)) \
        return #status_;
#include "libcalls.def"
    return "an unknown status";
}

/* The first of in[n] carrying a failure: the input a skip names. */
static uint64_t carried_input(const ct_range *in, unsigned n)
{
    unsigned carrying = 0;
    while (carrying + 1 < n && !ct_read_failure(ct_g.store, &in[carrying], 1, NULL))
        carrying++;
    return in[carrying].addr;
}

/* Outputs of api, which read needed carrying root, take root: a skipped
 * step of its path. */
static void lib_pass_on(const char *api, ct_failure_id root, uint64_t needed, const ct_range *out, unsigned n_out)
{
    ct_skip_desc skip = {
        .api = api,
        .needed = needed,
        .produced = n_out,
        .thread = ct_thread_id(),
        .time_ns = ct_now_ns(),
    };
    ct_propagate(ct_g.store, root, &skip, out, n_out);
    ct_tell_if_host_visible(out, n_out);
    atomic_fetch_add(&ct_g.skips, 1);
    ct_event_skip(root, &skip);
}

/* An input carries a failure: the call is not made; its outputs take the
 * root, and the answer is CUTAINT_ON_SKIP's in the library's codes. */
static int lib_skip(const ct_lib_call *c, ct_failure_id root, int success, int exec_failure)
{
    lib_pass_on(c->api, root, carried_input(c->in, c->n_in), c->out, c->n_out);
    return ct_skip_result(ct_g.cfg.on_skip, exec_failure, success);
}

/* What was to be written carries a failure naming the call and its status
 * (status_text: its name; "devInfo=" for a value reported on the device). */
static void lib_failed(const char *api, int library, const char *status_text, int status, const ct_range *out,
                       unsigned n_out)
{
    ct_failure_desc failed = {
        .error = CUDA_ERROR_UNKNOWN,
        .api = api,
        .status = status_text,
        .lib_status = status,
        .thread = ct_thread_id(),
        .time_ns = ct_now_ns(),
    };
    ct_occurrence occ;
    ct_failure_id id = ct_taint(ct_g.store, &failed, out, n_out, &occ);
    ct_tell_if_host_visible(out, n_out);
    atomic_fetch_add(&ct_g.occurrences, 1);
    ct_metrics_library_failure_event(lib_names[library]);
    if (occ.is_new && id) {
        atomic_fetch_add(&ct_g.failures, 1);
        ct_event_failure(id, &failed, false, NULL, NULL);
    } else if (id) {
        ct_event_repeat(id, &failed, &occ, false);
    } else {
        char text[128];
        ct_log(CT_LOG_WARN, "%s returned %s; it was to write no memory cutaint tracks", api,
               ct_lib_status_text(&failed, text, sizeof text));
    }
}

/* A call that wrote its outputs and a devInfo: they wait for the program's
 * next synchronous read of them (ct_lib_reported_before_read), devInfo
 * itself not among them (it holds the library's answer, which is data). */
static void lib_wait_on_info(const ct_lib_call *c)
{
    ct_reported r = {.api = c->api, .library = c->library, .kind = c->info_kind};
    r.info = (ct_range){(uint64_t)(uintptr_t)c->info, sizeof *c->info};
    for (unsigned i = 0; i < c->n_out; i++)
        if (c->out[i].addr != r.info.addr)
            r.out[r.n_out++] = c->out[i];
    for (unsigned i = 0; i < r.n_out; i++)
        (void)ct_store_resolve(ct_g.store, r.out[i].addr, &r.bases[r.n_bases++], NULL);
    (void)ct_store_resolve(ct_g.store, r.info.addr, &r.bases[r.n_bases++], NULL);
    ct_reported_add(ct_g.reported, &r);
}

/* A *Batched call whose matrices matter (it failed, or something is
 * tainted): they wait, behind its pointer arrays, for the program's next
 * synchronous read of anything (lib_resolve_batch). */
static void lib_wait_on_batch(const ct_lib_call *c, int status, bool succeeded)
{
    ct_reported r = {.api = c->api, .library = c->library, .batch = c->batch, .n_out = 1};
    r.out[0] = (ct_range){0, CT_TO_END};
    r.batch.status = status;
    r.batch.succeeded = succeeded;
    for (unsigned k = 0; k < 3; k++)
        (void)ct_store_resolve(ct_g.store, r.batch.arrays[k], &r.bases[r.n_bases++], NULL);
    ct_reported_add(ct_g.reported, &r);
}

/* The call ran and returned status. */
static void lib_settle(const ct_lib_call *c, int status, int success)
{
    if (ct_lib_wrote(status, success)) {
        /* Nothing tainted anywhere: nothing to release. */
        if (c->n_out && ct_store_tainted(ct_g.store))
            ct_written(ct_g.store, c->out, c->n_out);
        if (c->info)
            lib_wait_on_info(c);
        if (c->batched && c->inputs_checked)
            lib_wait_on_batch(c, status, true);
        return;
    }
    if (c->batched) {
        ct_log(CT_LOG_WARN, "%s returned %s (%d); its matrices take the failure at the next synchronous read", c->api,
               status_name(c->library, status), status);
        lib_wait_on_batch(c, status, false);
        return;
    }
    lib_failed(c->api, c->library, status_name(c->library, status), status, c->out, c->n_out);
}

/* Pointer arrays past this many are not read (a batch's pointers are read
 * to the host whole): its matrices are not followed. */
#define CT_BATCH_MAX 65536

/* One matrix of a batch: what it reads (A, B, and C unless beta is zero)
 * and C; the store decides as for any library call. */
static void settle_batch_matrix(const ct_reported *r, const uint64_t *a, const uint64_t *b, const uint64_t *c)
{
    const ct_reported_batch *batch = &r->batch;
    ct_range in[3] = {{*a, batch->bytes[0]}, {*b, batch->bytes[1]}, {*c, batch->bytes[2]}};
    ct_range out = in[2];
    unsigned n_in = batch->c_read ? 3 : 2;
    ct_failure_id root = 0;
    if (ct_lib_call_rule(ct_g.store, 0, in, n_in, &root, NULL) == CT_LIB_SKIP)
        lib_pass_on(r->api, root, carried_input(in, n_in), &out, 1);
    else if (out.addr && out.len)
        ct_written(ct_g.store, &out, 1);
}

/* A waiting *Batched call: its pointer arrays read now (the program's
 * read synchronises anyway), then its C matrices take its failure, or, one
 * by one, what their inputs carry, or are released. */
static void lib_resolve_batch(const ct_reported *r, __typeof__(&cuMemcpyDtoH_v2) copy)
{
    const ct_reported_batch *batch = &r->batch;
    if (batch->count <= 0 || batch->count > CT_BATCH_MAX) {
        ct_log(CT_LOG_DEBUG, "%s: a batch of %lld is not followed", r->api, (long long)batch->count);
        return;
    }
    size_t n = (size_t)batch->count;
    uint64_t *ptrs = calloc(3 * n, sizeof *ptrs);
    ct_range *c_ranges = calloc(n, sizeof *c_ranges);
    bool read = ptrs && c_ranges && copy;
    for (unsigned k = 0; read && k < 3; k++)
        read = copy(ptrs + k * n, batch->arrays[k], n * sizeof *ptrs) == CUDA_SUCCESS;
    if (!read)
        ct_log(CT_LOG_DEBUG, "%s: its pointer arrays could not be read; its matrices are not followed", r->api);
    else if (!batch->succeeded) {
        unsigned n_c = 0;
        for (size_t i = 0; i < n; i++)
            if (ptrs[2 * n + i] && batch->bytes[2])
                c_ranges[n_c++] = (ct_range){ptrs[2 * n + i], batch->bytes[2]};
        lib_failed(r->api, r->library, status_name(r->library, batch->status), batch->status, c_ranges, n_c);
    } else {
        for (size_t i = 0; i < n; i++)
            settle_batch_matrix(r, &ptrs[i], &ptrs[n + i], &ptrs[2 * n + i]);
    }
    free(ptrs);
    free(c_ranges);
}

/* The program reads [src, src + bytes) synchronously: every devInfo waiting
 * on those bytes (or being them) is complete, ordered before this read by
 * the program's own synchronisation, and is read now with a copy of the
 * same kind (4 bytes, adding no synchronisation the program's read does
 * not make; entry: the program's read's).  A value the library documents
 * as "not computed" taints the outputs it vouches for, so the read rule
 * refuses them. */
void ct_lib_reported_before_read(int entry, uint64_t src, uint64_t bytes)
{
    /* The program's own kind of copy: a per-thread default stream's orders
     * only against its own stream, as the program's read does. */
    int same_kind = entry == CT_ID_cuMemcpyDtoH_v2_ptds ? entry : CT_ID_cuMemcpyDtoH_v2;
    __typeof__(&cuMemcpyDtoH_v2) copy = (__typeof__(&cuMemcpyDtoH_v2))ct_real(same_kind);
    ct_reported r;
    while (ct_reported_take(ct_g.reported, &(ct_range){src, bytes}, &r)) {
        int32_t info = 0;
        if (!r.info.len) {
            lib_resolve_batch(&r, copy);
            continue;
        }
        if (!copy || copy(&info, r.info.addr, sizeof info) != CUDA_SUCCESS) {
            ct_log(CT_LOG_DEBUG, "%s: its devInfo at 0x%llx could not be read; its outputs are not checked", r.api,
                   (unsigned long long)r.info.addr);
            continue;
        }
        if (ct_lib_info_failed(r.kind, info))
            lib_failed(r.api, r.library, "devInfo=", info, r.out, r.n_out);
    }
}

/* Whether the call is made (*verdict RUN, or PASS inside another library
 * call); false: it was skipped, and *answer is what it returns. */
static bool lib_begin(const ct_lib_call *c, int success, int exec_failure, ct_lib_verdict *verdict, int *answer)
{
    ct_failure_id root = 0;
    *verdict = ct_lib_call_rule(ct_g.store, lib_depth, c->in, c->n_in, &root, NULL);
    if (*verdict != CT_LIB_SKIP)
        return true;
    *answer = lib_skip(c, root, success, exec_failure);
    return false;
}

/* The call's record, its ranges left for its extents to fill (no zeroing:
 * the clean path writes only what it uses). */
static void lib_call_begin(ct_lib_call *c, const char *api, int library)
{
    c->api = api;
    c->library = library;
    c->inputs_checked = ct_inputs_checked(ct_store_tainted(ct_g.store), false);
    c->n_in = c->n_out = 0;
    c->info = NULL;
    c->batched = false;
}

/* CUTAINT_DISABLE=1: a plain pass-through. */
static bool lib_tracked(void)
{
    ct_ensure_ready();
    return !ct_g.cfg.disable;
}

#define CT_R(p, bytes)    \
    if (c.inputs_checked) \
        read_extent(&c, p, bytes);
#define CT_W(p, bytes) write_extent(&c, p, bytes);
#define CT_RW(p, bytes) CT_R(p, bytes) CT_W(p, bytes)
#define CT_R_SCALED(p, bytes, beta)                    \
    if (c.inputs_checked && ct_lib_reads_output(beta)) \
        read_extent(&c, p, bytes);
#define CT_RW_BETA(p, bytes, beta, T) CT_R_SCALED(p, bytes, CT_BLAS_BETA(beta, T)) CT_W(p, bytes)
#define CT_BLAS_BETA(beta, T) blas_scalar(beta, sizeof(T))
#define CT_SPARSE_BETA(handle, beta, type) sparse_scalar(handle, beta, type)
#define CT_MATMUL_BETA(desc, beta) matmul_scalar(desc, beta)
#define CT_INFO(p, kind) \
    c.info = p;          \
    c.info_kind = kind;
/* C is read (beta not a host zero) asked only while something is tainted:
 * a clean call's success records nothing. */
#define CT_BATCH(a_arr, a_len, b_arr, b_len, c_arr, c_len, n_batch, beta_ptr, T)                              \
    c.batched = true;                                                                                         \
    c.batch = (ct_reported_batch){                                                                            \
        .arrays = {(uint64_t)(uintptr_t)(a_arr), (uint64_t)(uintptr_t)(b_arr), (uint64_t)(uintptr_t)(c_arr)}, \
        .bytes = {a_len, b_len, c_len},                                                                       \
        .count = (int64_t)(n_batch),                                                                          \
        .c_read = c.inputs_checked && ct_lib_reads_output(blas_scalar(beta_ptr, sizeof(T))),                  \
    };
#define CT_NONE
#define CT_MAT(rows, cols, ld, esize) ct_lib_matrix_bytes(rows, cols, ld, esize)
#define CT_OPMAT(op, rows, cols, ld, esize) ct_lib_op_matrix_bytes((op) != CUBLAS_OP_N, rows, cols, ld, esize)
#define CT_VEC(n, inc, esize) ct_lib_vector_bytes(n, inc, esize)
#define CT_COUNT(n, esize) ct_lib_count_bytes((int64_t)(n), esize)
#define CT_STRIDED(one, stride, batch, esize) ct_lib_strided_bytes(one, stride, batch, esize)
#define CT_ONE(T) sizeof(T)
#define CT_WHOLE CT_TO_END
#define CT_FFT_IN(plan, idata, odata) fft_bytes(plan, idata, odata, true)
#define CT_FFT_OUT(plan, idata, odata) fft_bytes(plan, idata, odata, false)
#define CT_FFT_DIMS(type, batch, rank, nx, ny, nz) fft_dims(type, batch, rank, nx, ny, nz)
#define CT_FFT_MANY(type, batch, rank, n, inembed, istride, idist, onembed, ostride, odist) \
    _Generic((n), int *: fft_many_int, default: fft_many_long)(type, batch, rank, n, inembed, istride, idist, onembed, \
                                                               ostride, odist)
#define CT_LAYOUT(d) layout_bytes(d)
#define CT_DNVEC_AT(d) dense_vector(d).at
#define CT_DNVEC_BYTES(d) dense_vector(d).bytes
#define CT_DNMAT_AT(d) dense_matrix(d).at
#define CT_DNMAT_BYTES(d) dense_matrix(d).bytes

#define CT_LIBCALL(lib, name, params, args, extents)                                     \
    typedef ct_status_##lib ct_libfn_##name params;                                      \
    CT_EXPORT ct_status_##lib name params                                                \
    {                                                                                    \
        static void *_Atomic slot;                                                       \
        ct_libfn_##name *real = (ct_libfn_##name *)lib_real(&slot, #name, (void *)name); \
        if (CT_UNLIKELY(!real))                                                          \
            return (ct_status_##lib)ct_exec_failure_##lib;                               \
        if (!lib_tracked())                                                              \
            return real args;                                                            \
        ct_lib_call c;                                                                   \
        lib_call_begin(&c, #name, CT_LIB_##lib);                                         \
        extents ct_lib_verdict verdict;                                                  \
        int answer;                                                                      \
        if (!lib_begin(&c, ct_success_##lib, ct_exec_failure_##lib, &verdict, &answer))  \
            return (ct_status_##lib)answer;                                              \
        lib_depth++;                                                                     \
        ct_status_##lib status = real args;                                              \
        lib_depth--;                                                                     \
        if (verdict == CT_LIB_RUN)                                                       \
            lib_settle(&c, (int)status, ct_success_##lib);                               \
        return status;                                                                   \
    }

/* cuFFT's plan calls: no work, passed through; what they made is recorded
 * (a remake replaces it, a destroy forgets it first: the handle may be
 * reused as soon as it returns). */
#define CT_FFT_WRAPPER(name, params, args, before, after)                                \
    typedef cufftResult ct_libfn_##name params;                                          \
    CT_EXPORT cufftResult name params                                                    \
    {                                                                                    \
        static void *_Atomic slot;                                                       \
        ct_libfn_##name *real = (ct_libfn_##name *)lib_real(&slot, #name, (void *)name); \
        if (CT_UNLIKELY(!real))                                                          \
            return (cufftResult)ct_exec_failure_cufft;                                   \
        bool tracked = lib_tracked();                                                    \
        if (tracked) {                                                                   \
            before                                                                       \
        }                                                                                \
        cufftResult status = real args;                                                  \
        if (tracked) {                                                                   \
            after                                                                        \
        }                                                                                \
        return status;                                                                   \
    }
#define CT_FFT_PLAN(name, params, args, shape) \
    CT_FFT_WRAPPER(name, params, args, , if (status == CUFFT_SUCCESS && plan) fft_plan_made(*plan, shape);)
#define CT_FFT_MAKE_PLAN(name, params, args, shape)                                               \
    CT_FFT_WRAPPER(name, params, args, , if (status == CUFFT_SUCCESS) fft_plan_made(plan, shape); \
                   else ct_fft_plans_forget(&fft_plans, plan);)
#define CT_FFT_DESTROY(name, params, args) CT_FFT_WRAPPER(name, params, args, ct_fft_plans_forget(&fft_plans, plan);, )
#include "libcalls.def"

/* Every wrapper by its name, for the dlsym hook: a lookup on the library's
 * own handle (dlopen("libcublas.so.13"), then dlsym) gets the wrapper. */
static const struct {
    const char *name;
    void *wrapper;
} lib_wrappers[] = {
#define CT_LIB_WRAPPER(name, ...) {#name, (void *)name},
#define CT_LIBCALL(lib, name, ...) CT_LIB_WRAPPER(name)
#define CT_FFT_PLAN CT_LIB_WRAPPER
#define CT_FFT_MAKE_PLAN CT_LIB_WRAPPER
#define CT_FFT_DESTROY CT_LIB_WRAPPER
#include "libcalls.def"
#undef CT_LIB_WRAPPER
};

/* A linear look: only a library's lookups through dlsym come here, once
 * per name in a program that caches them. */
void *ct_lib_wrapper_find(const char *name)
{
    for (size_t i = 0; i < sizeof lib_wrappers / sizeof lib_wrappers[0]; i++)
        if (strcmp(lib_wrappers[i].name, name) == 0)
            return lib_wrappers[i].wrapper;
    return NULL;
}
