/*
 * test_vmm.c: virtual memory management: granularity, reservations,
 * physical handles, mapping with access, kernels and copies through a
 * mapping, faults on unmapped or inaccessible reserved addresses, remapping,
 * accounting in cuMemGetInfo, and bad arguments.
 */
#include "fc_test.h"

#include <stdlib.h>

#define MIB ((size_t)1 << 20)
#define GRAN (2 * MIB)

static CUmemAllocationProp device_prop(void)
{
    CUmemAllocationProp p = {0};
    p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = 0;
    return p;
}

static CUmemGenericAllocationHandle create(size_t size)
{
    CUmemAllocationProp p = device_prop();
    CUmemGenericAllocationHandle h;
    OK(cuMemCreate(&h, size, &p, 0));
    return h;
}

static void grant(CUdeviceptr p, size_t size, unsigned long long flags)
{
    CUmemAccessDesc d = {.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0}, .flags = flags};
    OK(cuMemSetAccess(p, size, &d, 1));
}

/* A reservation of `size` with handle h mapped at its start, read-write. */
static CUdeviceptr reserve_and_map(size_t size, CUmemGenericAllocationHandle h, size_t mapped)
{
    CUdeviceptr p;
    OK(cuMemAddressReserve(&p, size, 0, 0, 0));
    OK(cuMemMap(p, mapped, 0, h, 0));
    grant(p, mapped, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    return p;
}

static CUresult fill(CUdeviceptr out, int n, float v)
{
    void *args[] = {&out, &n, &v};
    return fc_launch(fc_function("_Z4fillPfif"), (unsigned)n, args, false, NULL);
}

static size_t free_bytes(void)
{
    size_t f, t;
    OK(cuMemGetInfo(&f, &t));
    return f;
}

Test(vmm, granularity_and_the_device_attribute)
{
    fc_setup();
    CUmemAllocationProp p = device_prop();
    size_t g = 0;
    OK(cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    cr_assert_eq(g, GRAN);
    OK(cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    cr_assert_eq(g, GRAN);
    int on = 0;
    OK(cuDeviceGetAttribute(&on, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 0));
    cr_assert_eq(on, 1);
    FAILS(cuMemGetAllocationGranularity(NULL, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemGetAllocationGranularity(&g, NULL, CU_MEM_ALLOC_GRANULARITY_MINIMUM), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemGetAllocationGranularity(&g, &p, (CUmemAllocationGranularity_flags)7), CUDA_ERROR_INVALID_VALUE);
    p.location.id = 1;
    FAILS(cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM), CUDA_ERROR_INVALID_DEVICE);
    p = device_prop();
    p.type = CU_MEM_ALLOCATION_TYPE_INVALID;
    FAILS(cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM), CUDA_ERROR_INVALID_VALUE);
}

Test(vmm, map_set_access_kernel_write_copy_back_unmap)
{
    fc_setup();
    CUmemGenericAllocationHandle h = create(GRAN);
    CUdeviceptr p = reserve_and_map(4 * GRAN, h, GRAN);
    cr_assert_eq(p % GRAN, 0, "reservations are aligned to the granularity");
    enum { N = 1024 };
    OK(fill(p, N, 3.5f));
    float host[N];
    OK(cuMemcpyDtoH(host, p, sizeof host));
    for (int i = 0; i < N; i++)
        cr_assert_eq(host[i], 3.5f, "host[%d] = %g", i, (double)host[i]);
    for (int i = 0; i < N; i++)
        host[i] = (float)i;
    OK(cuMemcpyHtoD(p + GRAN - sizeof host, host, sizeof host)); /* the mapping's last bytes */
    OK(cuMemsetD32(p, 0x40000000u, 4));                          /* 2.0f */
    float back[N];
    OK(cuMemcpyDtoH(back, p + GRAN - sizeof back, sizeof back));
    cr_assert_eq(back[N - 1], (float)(N - 1));
    OK(cuMemcpyDtoH(back, p, 4 * sizeof(float)));
    cr_assert_eq(back[3], 2.0f);

    CUdeviceptr base = 0;
    size_t size = 0;
    OK(cuMemGetAddressRange(&base, &size, p + 100));
    cr_assert(base == p && size == GRAN, "a mapping's range is the mapping");
    FAILS(cuMemGetAddressRange(&base, &size, p + GRAN), CUDA_ERROR_NOT_FOUND); /* reserved, unmapped */

    unsigned long long flags = 0;
    CUmemLocation dev = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
    OK(cuMemGetAccess(&flags, &dev, p + 8));
    cr_assert_eq(flags, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);

    CUmemGenericAllocationHandle again = 0;
    OK(cuMemRetainAllocationHandle(&again, (void *)(uintptr_t)(p + 4096)));
    cr_assert_eq(again, h, "the handle that was mapped");
    OK(cuMemRelease(again));
    CUmemAllocationProp got;
    OK(cuMemGetAllocationPropertiesFromHandle(&got, h));
    cr_assert(got.type == CU_MEM_ALLOCATION_TYPE_PINNED && got.location.type == CU_MEM_LOCATION_TYPE_DEVICE);

    OK(cuMemUnmap(p, GRAN));
    FAILS(cuMemcpyDtoH(back, p, sizeof back), CUDA_ERROR_INVALID_VALUE);
    OK(cuMemRelease(h));
    OK(cuMemAddressFree(p, 4 * GRAN));
    OK(cuCtxSynchronize());
}

Test(vmm, a_kernel_on_an_unmapped_reserved_address_faults_sticky)
{
    fc_setup();
    CUdeviceptr p;
    OK(cuMemAddressReserve(&p, GRAN, 0, 0, 0));
    OK(fill(p, 16, 1.0f)); /* a launch only queues */
    FAILS(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
    void *pinned = NULL;
    FAILS(cuMemAllocHost(&pinned, 16), CUDA_ERROR_ILLEGAL_ADDRESS);
}

Test(vmm, a_mapping_without_access_faults_like_an_unmapped_one)
{
    fc_setup();
    CUmemGenericAllocationHandle h = create(GRAN);
    CUdeviceptr p;
    OK(cuMemAddressReserve(&p, GRAN, 0, 0, 0));
    OK(cuMemMap(p, GRAN, 0, h, 0));
    float host[4] = {0};
    FAILS(cuMemcpyHtoD(p, host, sizeof host), CUDA_ERROR_INVALID_VALUE); /* a copy is refused at the call */
    unsigned long long flags = 99;
    CUmemLocation dev = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
    OK(cuMemGetAccess(&flags, &dev, p));
    cr_assert_eq(flags, CU_MEM_ACCESS_FLAGS_PROT_NONE, "mappings start inaccessible");
    OK(fill(p, 4, 1.0f));
    FAILS(cuStreamSynchronize(NULL), CUDA_ERROR_ILLEGAL_ADDRESS);
}

Test(vmm, remapping_the_same_address_reads_the_new_memory)
{
    fc_setup();
    CUmemGenericAllocationHandle a = create(GRAN), b = create(GRAN);
    CUdeviceptr p = reserve_and_map(GRAN, a, GRAN);
    OK(fill(p, 256, 7.0f));
    OK(cuMemUnmap(p, GRAN));
    OK(cuMemMap(p, GRAN, 0, b, 0));
    grant(p, GRAN, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    unsigned word = 0;
    OK(cuMemcpyDtoH(&word, p, sizeof word));
    cr_assert_eq(word, FC_STALE_WORD, "fresh physical memory holds stale bytes, not a's 7.0: %#x", word);
    OK(fill(p, 256, 9.0f));
    OK(cuMemUnmap(p, GRAN));
    OK(cuMemMap(p, GRAN, 0, a, 0)); /* a was never released: its bytes are still there */
    grant(p, GRAN, CU_MEM_ACCESS_FLAGS_PROT_READ);
    float v = 0;
    OK(cuMemcpyDtoH(&v, p + 255 * sizeof(float), sizeof v));
    cr_assert_eq(v, 7.0f);
    OK(cuMemUnmap(p, GRAN));
    OK(cuMemRelease(a));
    OK(cuMemRelease(b));
    OK(cuMemAddressFree(p, GRAN));
}

Test(vmm, handles_mapped_side_by_side_are_one_contiguous_range)
{
    fc_setup();
    CUmemGenericAllocationHandle a = create(GRAN), b = create(2 * GRAN);
    CUdeviceptr p;
    OK(cuMemAddressReserve(&p, 4 * GRAN, 0, 0, 0));
    OK(cuMemMap(p, GRAN, 0, a, 0));
    OK(cuMemMap(p + GRAN, GRAN, GRAN, b, 0));               /* the second half of b */
    grant(p, 2 * GRAN, CU_MEM_ACCESS_FLAGS_PROT_READWRITE); /* two whole mappings at once */
    /* a fill across the seam: one range, two handles */
    CUdeviceptr start = p + GRAN - 64 * sizeof(float);
    OK(fill(start, 128, 5.0f));
    float host[128];
    OK(cuMemcpyDtoH(host, start, sizeof host));
    for (int i = 0; i < 128; i++)
        cr_assert_eq(host[i], 5.0f, "host[%d]", i);
    /* a range running past the mapped part faults: 2 * GRAN onwards is unmapped */
    OK(fill(p + 2 * GRAN - 16 * sizeof(float), 32, 1.0f));
    FAILS(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
}

Test(vmm, physical_memory_counts_until_released_and_unmapped)
{
    fc_setup();
    size_t f0 = free_bytes();
    CUmemGenericAllocationHandle h = create(2 * GRAN);
    cr_assert_eq(free_bytes(), f0 - 2 * GRAN);
    CUdeviceptr p;
    OK(cuMemAddressReserve(&p, 64 * GRAN, 0, 0, 0));
    cr_assert_eq(free_bytes(), f0 - 2 * GRAN, "a reservation costs no memory");
    OK(cuMemMap(p, 2 * GRAN, 0, h, 0));
    OK(cuMemRelease(h));
    cr_assert_eq(free_bytes(), f0 - 2 * GRAN, "released but mapped: still alive");
    FAILS(cuMemMap(p + 4 * GRAN, GRAN, 0, h, 0), CUDA_ERROR_INVALID_VALUE); /* released: not mappable */
    CUmemGenericAllocationHandle r;
    OK(cuMemRetainAllocationHandle(&r, (void *)(uintptr_t)p));
    OK(cuMemUnmap(p, 2 * GRAN));
    cr_assert_eq(free_bytes(), f0 - 2 * GRAN, "retained: still alive");
    OK(cuMemRelease(r));
    cr_assert_eq(free_bytes(), f0, "released and unmapped: freed");
    FAILS(cuMemRelease(r), CUDA_ERROR_INVALID_VALUE);
    OK(cuMemAddressFree(p, 64 * GRAN));
    /* the device size bounds physical memory as it bounds allocations */
    CUmemAllocationProp prop = device_prop();
    FAILS(cuMemCreate(&h, (f0 / GRAN + 1) * GRAN, &prop, 0), CUDA_ERROR_OUT_OF_MEMORY);
}

Test(vmm, a_reservation_hint_is_honoured_when_free)
{
    fc_setup();
    CUdeviceptr p, q, d;
    OK(cuMemAddressReserve(&p, 4 * GRAN, 0, 0, 0));
    OK(cuMemAddressFree(p, 4 * GRAN));
    OK(cuMemAddressReserve(&q, 4 * GRAN, 0, p, 0));
    cr_assert_eq(q, p);
    OK(cuMemAlloc(&d, 256));
    OK(cuMemAddressReserve(&p, GRAN, 0, d & ~(GRAN - 1), 0)); /* taken: placed elsewhere */
    cr_assert(p + GRAN <= d || p > d, "a reservation never covers an allocation");
    FAILS(cuMemFree(q), CUDA_ERROR_INVALID_VALUE); /* a reservation is not an allocation */
}

Test(vmm, bad_arguments_are_errors)
{
    fc_setup();
    CUmemAllocationProp prop = device_prop();
    CUmemGenericAllocationHandle h;
    CUdeviceptr p;
    FAILS(cuMemCreate(NULL, GRAN, &prop, 0), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemCreate(&h, GRAN, NULL, 0), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemCreate(&h, GRAN + 4096, &prop, 0), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemCreate(&h, 0, &prop, 0), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemCreate(&h, GRAN, &prop, 1), CUDA_ERROR_INVALID_VALUE);
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    FAILS(cuMemCreate(&h, GRAN, &prop, 0), CUDA_ERROR_NOT_SUPPORTED);
    prop = device_prop();
    prop.location.type = CU_MEM_LOCATION_TYPE_HOST;
    FAILS(cuMemCreate(&h, GRAN, &prop, 0), CUDA_ERROR_NOT_SUPPORTED);
    FAILS(cuMemAddressReserve(NULL, GRAN, 0, 0, 0), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemAddressReserve(&p, 0, 0, 0, 0), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemAddressReserve(&p, 100, 0, 0, 0), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemAddressReserve(&p, GRAN, 3 * 4096, 0, 0), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemRelease(0), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemRelease(0x1234), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemRelease((CUmemGenericAllocationHandle)(uintptr_t)&prop), CUDA_ERROR_INVALID_VALUE);

    h = create(2 * GRAN);
    OK(cuMemAddressReserve(&p, 4 * GRAN, 0, 0, 0));
    FAILS(cuMemMap(p, GRAN, 0, 0xdead, 0), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemMap(p + 4096, GRAN, 0, h, 0), CUDA_ERROR_INVALID_VALUE);         /* unaligned */
    FAILS(cuMemMap(p, GRAN, 2 * GRAN, h, 0), CUDA_ERROR_INVALID_VALUE);         /* past the handle */
    FAILS(cuMemMap(p + 3 * GRAN, 2 * GRAN, 0, h, 0), CUDA_ERROR_INVALID_VALUE); /* past the reservation */
    FAILS(cuMemMap(p, GRAN, 0, h, 1), CUDA_ERROR_INVALID_VALUE);
    CUdeviceptr d;
    OK(cuMemAlloc(&d, GRAN));
    FAILS(cuMemMap(d, GRAN, 0, h, 0), CUDA_ERROR_INVALID_VALUE); /* not a reservation */
    OK(cuMemMap(p, 2 * GRAN, 0, h, 0));
    FAILS(cuMemMap(p + GRAN, GRAN, 0, h, 0), CUDA_ERROR_INVALID_VALUE); /* already mapped */
    FAILS(cuMemUnmap(p, GRAN), CUDA_ERROR_INVALID_VALUE);               /* part of a mapping */
    FAILS(cuMemUnmap(p, 3 * GRAN), CUDA_ERROR_INVALID_VALUE);           /* more than is mapped */
    CUmemAccessDesc desc = {.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0}, .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    FAILS(cuMemSetAccess(p, 2 * GRAN, NULL, 1), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemSetAccess(p, 2 * GRAN, &desc, 0), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemSetAccess(p + 2 * GRAN, GRAN, &desc, 1), CUDA_ERROR_INVALID_VALUE); /* unmapped */
    desc.location.id = 3;
    FAILS(cuMemSetAccess(p, 2 * GRAN, &desc, 1), CUDA_ERROR_INVALID_DEVICE);
    desc.location.id = 0;
    desc.flags = (CUmemAccess_flags)2;
    FAILS(cuMemSetAccess(p, 2 * GRAN, &desc, 1), CUDA_ERROR_INVALID_VALUE);
    unsigned long long flags;
    CUmemLocation dev = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
    FAILS(cuMemGetAccess(NULL, &dev, p), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemGetAccess(&flags, NULL, p), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemGetAccess(&flags, &dev, p + 3 * GRAN), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemRetainAllocationHandle(NULL, (void *)(uintptr_t)p), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemRetainAllocationHandle(&h, (void *)(uintptr_t)(p + 3 * GRAN)), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemGetAllocationPropertiesFromHandle(NULL, h), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemGetAllocationPropertiesFromHandle(&prop, 42), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemAddressFree(p, 4 * GRAN), CUDA_ERROR_INVALID_VALUE); /* still mapped */
    OK(cuMemUnmap(p, 2 * GRAN));
    FAILS(cuMemAddressFree(p, 2 * GRAN), CUDA_ERROR_INVALID_VALUE); /* not its size */
    FAILS(cuMemAddressFree(p + GRAN, 3 * GRAN), CUDA_ERROR_INVALID_VALUE);
    OK(cuMemAddressFree(p, 4 * GRAN));
    FAILS(cuMemAddressFree(p, 4 * GRAN), CUDA_ERROR_INVALID_VALUE);
    OK(cuMemRelease(h));
    OK(cuCtxSynchronize()); /* none of it hurt the context */
}

Test(vmm, shareable_handles_are_not_supported)
{
    fc_setup();
    CUmemGenericAllocationHandle h = create(GRAN), imported;
    int fd = -1;
    FAILS(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0), CUDA_ERROR_NOT_SUPPORTED);
    FAILS(cuMemImportFromShareableHandle(&imported, (void *)(uintptr_t)3, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
          CUDA_ERROR_NOT_SUPPORTED);
    OK(cuMemRelease(h));
}

Test(vmm, alloc_rules_count_physical_allocations)
{
    setenv("FAKECUDA_FAULTS", "alloc#2=oom", 1);
    fc_setup();
    CUmemAllocationProp prop = device_prop();
    CUmemGenericAllocationHandle h;
    CUdeviceptr d;
    OK(cuMemAlloc(&d, 64));
    FAILS(cuMemCreate(&h, GRAN, &prop, 0), CUDA_ERROR_OUT_OF_MEMORY);
    OK(cuMemCreate(&h, GRAN, &prop, 0));
}
