/*
 * allocmap.c - the live device allocations, by address (see allocmap.h).
 *
 * Owns: the allocation nodes, their two indexes and the per-thread cache of
 * recent lookups.
 *
 * Invariants:
 * - A node is 120 bytes: uthash handle, range, owner, treap links, claims.
 *   Nodes come from chunks of NODES_PER_CHUNK and go back to a free list,
 *   so the allocator's per-block overhead is paid once per chunk, not per
 *   node; with the hash buckets this keeps a live allocation under 128
 *   bytes.
 * - The ordered index is a treap whose priority is the node's hash value
 *   (see hash_base): expected O(log n) depth with no balance field to
 *   store.  The handle's last word (hashv) sits just before base and the
 *   links, so a walk that compares priorities mostly reads one cache line.
 * - A map has an id no other map in the process has had, and a generation
 *   that every remove advances, so a cached lookup (id, generation) can only
 *   match while the node it names is still the one in the map.
 * - The hash is keyed by base, with a hash value of our own (hash_base,
 *   passed to HASH_*_BYHASHVALUE throughout): local in its low bits, for
 *   warm buckets, random in its high bits, for the treap.
 */
#include "allocmap.h"

#include <assert.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "claims.h"
#include "ct_status.h"
#include "heap.h"
#include "hot_tls.h"

#define NODES_PER_CHUNK 512
#define RECENT_HITS 8  /* a launch rarely passes more distinct buffers */

struct ct_alloc {
    UT_hash_handle hh;       /* keyed by base; hh.hashv is the treap priority */
    uint64_t base;
    ct_alloc *left, *right;  /* treap; `left` links the free list */
    uint64_t size;
    uint64_t owner;          /* what it belongs to (a context); 0 unknown; | MAPPING */
    ct_claims claims;
};

/* A virtual memory mapping (ct_allocmap_insert_mapping), marked in the
 * owner word's top bit, which no user-space address (a context) sets: the
 * mark lives and dies with its node.  Every reader of owner masks it. */
#define MAPPING (1ull << 63)

_Static_assert(sizeof(struct ct_alloc) <= 120,
               "the node is most of the 128-byte budget per allocation");

struct ct_allocmap {
    ct_alloc *by_base;       /* uthash head */
    ct_alloc *root;          /* treap root */
    ct_alloc *free_nodes;
    ct_alloc **chunks;
    size_t n_chunks, cap_chunks;
    size_t count;
    uint64_t id;
    uint64_t generation;
    ct_claim_env env;
};

typedef struct recent_hit {
    uint64_t map_id;
    uint64_t generation;
    uint64_t base, size;
    ct_alloc *node;
} recent_hit;

static atomic_uint_fast64_t map_ids;
static CT_HOT_TLS recent_hit recent[RECENT_HITS];
static CT_HOT_TLS unsigned recent_next;

static void no_ref(void *owner, ct_failure_id id)
{
    (void)owner;
    (void)id;
}

static void no_forget(void *owner, uint64_t base, uint64_t end)
{
    (void)owner;
    (void)base;
    (void)end;
}

static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* A base's hash value: its uthash bucket (the low bits) and its treap
 * priority (compared whole, so decided by the high bits).
 * - The high 16 bits are a full mix of the base, so priorities are
 *   independent of key order and the treap stays O(log n) deep.
 * - The low 16 bits keep locality: bases in one 2 MiB page (where drivers
 *   carve small allocations one after another) get consecutive buckets,
 *   256 bytes of address per bucket, from a random start per page.  A burst
 *   of allocations then touches neighbouring bucket lines instead of one
 *   cold line each; at 100,000 allocations that miss was most of the cost
 *   of an alloc+free. */
static unsigned hash_base(uint64_t base)
{
    uint32_t random_high = (uint32_t)(mix64(base) >> 32) & 0xffff0000u;
    uint32_t near_low = (uint32_t)((base >> 8) + mix64(base >> 21)) & 0xffffu;
    return random_high | near_low;
}

/* --- node pool --------------------------------------------------------- */

static bool add_chunk(ct_allocmap *map)
{
    if (map->n_chunks == map->cap_chunks) {
        size_t cap = map->cap_chunks ? map->cap_chunks * 2 : 16;
        ct_alloc **chunks = realloc(map->chunks, cap * sizeof(*chunks));
        if (!chunks)
            return false;
        map->chunks = chunks;
        map->cap_chunks = cap;
    }
    ct_alloc *chunk = malloc(NODES_PER_CHUNK * sizeof(*chunk));
    if (!chunk)
        return false;
    map->chunks[map->n_chunks++] = chunk;
    for (size_t i = NODES_PER_CHUNK; i-- > 0;) {
        chunk[i].left = map->free_nodes;
        map->free_nodes = &chunk[i];
    }
    return true;
}

/* The handle is left as it was: HASH_ADD fills in every field of it. */
static ct_alloc *node_get(ct_allocmap *map, uint64_t base, uint64_t size, uint64_t owner)
{
    if (!map->free_nodes && !add_chunk(map))
        return NULL;
    ct_alloc *node = map->free_nodes;
    map->free_nodes = node->left;
    node->base = base;
    node->size = size;
    node->owner = owner;
    node->left = node->right = NULL;
    node->claims = (ct_claims){0};
    return node;
}

static void node_put(ct_allocmap *map, ct_alloc *node)
{
    node->left = map->free_nodes;
    map->free_nodes = node;
}

/* --- treap ------------------------------------------------------------- */

static unsigned priority(const ct_alloc *node)
{
    return node->hh.hashv;
}

/* The nodes a new one lands between in key order: the last right and left
 * turns of its search path.  (A node with the same base may be either.) */
typedef struct neighbours {
    const ct_alloc *below, *above;
} neighbours;

/* Nodes of t below key go to *lo, the rest to *hi. */
static void treap_split(ct_alloc *t, uint64_t key, ct_alloc **lo, ct_alloc **hi, neighbours *nb)
{
    while (t) {
        if (t->base < key) {
            nb->below = *lo = t;
            lo = &t->right;
            t = t->right;
        } else {
            nb->above = *hi = t;
            hi = &t->left;
            t = t->left;
        }
    }
    *lo = *hi = NULL;
}

/* The walk down to node's place and the split below it follow node's
 * search path to its end, so they find its neighbours on the way. */
static neighbours treap_insert(ct_alloc **root, ct_alloc *node)
{
    neighbours nb = {NULL, NULL};
    ct_alloc **link = root;
    unsigned prio = priority(node);
    while (*link && priority(*link) >= prio) {
        if (node->base < (*link)->base) {
            nb.above = *link;
            link = &(*link)->left;
        } else {
            nb.below = *link;
            link = &(*link)->right;
        }
    }
    treap_split(*link, node->base, &node->left, &node->right, &nb);
    *link = node;
    return nb;
}

/* Every key of a is below every key of b. */
static ct_alloc *treap_merge(ct_alloc *a, ct_alloc *b)
{
    ct_alloc *t = NULL, **link = &t;
    while (a && b) {
        if (priority(a) >= priority(b)) {
            *link = a;
            link = &a->right;
            a = a->right;
        } else {
            *link = b;
            link = &b->left;
            b = b->left;
        }
    }
    *link = a ? a : b;
    return t;
}

static ct_alloc *treap_remove(ct_alloc *t, const ct_alloc *node)
{
    ct_alloc **link = &t;
    while (*link != node)
        link = node->base < (*link)->base ? &(*link)->left : &(*link)->right;
    *link = treap_merge(node->left, node->right);
    return t;
}

static ct_alloc *floor_node(ct_alloc *t, uint64_t addr)
{
    ct_alloc *best = NULL;
    while (t) {
        if (t->base <= addr) {
            best = t;
            t = t->right;
        } else {
            t = t->left;
        }
    }
    return best;
}

/* --- the map ----------------------------------------------------------- */

ct_allocmap *ct_allocmap_new(void)
{
    ct_allocmap *map = calloc(1, sizeof(*map));
    if (!map)
        return NULL;
    map->env.ref = no_ref;
    map->env.unref = no_ref;
    map->env.forget = no_forget;
    atomic_init(&map->env.live, 0);
    map->id = atomic_fetch_add_explicit(&map_ids, 1, memory_order_relaxed) + 1;
    return map;
}

static void forget(ct_allocmap *map, ct_alloc *node)
{
    map->root = treap_remove(map->root, node);
    HASH_DELETE(hh, map->by_base, node);
    if (node->claims.n) {
        map->env.forget(map->env.owner, node->base, ct_claims_end(&node->claims, NULL));
        ct_claims_drop(&node->claims, &map->env);
    }
    node_put(map, node);
    map->count--;
    map->generation++;
}

void ct_allocmap_free(ct_allocmap *map)
{
    if (!map)
        return;
    ct_alloc *node, *tmp;
    HASH_ITER(hh, map->by_base, node, tmp) {
        HASH_DELETE(hh, map->by_base, node);
        ct_claims_drop(&node->claims, &map->env);
    }
    for (size_t i = 0; i < map->n_chunks; i++)
        free(map->chunks[i]);
    free(map->chunks);
    free(map);
}

/* The lowest-based allocation intersecting [lo, hi), or NULL. */
static ct_alloc *overlapping(const ct_allocmap *map, uint64_t lo, uint64_t hi)
{
    if (lo >= hi)
        return NULL;
    /* One walk finds both neighbours of lo: the last node at or below it,
     * which overlaps if it reaches lo, and the first above it. */
    ct_alloc *below = NULL, *above = NULL;
    for (ct_alloc *t = map->root; t;) {
        if (t->base <= lo) {
            below = t;
            t = t->right;
        } else {
            above = t;
            t = t->left;
        }
    }
    if (below && lo - below->base < below->size)
        return below;
    return above && above->base < hi ? above : NULL;
}

ct_alloc *ct_allocmap_first_in(const ct_allocmap *map, uint64_t lo, uint64_t hi)
{
    return map ? overlapping(map, lo, hi) : NULL;
}

/* Ranges never overlap, so only a neighbour can overlap [base, base+size). */
static bool overlaps_neighbour(neighbours nb, uint64_t base, uint64_t size)
{
    return (nb.below && base - nb.below->base < nb.below->size) || (nb.above && nb.above->base < base + size);
}

int ct_allocmap_insert_mapping(ct_allocmap *map, uint64_t base, uint64_t size, uint64_t owner)
{
    return ct_allocmap_insert(map, base, size, (owner & ~MAPPING) | MAPPING);
}

void ct_allocmap_resize(ct_allocmap *map, ct_alloc *a, uint64_t size)
{
    assert(size > 0 && size <= UINT64_MAX - a->base && "a resized range still fits");
    assert(!overlapping(map, a->base + a->size, a->base + size) && "growing never overlaps a neighbour");
    a->size = size;
    map->generation++; /* cached hits hold the old size */
}

int ct_allocmap_insert(ct_allocmap *map, uint64_t base, uint64_t size, uint64_t owner)
{
    if (!map || size == 0 || size > UINT64_MAX - base)
        return CT_EINVAL;
    ct_alloc *node = node_get(map, base, size, owner);
    if (!node)
        return CT_ENOMEM;
    /* Hashed first: it is the step that can fail, and nothing has changed
     * yet.  Its store to the old head of the chain (a cold line, at 100,000
     * allocations) then completes while the tree walk below runs.  A stale
     * entry with the same base coexists for a moment. */
    HASH_ADD_BYHASHVALUE(hh, map->by_base, base, sizeof(node->base), hash_base(base), node);
    if (!ct_hash_added(&node->hh)) {
        node_put(map, node);
        return CT_ENOMEM;
    }
    /* A new node invalidates no cached hit: the ranges cached are unchanged. */
    neighbours nb = treap_insert(&map->root, node);
    if (overlaps_neighbour(nb, base, size)) {
        /* Rare: a free we missed.  The stale entries go, then the new one
         * takes its place again (forget() invalidates the lookup caches). */
        map->root = treap_remove(map->root, node);
        for (ct_alloc *stale; (stale = overlapping(map, base, base + size));)
            forget(map, stale);
        nb = treap_insert(&map->root, node);
        assert(!overlaps_neighbour(nb, base, size) && "ranges in the map never overlap");
    }
    map->count++;
    return CT_OK;
}

int ct_allocmap_remove(ct_allocmap *map, uint64_t base)
{
    if (!map)
        return CT_EINVAL;
    ct_alloc *node;
    HASH_FIND_BYHASHVALUE(hh, map->by_base, &base, sizeof(base), hash_base(base), node);
    if (!node)
        return CT_ENOENT;
    forget(map, node);
    return CT_OK;
}

/* O(n): owners go away rarely (a context destroyed), allocations often. */
size_t ct_allocmap_remove_owner(ct_allocmap *map, uint64_t owner)
{
    if (!map || owner == 0)
        return 0;
    size_t removed = 0;
    ct_alloc *node, *tmp;
    HASH_ITER(hh, map->by_base, node, tmp) {
        if ((node->owner & ~MAPPING) == owner) {
            forget(map, node);
            removed++;
        }
    }
    return removed;
}

/* O(k log n) for the k allocations the range meets. */
size_t ct_allocmap_remove_within(ct_allocmap *map, uint64_t addr, uint64_t len)
{
    if (!map || len == 0)
        return 0;
    uint64_t end = len > UINT64_MAX - addr ? UINT64_MAX : addr + len;
    size_t removed = 0;
    for (uint64_t lo = addr; lo < end;) {
        ct_alloc *node = overlapping(map, lo, end);
        if (!node)
            break;
        uint64_t node_end = node->base + node->size; /* no overflow: insert refuses it */
        if (node->base >= addr && node_end <= end) {
            forget(map, node);
            removed++;
        }
        lo = node_end;
    }
    return removed;
}

static void remember(const ct_allocmap *map, ct_alloc *node)
{
    recent[recent_next++ % RECENT_HITS] = (recent_hit){
        map->id, map->generation, node->base, node->size, node };
}

ct_alloc *ct_allocmap_find(const ct_allocmap *map, uint64_t addr)
{
    if (!map)
        return NULL;
    for (unsigned i = 0; i < RECENT_HITS; i++) {
        const recent_hit *h = &recent[i];
        /* The range first: it is what tells most entries apart. */
        if (addr - h->base < h->size && h->generation == map->generation && h->map_id == map->id)
            return h->node;
    }
    ct_alloc *node = floor_node(map->root, addr);
    if (!node || addr - node->base >= node->size)
        return NULL;
    remember(map, node);
    return node;
}


uint64_t ct_alloc_base(const ct_alloc *a) { return a ? a->base : 0; }
uint64_t ct_alloc_size(const ct_alloc *a) { return a ? a->size : 0; }
uint64_t ct_alloc_owner(const ct_alloc *a) { return a ? a->owner & ~MAPPING : 0; }
bool ct_alloc_is_mapping(const ct_alloc *a) { return a && (a->owner & MAPPING); }
size_t ct_allocmap_count(const ct_allocmap *map) { return map ? map->count : 0; }
ct_claims *ct_alloc_claims(ct_alloc *a) { return &a->claims; }
ct_claim_env *ct_allocmap_env(ct_allocmap *map) { return &map->env; }

/* Iterative: a degenerate tree, which is what the figure exists to catch,
 * would overflow the stack of a recursive walk.  SIZE_MAX without memory. */
static size_t tree_height(const ct_allocmap *map)
{
    typedef struct { const ct_alloc *node; size_t depth; } visit;
    visit *stack = malloc((map->count + 1) * sizeof(*stack));
    if (!stack)
        return SIZE_MAX;
    size_t n = 0, height = 0;
    if (map->root)
        stack[n++] = (visit){map->root, 1};
    while (n > 0) {
        visit v = stack[--n];
        if (v.depth > height)
            height = v.depth;
        if (v.node->left)
            stack[n++] = (visit){v.node->left, v.depth + 1};
        if (v.node->right)
            stack[n++] = (visit){v.node->right, v.depth + 1};
    }
    free(stack);
    return height;
}

ct_allocmap_shape ct_allocmap_shape_of(const ct_allocmap *map)
{
    ct_allocmap_shape shape = {0};
    if (!map || !map->by_base)
        return shape;
    shape.height = tree_height(map);
    const UT_hash_table *tbl = map->by_base->hh.tbl;
    shape.buckets = tbl->num_buckets;
    for (unsigned b = 0; b < tbl->num_buckets; b++)
        if (tbl->buckets[b].count > shape.longest_chain)
            shape.longest_chain = tbl->buckets[b].count;
    return shape;
}

size_t ct_allocmap_bytes(const ct_allocmap *map)
{
    if (!map)
        return 0;
    size_t bytes = ct_heap_cost(sizeof(*map));
    if (map->cap_chunks)
        bytes += ct_heap_cost(map->cap_chunks * sizeof(*map->chunks));
    bytes += map->n_chunks * ct_heap_cost(NODES_PER_CHUNK * sizeof(ct_alloc));
    bytes += ct_hash_cost(map->by_base ? &map->by_base->hh : NULL);
    return bytes + map->env.spill_bytes;
}
