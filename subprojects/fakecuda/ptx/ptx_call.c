/*
 * ptx_call.c: function addresses and the callee of an indirect call
 * (call through a register, with a prototype: C++ virtual functions and
 * function pointers), written from NVIDIA's PTX ISA document.
 *
 * A .func's address is a value of a window of the generic space above
 * every other (ptx_exec.c's FC_WIN_*): a vtable's initialiser and a
 * "mov.u64 %rd, func" hold it, an indirect call maps it back. Memory is
 * never there, so loading from or storing to it is an illegal address, as
 * touching code is on a GPU.
 * Invariants: an address maps back to the .func it was made from, and to
 * nothing else; a kernel (.entry) is never a callee.
 */
#include "ptx_ir.h"

#define PTX_FUNC_BASE (6ull << 48)
#define PTX_FUNC_STRIDE 16u

uint64_t ptx_func_address(unsigned index)
{
    return PTX_FUNC_BASE + (uint64_t)index * PTX_FUNC_STRIDE;
}

int32_t ptx_func_at(const fc_ptx_module *m, uint64_t address)
{
    if (address < PTX_FUNC_BASE || (address - PTX_FUNC_BASE) % PTX_FUNC_STRIDE)
        return -1;
    uint64_t index = (address - PTX_FUNC_BASE) / PTX_FUNC_STRIDE;
    if (index >= m->nfuncs || m->func[index].entry)
        return -1;
    return (int32_t)index;
}
