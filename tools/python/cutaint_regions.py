"""cutaint_regions: include/cutaint.h's regions for Python programs.

Owns two things, both inert without libcutaint.so in the process:

- region_alloc(ptr, nbytes) / region_free(ptr): the shim's entry points
  through ctypes; without the shim each answers NO_SHIM and costs nothing.
- track_torch_allocator(): PyTorch's caching allocator reports every block
  it hands out or takes back through its allocator trace
  (c10::cuda::CUDACachingAllocator::attachAllocatorTraceTracker), and a
  small extension, compiled on first use by torch.utils.cpp_extension,
  turns ALLOC into region_alloc and FREE_COMPLETED into region_free.

Invariants:
- FREE_COMPLETED, not FREE_REQUESTED, ends a region: a block freed while
  another stream still uses it (record_stream) is not reusable until
  FREE_COMPLETED, and its bytes belong to the tensor until then.
- The tracker runs under PyTorch's allocator lock and may run on any
  thread: it never takes the GIL and calls only the shim's two entry
  points, which take cutaint's own locks (always after the allocator's,
  as the allocator's own cudaMalloc does).
- Blocks already handed out when tracking starts are declared from the
  allocator's snapshot, so no later FREE_COMPLETED frees an unknown base.

Answers are include/cutaint.h's CUTAINT_REGION_* values.  See
docs/POOLS.md for when to use what.
"""
import ctypes

DONE, REFUSED, NO_SHIM = 0, 1, 2

_self = ctypes.CDLL(None)
try:
    _alloc = _self.cutaint_shim_region_alloc
    _alloc.argtypes, _alloc.restype = (ctypes.c_void_p, ctypes.c_size_t), ctypes.c_int
    _free = _self.cutaint_shim_region_free
    _free.argtypes, _free.restype = (ctypes.c_void_p,), ctypes.c_int
except AttributeError:  # not under cutaint
    _alloc = _free = None


def under_cutaint():
    return _alloc is not None


def region_alloc(ptr, nbytes):
    return _alloc(ptr, nbytes) if _alloc else NO_SHIM


def region_free(ptr):
    return _free(ptr) if _free else NO_SHIM


# The tracker receives the entry points as addresses from here, so the
# extension needs neither dlsym nor a link to libcutaint.so.
_TRACKER_SOURCE = r"""
#include <c10/cuda/CUDACachingAllocator.h>

namespace alloc = c10::cuda::CUDACachingAllocator;

static int (*region_alloc)(void *, size_t);
static int (*region_free)(void *);

static void on_trace(const alloc::TraceEntry &entry)
{
    void *block = reinterpret_cast<void *>(entry.addr_);
    if (entry.action_ == alloc::TraceEntry::ALLOC)
        region_alloc(block, entry.size_);
    else if (entry.action_ == alloc::TraceEntry::FREE_COMPLETED)
        region_free(block);
}

void attach(int64_t alloc_fn, int64_t free_fn)
{
    region_alloc = reinterpret_cast<int (*)(void *, size_t)>(alloc_fn);
    region_free = reinterpret_cast<int (*)(void *)>(free_fn);
    alloc::attachAllocatorTraceTracker(on_trace);
}
"""

_tracking = False


def _live_blocks(torch):
    """(address, bytes) of each block the allocator has handed out."""
    for segment in torch.cuda.memory_snapshot():
        address = segment["address"]
        for block in segment["blocks"]:
            if block["state"] == "active_allocated":
                yield address, block["size"]
            address += block["size"]


def track_torch_allocator(verbose=False):
    """Declare every block of PyTorch's caching allocator a region, now and
    from now on.  Answers (tracking, why): tracking is False without the
    shim (nothing is compiled), with another allocator backend (the
    cudaMallocAsync backend already gives each tensor an allocation of its
    own) or when the extension cannot be built; why says which."""
    global _tracking
    if _tracking:
        return True, "already tracking"
    if not under_cutaint():
        return False, "libcutaint.so is not loaded"
    try:
        import torch
        from torch.utils.cpp_extension import load_inline
    except ImportError:
        return False, "PyTorch is not importable"

    if not torch.cuda.is_available():
        return False, "CUDA is not available to PyTorch"
    backend = torch.cuda.get_allocator_backend()
    if backend != "native":
        return False, f"the {backend} allocator backend: each tensor is already an allocation"
    torch.cuda.init()  # the allocator refuses trackers before it exists
    try:
        ext = load_inline(name="cutaint_torch_tracker", cpp_sources=_TRACKER_SOURCE,
                          functions=["attach"], with_cuda=True, verbose=verbose)
    except (RuntimeError, OSError) as e:  # no compiler, no CUDA headers
        return False, f"the tracker extension did not build: {str(e).splitlines()[0]}"
    as_address = lambda fn: ctypes.cast(fn, ctypes.c_void_p).value
    for address, nbytes in _live_blocks(torch):
        region_alloc(address, nbytes)
    ext.attach(as_address(_alloc), as_address(_free))
    _tracking = True
    return True, "tracking"
