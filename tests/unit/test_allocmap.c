/* The allocation map: exact and interior lookups, the edges of a range,
 * replacement of stale overlapping entries, and the scale the shim needs
 * (100,000 live allocations, checked against a brute-force search, within
 * 128 heap bytes each). */
#include <criterion/criterion.h>
#include <malloc.h>
#include <stdlib.h>

#include "allocmap.h"
#include "ct_status.h"

#define MANY 100000
#define BYTES_PER_ALLOC_BUDGET 128

static ct_allocmap *map;

static void setup(void)
{
    map = ct_allocmap_new();
    cr_assert_not_null(map);
}
static void teardown(void)
{
    ct_allocmap_free(map);
}

TestSuite(allocmap, .init = setup, .fini = teardown);

static uint64_t base_at(uint64_t addr)
{
    return ct_alloc_base(ct_allocmap_find(map, addr));
}

Test(allocmap, finds_the_base_and_every_interior_address)
{
    cr_assert_eq(ct_allocmap_insert(map, 0x1000, 0x100, 0), CT_OK);
    cr_assert_eq(ct_allocmap_count(map), 1);
    for (uint64_t a = 0x1000; a < 0x1100; a++)
        cr_assert_eq(base_at(a), 0x1000, "address %#lx", (unsigned long)a);
    const ct_alloc *found = ct_allocmap_find(map, 0x1080);
    cr_assert_eq(ct_alloc_size(found), 0x100);
}

Test(allocmap, last_byte_is_inside_and_one_past_is_not)
{
    ct_allocmap_insert(map, 0x1000, 0x100, 0);
    cr_assert_not_null(ct_allocmap_find(map, 0x10ff));
    cr_assert_null(ct_allocmap_find(map, 0x1100));
    cr_assert_null(ct_allocmap_find(map, 0x0fff));
    cr_assert_null(ct_allocmap_find(map, 0));
    cr_assert_null(ct_allocmap_find(map, UINT64_MAX));
}

Test(allocmap, neighbours_that_touch_stay_apart)
{
    cr_assert_eq(ct_allocmap_insert(map, 0x1000, 0x1000, 0), CT_OK);
    cr_assert_eq(ct_allocmap_insert(map, 0x2000, 0x1000, 0), CT_OK);
    cr_assert_eq(ct_allocmap_count(map), 2);
    cr_assert_eq(base_at(0x1fff), 0x1000);
    cr_assert_eq(base_at(0x2000), 0x2000);
}

Test(allocmap, an_owner_takes_its_allocations_and_no_others_with_it)
{
    cr_assert_eq(ct_allocmap_insert(map, 0x1000, 0x100, 7), CT_OK);
    cr_assert_eq(ct_allocmap_insert(map, 0x2000, 0x100, 8), CT_OK);
    cr_assert_eq(ct_allocmap_insert(map, 0x3000, 0x100, 7), CT_OK);
    cr_assert_eq(ct_allocmap_insert(map, 0x4000, 0x100, 0), CT_OK);
    cr_assert_eq(ct_alloc_owner(ct_allocmap_find(map, 0x2010)), 8);
    cr_assert_eq(ct_allocmap_remove_owner(map, 0), 0, "owner 0 is nobody's: nothing goes");
    cr_assert_eq(ct_allocmap_remove_owner(map, 9), 0);
    cr_assert_not_null(ct_allocmap_find(map, 0x1010), "a lookup cached before the owner goes");
    cr_assert_eq(ct_allocmap_remove_owner(map, 7), 2);
    cr_assert_null(ct_allocmap_find(map, 0x1010), "the cached lookup went with it");
    cr_assert_null(ct_allocmap_find(map, 0x3000));
    cr_assert_eq(base_at(0x2000), 0x2000);
    cr_assert_eq(base_at(0x40ff), 0x4000);
    cr_assert_eq(ct_allocmap_count(map), 2);
    cr_assert_eq(ct_allocmap_remove_owner(map, 7), 0);
    cr_assert_eq(ct_allocmap_insert(map, 0x1000, 0x100, 9), CT_OK, "the freed range is free");
}

/* A reservation's mappings: an unmap of some takes exactly those, one that
 * straddles the range's either end stays, and the range is free again. */
Test(allocmap, a_range_takes_the_allocations_wholly_inside_it)
{
    for (uint64_t b = 0x1000; b < 0x6000; b += 0x1000)
        cr_assert_eq(ct_allocmap_insert(map, b, 0x1000, 0), CT_OK);
    cr_assert_not_null(ct_allocmap_find(map, 0x2010), "a lookup cached before the range goes");
    cr_assert_eq(ct_allocmap_remove_within(map, 0x1800, 0x3000), 2,
                 "0x2000 and 0x3000, not the straddling 0x1000 and 0x4000");
    cr_assert_null(ct_allocmap_find(map, 0x2010), "the cached lookup went with it");
    cr_assert_null(ct_allocmap_find(map, 0x3fff));
    cr_assert_eq(base_at(0x1fff), 0x1000);
    cr_assert_eq(base_at(0x4000), 0x4000);
    cr_assert_eq(ct_allocmap_remove_within(map, 0x2000, 0x2000), 0, "nothing left there");
    cr_assert_eq(ct_allocmap_remove_within(map, 0x1000, 0), 0);
    cr_assert_eq(ct_allocmap_remove_within(map, 0x4000, UINT64_MAX), 2, "to the end of the address space");
    cr_assert_eq(ct_allocmap_count(map), 1);
    cr_assert_eq(ct_allocmap_insert(map, 0x2000, 0x2000, 0), CT_OK, "the range is free");
    cr_assert_eq(ct_allocmap_count(map), 2);
}

Test(allocmap, remove_takes_only_a_base)
{
    ct_allocmap_insert(map, 0x1000, 0x100, 0);
    cr_assert_eq(ct_allocmap_remove(map, 0x1010), CT_ENOENT);
    cr_assert_eq(ct_allocmap_remove(map, 0x1000), CT_OK);
    cr_assert_eq(ct_allocmap_remove(map, 0x1000), CT_ENOENT);
    cr_assert_null(ct_allocmap_find(map, 0x1010));
    cr_assert_eq(ct_allocmap_count(map), 0);
}

Test(allocmap, a_lookup_never_returns_a_removed_allocation)
{
    ct_allocmap_insert(map, 0x1000, 0x100, 0);
    cr_assert_not_null(ct_allocmap_find(map, 0x1010)); /* now cached */
    ct_allocmap_remove(map, 0x1000);
    cr_assert_null(ct_allocmap_find(map, 0x1010));
    ct_allocmap_insert(map, 0x1000, 0x20, 0);
    cr_assert_null(ct_allocmap_find(map, 0x1080));
    cr_assert_eq(ct_alloc_size(ct_allocmap_find(map, 0x1010)), 0x20);
}

Test(allocmap, maps_do_not_share_cached_lookups)
{
    ct_allocmap *other = ct_allocmap_new();
    ct_allocmap_insert(map, 0x1000, 0x100, 0);
    cr_assert_not_null(ct_allocmap_find(map, 0x1010));
    cr_assert_null(ct_allocmap_find(other, 0x1010));
    ct_allocmap_free(other);
}

Test(allocmap, an_overlapping_insert_replaces_the_stale_entries)
{
    ct_allocmap_insert(map, 0x1000, 0x1000, 0);
    ct_allocmap_insert(map, 0x3000, 0x1000, 0);
    ct_allocmap_insert(map, 0x5000, 0x1000, 0);
    cr_assert_eq(ct_allocmap_insert(map, 0x1800, 0x2000, 0), CT_OK); /* over the first two */
    cr_assert_eq(ct_allocmap_count(map), 2);
    cr_assert_null(ct_allocmap_find(map, 0x1000));
    cr_assert_eq(base_at(0x1800), 0x1800);
    cr_assert_eq(base_at(0x37ff), 0x1800);
    cr_assert_null(ct_allocmap_find(map, 0x3800));
    cr_assert_eq(base_at(0x5000), 0x5000);
    cr_assert_eq(ct_allocmap_remove(map, 0x3000), CT_ENOENT);
}

/* Only the allocation above overlaps: nothing below the new range. */
Test(allocmap, an_insert_running_into_the_next_allocation_replaces_it)
{
    ct_allocmap_insert(map, 0x2000, 0x1000, 0);
    ct_allocmap_insert(map, 0x8000, 0x1000, 0);
    cr_assert_eq(ct_allocmap_insert(map, 0x1000, 0x1800, 0), CT_OK);
    cr_assert_eq(ct_allocmap_count(map), 2);
    cr_assert_eq(base_at(0x27ff), 0x1000);
    cr_assert_null(ct_allocmap_find(map, 0x2800));
    cr_assert_eq(ct_allocmap_remove(map, 0x2000), CT_ENOENT);
    cr_assert_eq(base_at(0x8000), 0x8000);
}

Test(allocmap, reinserting_a_base_replaces_its_size)
{
    ct_allocmap_insert(map, 0x1000, 0x100, 0);
    cr_assert_eq(ct_allocmap_insert(map, 0x1000, 0x10, 0), CT_OK);
    cr_assert_eq(ct_allocmap_count(map), 1);
    cr_assert_null(ct_allocmap_find(map, 0x1010));
    cr_assert_eq(ct_allocmap_remove(map, 0x1000), CT_OK);
    cr_assert_eq(ct_allocmap_count(map), 0);
}

Test(allocmap, a_range_inside_another_replaces_it)
{
    ct_allocmap_insert(map, 0x1000, 0x1000, 0);
    cr_assert_eq(ct_allocmap_insert(map, 0x1400, 0x10, 0), CT_OK);
    cr_assert_eq(ct_allocmap_count(map), 1);
    cr_assert_null(ct_allocmap_find(map, 0x1000));
}

Test(allocmap, rejects_empty_and_wrapping_ranges)
{
    cr_assert_eq(ct_allocmap_insert(map, 0x1000, 0, 0), CT_EINVAL);
    cr_assert_eq(ct_allocmap_insert(map, UINT64_MAX - 0xf, 0x20, 0), CT_EINVAL);
    cr_assert_eq(ct_allocmap_insert(map, UINT64_MAX - 0xf, 0xf, 0), CT_OK);
    cr_assert_eq(base_at(UINT64_MAX - 1), UINT64_MAX - 0xf);
    cr_assert_null(ct_allocmap_find(map, UINT64_MAX));
    cr_assert_eq(ct_allocmap_count(map), 1);
}

Test(allocmap, null_arguments_are_refused_not_crashed_on)
{
    cr_assert_eq(ct_allocmap_insert(NULL, 0x1000, 1, 0), CT_EINVAL);
    cr_assert_eq(ct_allocmap_remove(NULL, 0x1000), CT_EINVAL);
    cr_assert_null(ct_allocmap_find(NULL, 0x1000));
    cr_assert_eq(ct_alloc_base(NULL), 0);
    cr_assert_eq(ct_alloc_size(NULL), 0);
    cr_assert_eq(ct_allocmap_count(NULL), 0);
    cr_assert_eq(ct_allocmap_bytes(NULL), 0);
    ct_allocmap_free(NULL);
}

/* --- scale ------------------------------------------------------------- */

typedef struct span {
    uint64_t base, size;
    bool live;
} span;

static uint64_t rng_state = 0x2545f4914f6cdd1dULL;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* MANY disjoint ranges with random gaps and sizes, in address order. */
static span *make_spans(void)
{
    span *spans = calloc(MANY, sizeof(*spans));
    uint64_t at = 0x7f0000000000ULL;
    for (size_t i = 0; i < MANY; i++) {
        at += (rnd() % 4) * 256;
        spans[i] = (span){at, 1 + rnd() % (1u << 20), true};
        at += spans[i].size;
    }
    return spans;
}

/* Inserts in random order; checks the byte budget on the way once the map
 * is large enough that one node chunk no longer dominates. */
static void insert_shuffled(span *spans)
{
    size_t *order = malloc(MANY * sizeof(*order));
    for (size_t i = 0; i < MANY; i++)
        order[i] = i;
    for (size_t i = MANY - 1; i > 0; i--) {
        size_t j = rnd() % (i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (size_t i = 0; i < MANY; i++) {
        cr_assert_eq(ct_allocmap_insert(map, spans[order[i]].base, spans[order[i]].size, 0), CT_OK);
        if (i >= 20000 && i % 997 == 0)
            cr_assert_leq(ct_allocmap_bytes(map), (size_t)BYTES_PER_ALLOC_BUDGET * (i + 1),
                          "over budget at %zu allocations", i + 1);
    }
    free(order);
}

static uint64_t brute_force_base(const span *spans, uint64_t addr)
{
    for (size_t i = 0; i < MANY; i++) {
        if (spans[i].live && addr >= spans[i].base && addr - spans[i].base < spans[i].size)
            return spans[i].base;
    }
    return 0;
}

static void check_lookups(const span *spans, int probes)
{
    for (int k = 0; k < probes; k++) {
        const span *s = &spans[rnd() % MANY];
        uint64_t addr = s->base + rnd() % (s->size + 512) - 256; /* around it too */
        cr_assert_eq(base_at(addr), brute_force_base(spans, addr), "lookup of %#lx disagrees with brute force",
                     (unsigned long)addr);
    }
}

Test(allocmap, resolves_100000_allocations_like_brute_force)
{
    span *spans = make_spans();
    insert_shuffled(spans);
    cr_assert_eq(ct_allocmap_count(map), MANY);
    check_lookups(spans, 3000);
    for (size_t i = 0; i < MANY; i += 2) {
        cr_assert_eq(ct_allocmap_remove(map, spans[i].base), CT_OK);
        spans[i].live = false;
    }
    cr_assert_eq(ct_allocmap_count(map), MANY / 2);
    check_lookups(spans, 3000);
    free(spans);
}

static size_t heap_in_use(void)
{
    return mallinfo2().uordblks;
}

Test(allocmap, holds_100000_allocations_within_128_bytes_each)
{
    span *spans = make_spans();
    ct_allocmap_free(map);
    size_t before = heap_in_use();
    map = ct_allocmap_new();
    insert_shuffled(spans);
    size_t measured = heap_in_use() - before;
    size_t counted = ct_allocmap_bytes(map);
    cr_log_info("allocmap: %zu bytes counted, %zu measured for %d allocations (%.1f per allocation)", counted, measured,
                MANY, (double)counted / MANY);
    cr_assert_leq(counted, (size_t)BYTES_PER_ALLOC_BUDGET * MANY);
    /* Sanitizers and valgrind keep their own heap; glibc's figure is only
     * meaningful when it moved. */
    if (measured > 0 && measured < SIZE_MAX / 2)
        cr_assert_leq(measured, (size_t)BYTES_PER_ALLOC_BUDGET * MANY);
    free(spans);
}

/* ---- shape under the address patterns drivers produce ------------------- */

/* A B+tree of 100,000 entries, its nodes at least half full, is 5 levels
 * deep (16^4 < 100,000 <= 16^5); nodes a quarter full or less, what a
 * split rule gone wrong gives, make it deeper and far wider. */
#define HEIGHT_BOUND 5
#define ENTRIES_PER_NODE_FLOOR 8

static void check_shape(const char *pattern)
{
    ct_allocmap_shape shape = ct_allocmap_shape_of(map);
    size_t count = ct_allocmap_count(map);
    cr_log_info("allocmap %s: %zu allocations, height %zu, %zu tree nodes", pattern, count, shape.height,
                shape.tree_nodes);
    cr_assert_leq(shape.height, HEIGHT_BOUND, "%s: tree height %zu", pattern, shape.height);
    cr_assert_leq(shape.tree_nodes, count / ENTRIES_PER_NODE_FLOOR + HEIGHT_BOUND, "%s: %zu tree nodes for %zu",
                  pattern, shape.tree_nodes, count);
}

static void insert_strided(uint64_t start, uint64_t stride, uint64_t size)
{
    for (uint64_t i = 0; i < MANY; i++)
        cr_assert_eq(ct_allocmap_insert(map, start + i * stride, size, 0), CT_OK);
}

Test(allocmap, small_allocations_packed_in_pages_stay_balanced)
{
    insert_strided(0x7f0000000000ULL, 512, 256);
    check_shape("packed 512 B");
}

Test(allocmap, page_aligned_allocations_stay_balanced)
{
    insert_strided(0x7f0000000000ULL, 2u << 20, 2u << 20);
    check_shape("2 MiB pages");
}

Test(allocmap, widely_strided_allocations_stay_balanced)
{
    insert_strided(0x100000000ULL, 1ULL << 30, 4096);
    check_shape("1 GiB stride");
}

Test(allocmap, randomly_placed_allocations_stay_balanced)
{
    for (int i = 0; i < MANY; i++) {
        uint64_t slot = ((uint64_t)rnd() << 20 | (uint64_t)rnd()) % (1ULL << 35);
        cr_assert_eq(ct_allocmap_insert(map, (1ULL << 40) + slot * 4096, 1024, 0), CT_OK);
    }
    check_shape("random");
}

Test(allocmap, churn_at_the_top_of_the_heap_stays_balanced)
{
    insert_strided(0x7f0000000000ULL, 512, 256);
    uint64_t top = 0x7f0000000000ULL + (uint64_t)MANY * 512;
    for (uint64_t i = 0; i < MANY; i++) {
        cr_assert_eq(ct_allocmap_insert(map, top + i * 1024, 1024, 0), CT_OK);
        cr_assert_eq(ct_allocmap_remove(map, top + i * 1024), CT_OK);
    }
    check_shape("churn");
}
