/*
 * allocmap.c - the live device allocations, by address (see allocmap.h).
 *
 * Owns: the allocation nodes, the B+tree that orders them by base, and the
 * per-thread cache of recent lookups.
 *
 * Why a B+tree: at a million live allocations and more, what an alloc+free
 * costs is the cache misses of the walk from the root, and a hash beside a
 * binary tree paid a whole-table rehash (tens of milliseconds) on one
 * unlucky allocation.  Nodes of BT_ORDER keys keep the walk to a handful of
 * nodes (4 levels at a million), each searched in a line or two, the one
 * index answers both exact lookups (a free) and interior ones, and it grows
 * a node at a time.  Measured against the treap and hash it replaced:
 * docs/DESIGN.md, "The allocation map at scale".
 *
 * Invariants:
 * - An allocation node is 56 bytes: range, owner, claims, free link.  Nodes
 *   come from chunks of NODES_PER_CHUNK and go back to a free list, so the
 *   allocator's per-block overhead is paid once per chunk; a node's address
 *   never changes while it is live (callers and the lookup cache hold it).
 * - Every tree node holds 1..BT_ORDER entries in increasing key order; an
 *   inner node's key[i] is exactly the least base in its subtree i, so a
 *   search descends into the last subtree whose least key is <= the one
 *   sought.  Leaves are all at one depth.  A node left empty by a remove
 *   leaves its parent (nodes are not merged: a tree only grows deeper by
 *   root splits, each of which needs a full root).
 * - An insert that would split takes its spare nodes before it changes
 *   anything, so out of memory leaves the map as it was.
 * - A split of a node at its end (allocations at rising addresses, what
 *   drivers and bump allocators hand out) leaves the full node full.
 * - Leaves are exactly map->height levels down, and map->last_base is the
 *   tree's greatest key while it has one: a descent counts levels instead
 *   of testing for leaves, and an insert past last_base has nothing above
 *   it to overlap (both asserted in debug builds).
 * - A map has an id no other map in the process has had, and a generation
 *   that every remove and resize advances, so a cached lookup (id,
 *   generation) can only match while the node it names is still the one in
 *   the map.
 */
#include "allocmap.h"

#include <assert.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "claims.h"
#include "ct_status.h"
#include "heap.h"
#include "hot_tls.h"

#define NODES_PER_CHUNK 512
#define RECENT_HITS 8   /* a launch rarely passes more distinct buffers */
#define BT_ORDER 32     /* entries per tree node: 256 bytes of keys */
#define BT_MAX_DEPTH 16 /* BT_ORDER / 2 ** 15 entries would be needed first */

struct ct_alloc {
    uint64_t base;
    uint64_t size;
    uint64_t owner; /* what it belongs to (a context); 0 unknown; | MAPPING */
    ct_claims claims;
    ct_alloc *next_free;
};

/* A virtual memory mapping (ct_allocmap_insert_mapping), marked in the
 * owner word's top bit, which no user-space address (a context) sets: the
 * mark lives and dies with its node.  Every reader of owner masks it. */
#define MAPPING (1ull << 63)

_Static_assert(sizeof(struct ct_alloc) <= 64, "the node is half of the 128-byte budget per allocation");

typedef struct bt_node {
    uint16_t n;
    bool leaf;
    uint64_t key[BT_ORDER];
    void *ptr[BT_ORDER]; /* a leaf's ct_alloc, an inner node's children */
} bt_node;

/* The nodes a search went through and the entry taken in each. */
typedef struct bt_path {
    bt_node *node[BT_MAX_DEPTH];
    int idx[BT_MAX_DEPTH];
    int depth;
} bt_path;

struct ct_allocmap {
    bt_node *root;
    bt_node *spare; /* tree nodes taken ahead of a split (linked by ptr[0]) */
    size_t n_spare;
    size_t tree_nodes;  /* in the tree */
    int height;         /* levels: 0 for an empty tree */
    uint64_t last_base; /* the greatest key in the tree, while it has one */
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
        chunk[i].next_free = map->free_nodes;
        map->free_nodes = &chunk[i];
    }
    return true;
}

static ct_alloc *node_get(ct_allocmap *map, uint64_t base, uint64_t size, uint64_t owner)
{
    if (!map->free_nodes && !add_chunk(map))
        return NULL;
    ct_alloc *node = map->free_nodes;
    map->free_nodes = node->next_free;
    *node = (ct_alloc){.base = base, .size = size, .owner = owner};
    return node;
}

static void node_put(ct_allocmap *map, ct_alloc *node)
{
    node->next_free = map->free_nodes;
    map->free_nodes = node;
}

/* --- the B+tree -------------------------------------------------------- */

/* The last entry of t whose key is <= x; -1 when x is below them all. */
static int bt_floor_index(const bt_node *t, uint64_t x)
{
    if (__builtin_expect(x >= t->key[t->n - 1], 1)) /* at or past the last: rising addresses, mostly */
        return t->n - 1;
    int lo = 0, hi = t->n - 1; /* the answer + 1 lies in [lo, hi] */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (t->key[mid] <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo - 1;
}

/* The path of bt_descend for an x below every key: the first entry of
 * each inner node, entry -1 of the first leaf.  Rare (an allocation below
 * every live one), so out of the descent's line. */
__attribute__((noinline, cold)) static bool bt_descend_below_all(bt_node *t, int height, bt_path *path)
{
    for (int l = 0; l < height; l++) {
        assert(t->leaf == (l == height - 1) && "leaves are all at the map's height");
        path->node[l] = t;
        path->idx[l] = t->leaf ? -1 : 0;
        t = t->leaf ? NULL : t->ptr[0];
    }
    return false;
}

/* Down to the leaf entry with the greatest key <= x, the path recorded;
 * false when x is below every key (the path then leads to the first leaf,
 * entry -1) or the tree is empty (depth 0).  Only the root can answer
 * "below" (an inner key is its subtree's least), so that case is settled
 * there once, and the walk counts levels by the map's height instead of
 * testing each node for a leaf: what every alloc and free pays per level
 * (docs/PERFORMANCE.md). */
static bool bt_descend(const ct_allocmap *map, uint64_t x, bt_path *path)
{
    const int height = map->height;
    assert(height >= 0 && height <= BT_MAX_DEPTH && "the tree is shallower than BT_MAX_DEPTH");
    bt_node *t = map->root;
    assert((t != NULL) == (height > 0) && "an empty tree has no levels");
    path->depth = height;
    if (!t)
        return false;
    if (x < t->key[0])
        return bt_descend_below_all(t, height, path);
    int l = 0;
    for (; l < height - 1; l++) {
        assert(!t->leaf && "leaves are all at the map's height");
        int i = bt_floor_index(t, x);
        assert(i >= 0 && "below a subtree's least key only at the root");
        path->node[l] = t;
        path->idx[l] = i;
        t = t->ptr[i];
    }
    assert(t->leaf && "leaves are all at the map's height");
    path->node[l] = t;
    path->idx[l] = bt_floor_index(t, x);
    return true;
}

static ct_alloc *bt_leaf_entry(const bt_path *path)
{
    const bt_node *leaf = path->node[path->depth - 1];
    return leaf->ptr[path->idx[path->depth - 1]];
}

/* The allocation with the greatest base <= x, or NULL. */
static ct_alloc *bt_floor(const ct_allocmap *map, uint64_t x)
{
    const bt_node *t = map->root;
    if (!t || x < t->key[0])
        return NULL;
    for (;;) {
        int i = bt_floor_index(t, x);
        assert(i >= 0 && "below a subtree's least key only at the root");
        if (t->leaf)
            return t->ptr[i];
        t = t->ptr[i];
    }
}

static ct_alloc *bt_first_of(const bt_node *t)
{
    while (!t->leaf)
        t = t->ptr[0];
    return t->ptr[0];
}

/* The greatest key under t: the last entry's, all the way down. */
static uint64_t bt_last_key(const bt_node *t)
{
    while (!t->leaf)
        t = t->ptr[t->n - 1];
    return t->key[t->n - 1];
}

/* The entry after the one a descent ended at, or NULL. */
static ct_alloc *bt_after(const bt_path *path)
{
    for (int l = path->depth - 1; l >= 0; l--) {
        const bt_node *t = path->node[l];
        int next = path->idx[l] + 1;
        if (next < t->n)
            return t->leaf ? t->ptr[next] : bt_first_of(t->ptr[next]);
    }
    return NULL;
}

/* The allocation with the least base > x, or NULL. */
static ct_alloc *bt_above(const ct_allocmap *map, uint64_t x)
{
    bt_path path;
    if (!map->root)
        return NULL;
    bt_descend(map, x, &path);
    return bt_after(&path);
}

/* Tree nodes enough for a split at every level of the path and a new root,
 * taken now so that an insert cannot fail halfway. */
static bool bt_reserve(ct_allocmap *map, int depth)
{
    while (map->n_spare < (size_t)depth + 1) {
        bt_node *t = malloc(sizeof(*t));
        if (!t)
            return false;
        t->ptr[0] = map->spare;
        map->spare = t;
        map->n_spare++;
    }
    return true;
}

static bt_node *bt_take(ct_allocmap *map, bool leaf)
{
    bt_node *t = map->spare;
    assert(t && "bt_reserve took enough nodes for the insert");
    map->spare = t->ptr[0];
    map->n_spare--;
    map->tree_nodes++;
    t->n = 0;
    t->leaf = leaf;
    return t;
}

static void bt_give_back(ct_allocmap *map, bt_node *t)
{
    map->tree_nodes--;
    free(t);
}

static void bt_put_entry(bt_node *t, int p, uint64_t key, void *ptr)
{
    assert(t->n < BT_ORDER && p >= 0 && p <= t->n && "room at a position inside the node");
    if (p < t->n) { /* at the end (rising addresses) nothing moves */
        memmove(&t->key[p + 1], &t->key[p], (size_t)(t->n - p) * sizeof(t->key[0]));
        memmove(&t->ptr[p + 1], &t->ptr[p], (size_t)(t->n - p) * sizeof(t->ptr[0]));
    }
    t->key[p] = key;
    t->ptr[p] = ptr;
    t->n++;
}

static void bt_drop_entry(bt_node *t, int p)
{
    if (p < t->n - 1) {
        memmove(&t->key[p], &t->key[p + 1], (size_t)(t->n - p - 1) * sizeof(t->key[0]));
        memmove(&t->ptr[p], &t->ptr[p + 1], (size_t)(t->n - p - 1) * sizeof(t->ptr[0]));
    }
    t->n--;
}

/* (key, ptr) at position p of the path's node at level l, splitting that
 * node (and up the path) when it is full. */
static void bt_put(ct_allocmap *map, bt_path *path, int l, int p, uint64_t key, void *ptr)
{
    bt_node *t = path->node[l];
    if (t->n < BT_ORDER) {
        bt_put_entry(t, p, key, ptr);
        return;
    }
    bt_node *right = bt_take(map, t->leaf);
    if (p == t->n) {
        bt_put_entry(right, 0, key, ptr); /* at the end: t stays full */
    } else {
        int keep = BT_ORDER / 2;
        right->n = (uint16_t)(t->n - keep);
        memcpy(right->key, &t->key[keep], right->n * sizeof(t->key[0]));
        memcpy(right->ptr, &t->ptr[keep], right->n * sizeof(t->ptr[0]));
        t->n = (uint16_t)keep;
        if (p <= keep)
            bt_put_entry(t, p, key, ptr);
        else
            bt_put_entry(right, p - keep, key, ptr);
    }
    if (l == 0) {
        bt_node *root = bt_take(map, false);
        bt_put_entry(root, 0, t->key[0], t);
        bt_put_entry(root, 1, right->key[0], right);
        map->root = root;
        map->height++;
        return;
    }
    bt_put(map, path, l - 1, path->idx[l - 1] + 1, right->key[0], right);
}

/* The least key below level l changed to key: the parents whose first
 * entry leads there learn it, up to the first that is not. */
static void bt_new_least(bt_path *path, int l, uint64_t key)
{
    for (int up = l - 1; up >= 0; up--) {
        path->node[up]->key[path->idx[up]] = key;
        if (path->idx[up] != 0)
            return;
    }
}

/* key goes after the entry the path (a descent to key, above_some its
 * answer) ended at. */
static void bt_insert_on(ct_allocmap *map, bt_path *path, bool above_some, uint64_t key, ct_alloc *node)
{
    if (!map->root) {
        bt_node *leaf = bt_take(map, true);
        bt_put_entry(leaf, 0, key, node);
        map->root = leaf;
        map->height = 1;
        return;
    }
    int l = path->depth - 1;
    if (!above_some) {
        /* A new least key: every first entry on the way down now is it. */
        for (int up = 0; up < l; up++)
            path->node[up]->key[0] = key;
        bt_put(map, path, l, 0, key, node);
        return;
    }
    bt_put(map, path, l, path->idx[l] + 1, key, node);
}

/* After the leaf entry the path ends at was dropped, when that emptied the
 * leaf or took its least key: nodes left empty leave their parents, a root
 * of one child gives way to it, and the parents learn a new least key. */
__attribute__((noinline)) static void bt_reshape_after_drop(ct_allocmap *map, bt_path *path, uint64_t key)
{
    int l = path->depth - 1;
    while (path->node[l]->n == 0 && l > 0) {
        bt_give_back(map, path->node[l]);
        l--;
        bt_drop_entry(path->node[l], path->idx[l]);
    }
    if (path->node[l]->n == 0) {
        bt_give_back(map, path->node[l]);
        map->root = NULL;
        map->height = 0;
        return;
    }
    if (path->idx[l] == 0)
        bt_new_least(path, l, path->node[l]->key[0]);
    while (!map->root->leaf && map->root->n == 1) {
        bt_node *only = map->root->ptr[0];
        bt_give_back(map, map->root);
        map->root = only;
        map->height--;
    }
    if (key == map->last_base)
        map->last_base = bt_last_key(map->root);
}

/* Removes the leaf entry the path ends at.  Most removes take a key from
 * the middle or end of a leaf that keeps others: nothing above it changes
 * (an inner root keeps two children or more: only a node emptied below it
 * takes one away), so the rest is out of line. */
static void bt_remove_at(ct_allocmap *map, bt_path *path)
{
    int l = path->depth - 1;
    bt_node *leaf = path->node[l];
    uint64_t key = leaf->key[path->idx[l]];
    bt_drop_entry(leaf, path->idx[l]);
    if (__builtin_expect(leaf->n == 0 || path->idx[l] == 0, 0))
        bt_reshape_after_drop(map, path, key);
    else if (key == map->last_base) /* the leaf's last went: its new last is the tree's */
        map->last_base = leaf->key[leaf->n - 1];
    assert((!map->root || map->root->leaf || map->root->n > 1) && "an inner root has two children or more");
}

/* At the map's end: every allocation's claims released, every tree node
 * freed (the depth is at most BT_MAX_DEPTH: recursion is bounded). */
static void bt_free_subtree(ct_allocmap *map, bt_node *t)
{
    for (int i = 0; i < t->n; i++) {
        if (t->leaf)
            ct_claims_drop(&((ct_alloc *)t->ptr[i])->claims, &map->env);
        else
            bt_free_subtree(map, t->ptr[i]);
    }
    free(t);
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

/* A node that carried claims leaves: the store forgets them.  Out of
 * line: most freed allocations carry none. */
__attribute__((noinline)) static void forget_claims(ct_allocmap *map, ct_alloc *node)
{
    map->env.forget(map->env.owner, node->base, ct_claims_end(&node->claims, NULL));
    ct_claims_drop(&node->claims, &map->env);
}

/* node, the entry the path ends at, leaves the tree, its claims the store. */
static void forget_on(ct_allocmap *map, bt_path *path, ct_alloc *node)
{
    assert(bt_leaf_entry(path) == node && "the path ends at the node it forgets");
    bt_remove_at(map, path);
    assert((!map->root || map->last_base == bt_last_key(map->root)) && "last_base is the tree's greatest key");
    if (__builtin_expect(node->claims.n != 0, 0))
        forget_claims(map, node);
    node_put(map, node);
    map->count--;
    map->generation++;
}

static void forget(ct_allocmap *map, ct_alloc *node)
{
    bt_path path;
    bool found = bt_descend(map, node->base, &path);
    assert(found && "a live node is in the tree under its base");
    (void)found;
    forget_on(map, &path, node);
}

void ct_allocmap_free(ct_allocmap *map)
{
    if (!map)
        return;
    if (map->root)
        bt_free_subtree(map, map->root);
    for (bt_node *t = map->spare, *next; t; t = next) {
        next = t->ptr[0];
        free(t);
    }
    for (size_t i = 0; i < map->n_chunks; i++)
        free(map->chunks[i]);
    free(map->chunks);
    free(map);
}

/* The lowest-based allocation intersecting [lo, hi), or NULL: the one at
 * or below lo if it reaches lo, else the first above it if it starts
 * before hi. */
static ct_alloc *overlapping(const ct_allocmap *map, uint64_t lo, uint64_t hi)
{
    if (lo >= hi)
        return NULL;
    ct_alloc *below = bt_floor(map, lo);
    if (below && lo - below->base < below->size)
        return below;
    ct_alloc *above = bt_above(map, lo);
    return above && above->base < hi ? above : NULL;
}

ct_alloc *ct_allocmap_first_in(const ct_allocmap *map, uint64_t lo, uint64_t hi)
{
    return map ? overlapping(map, lo, hi) : NULL;
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
    /* What can fail first, while nothing has changed. */
    if (!bt_reserve(map, map->height))
        return CT_ENOMEM;
    ct_alloc *node = node_get(map, base, size, owner);
    if (!node)
        return CT_ENOMEM;
    /* One descent finds the new node's place and both its neighbours, the
     * only entries it could overlap. */
    bt_path path;
    bool above_some = map->root && bt_descend(map, base, &path);
    const ct_alloc *below = above_some ? bt_leaf_entry(&path) : NULL;
    /* Nothing lies above a base at or past the greatest: no walk back up
     * the path for an allocation at a rising address, the usual one. */
    const ct_alloc *above = map->root && base < map->last_base ? bt_after(&path) : NULL;
    if ((below && base - below->base < below->size) || (above && above->base < base + size)) {
        /* Rare: a free we missed.  The stale entries go first (forget()
         * invalidates the lookup caches); a new node invalidates none. */
        for (ct_alloc *stale; (stale = overlapping(map, base, base + size));)
            forget(map, stale);
        above_some = map->root && bt_descend(map, base, &path);
    }
    bt_insert_on(map, &path, above_some, base, node);
    if (map->count++ == 0 || base > map->last_base)
        map->last_base = base;
    assert(map->last_base == bt_last_key(map->root) && "last_base is the tree's greatest key");
    return CT_OK;
}

int ct_allocmap_remove(ct_allocmap *map, uint64_t base)
{
    if (!map)
        return CT_EINVAL;
    bt_path path;
    if (!map->root || !bt_descend(map, base, &path) || bt_leaf_entry(&path)->base != base)
        return CT_ENOENT;
    forget_on(map, &path, bt_leaf_entry(&path));
    return CT_OK;
}

/* O(n log n), in base order: owners go away rarely (a context destroyed),
 * allocations often. */
size_t ct_allocmap_remove_owner(ct_allocmap *map, uint64_t owner)
{
    if (!map || owner == 0 || !map->root)
        return 0;
    size_t removed = 0;
    for (ct_alloc *a = bt_first_of(map->root), *next; a; a = next) {
        uint64_t base = a->base;
        if ((a->owner & ~MAPPING) == owner) {
            forget(map, a);
            removed++;
        }
        next = bt_above(map, base);
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
    recent[recent_next++ % RECENT_HITS] = (recent_hit){map->id, map->generation, node->base, node->size, node};
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
    ct_alloc *node = bt_floor(map, addr);
    if (!node || addr - node->base >= node->size)
        return NULL;
    remember(map, node);
    return node;
}

uint64_t ct_alloc_base(const ct_alloc *a)
{
    return a ? a->base : 0;
}
uint64_t ct_alloc_size(const ct_alloc *a)
{
    return a ? a->size : 0;
}
uint64_t ct_alloc_owner(const ct_alloc *a)
{
    return a ? a->owner & ~MAPPING : 0;
}
bool ct_alloc_is_mapping(const ct_alloc *a)
{
    return a && (a->owner & MAPPING);
}
size_t ct_allocmap_count(const ct_allocmap *map)
{
    return map ? map->count : 0;
}
ct_claims *ct_alloc_claims(ct_alloc *a)
{
    return &a->claims;
}
ct_claim_env *ct_allocmap_env(ct_allocmap *map)
{
    return &map->env;
}

ct_allocmap_shape ct_allocmap_shape_of(const ct_allocmap *map)
{
    ct_allocmap_shape shape = {0};
    if (!map)
        return shape;
    shape.height = (size_t)map->height;
    shape.tree_nodes = map->tree_nodes;
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
    bytes += (map->tree_nodes + map->n_spare) * ct_heap_cost(sizeof(bt_node));
    return bytes + map->env.spill_bytes;
}
