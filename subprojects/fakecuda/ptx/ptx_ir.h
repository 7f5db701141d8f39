/*
 * ptx_ir.h: the decoded form of a PTX module (ptx_parse.c makes it once
 * per module; ptx_exec.c runs it).
 *
 * A module is its variables (.global/.const/.shared, with initial bytes)
 * and its functions (.entry kernels and .func device functions). A
 * function is a flat array of decoded instructions; labels are resolved to
 * instruction indexes, registers to slots of the function's register file
 * (one 64-bit value per lane), symbols to a variable or a per-frame slot.
 * Invariants:
 * - Every operand of a decoded instruction is resolved: a register index
 *   below the function's nregs, a branch target below its ninsn, a callee
 *   index below the module's nfuncs, a variable index below nvars.
 * - An instruction the parser does not know stays in the function as
 *   PI_UNSUPPORTED with its text: running it fails the launch, naming it.
 * - The IR is read-only once parsed: launches on several threads share it.
 * Asserted in: ptx_parse.c.
 */
#ifndef FC_PTX_IR_H
#define FC_PTX_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Scalar types: the low bits order them, the class says how to compute. */
typedef enum ptx_type {
    PT_NONE,
    PT_B8,
    PT_B16,
    PT_B32,
    PT_B64,
    PT_U8,
    PT_U16,
    PT_U32,
    PT_U64,
    PT_S8,
    PT_S16,
    PT_S32,
    PT_S64,
    PT_F16,
    PT_F16X2,
    PT_BF16,
    PT_BF16X2,
    PT_F32,
    PT_F64,
    PT_PRED,
    PT_B128,
} ptx_type;

/* State spaces. */
typedef enum ptx_space {
    PS_GENERIC,
    PS_GLOBAL,
    PS_CONST,
    PS_SHARED,
    PS_LOCAL,
    PS_PARAM,
} ptx_space;

/* Opcodes, generated from one table (ptx_ops.def). */
typedef enum ptx_op {
#define PTX_OP(name, text) PI_##name,
#include "ptx_ops.def"
#undef PTX_OP
    PI_COUNT
} ptx_op;

/* Special registers. */
typedef enum ptx_sreg {
    SR_TID_X,
    SR_TID_Y,
    SR_TID_Z,
    SR_NTID_X,
    SR_NTID_Y,
    SR_NTID_Z,
    SR_CTAID_X,
    SR_CTAID_Y,
    SR_CTAID_Z,
    SR_NCTAID_X,
    SR_NCTAID_Y,
    SR_NCTAID_Z,
    SR_LANEID,
    SR_WARPID,
    SR_NWARPID,
    SR_SMID,
    SR_NSMID,
    SR_GRIDID,
    SR_CLOCK,
    SR_CLOCK64,
    SR_GLOBALTIMER,
    SR_LANEMASK_EQ,
    SR_LANEMASK_LT,
    SR_LANEMASK_LE,
    SR_LANEMASK_GT,
    SR_LANEMASK_GE,
    SR_DYN_SMEM,
    SR_TOTAL_SMEM,
    SR_ENVREG1, /* a cooperative grid's workspace address, high half */
    SR_ENVREG2, /* and low half (0 outside a cooperative launch) */
    SR_COUNT
} ptx_sreg;

typedef enum ptx_okind {
    PO_NONE,
    PO_REG,   /* reg */
    PO_IMM,   /* imm: raw bits in the instruction's type */
    PO_SREG,  /* reg: ptx_sreg */
    PO_SYM,   /* sym: the address of a symbol (a variable or frame slot) */
    PO_ADDR,  /* [base + imm]: base a register (reg >= 0) or a symbol (sym >= 0), or neither */
    PO_VEC,   /* {regs}: vec registers (a -1 entry is the sink "_", PTX_VEC_ZERO the immediate 0) */
    PO_LABEL, /* imm: instruction index */
    PO_FUNC,  /* imm: function index */
    PO_SINK,  /* "_" */
} ptx_okind;

/* A symbol an operand names: a module variable or a slot of the frame. */
typedef enum ptx_symkind { SYM_VAR, SYM_KPARAM, SYM_FRAME } ptx_symkind;

typedef struct ptx_sym {
    uint8_t kind;  /* ptx_symkind */
    uint8_t space; /* ptx_space */
    uint32_t index;
    uint64_t offset; /* SYM_KPARAM: offset in the parameter block; SYM_FRAME: in the frame */
} ptx_sym;

typedef struct ptx_opnd {
    uint8_t kind; /* ptx_okind */
    uint8_t vec;  /* PO_VEC: entries */
    bool neg;     /* a "!p" predicate operand */
    int32_t reg;
    int32_t sym; /* index into the function's syms, or -1 */
    int32_t regs[4];
    uint64_t imm;
} ptx_opnd;

#define PTX_MAX_OPS 6

/* A PO_VEC entry that is the immediate 0: only a mov's packing source has
   one ("mov.b32 %f1, {0, %rs1}", a bf16 widened to f32, as cuFFT's PTX
   does), where it reads as 0, as the sink does. */
#define PTX_VEC_ZERO (-2)

/* Modifier flags. */
enum {
    PM_HI = 1u << 0,
    PM_LO = 1u << 1,
    PM_WIDE = 1u << 2,
    PM_SAT = 1u << 3,
    PM_FTZ = 1u << 4,
    PM_APPROX = 1u << 5,
    PM_TO = 1u << 6, /* cvta.to */
    PM_UNI = 1u << 7,
    PM_CC = 1u << 8,      /* add.cc and friends: write the carry */
    PM_CIN = 1u << 9,     /* addc/subc: read the carry */
    PM_SHIFTR = 1u << 10, /* shf.r */
    PM_CLAMP = 1u << 11,  /* shf.clamp */
    PM_ABS = 1u << 12,
    PM_RELU = 1u << 13,
    PM_STRONG = 1u << 14, /* ld.volatile/.relaxed/.acquire: a load that may poll (ptx_sync.h) */
};

/* Rounding modes (.rn is the default). */
typedef enum ptx_rnd { PR_NONE, PR_RN, PR_RZ, PR_RM, PR_RP, PR_RNI, PR_RZI, PR_RMI, PR_RPI } ptx_rnd;

typedef struct ptx_insn {
    uint16_t op;   /* ptx_op */
    uint8_t type;  /* the instruction's (destination) type */
    uint8_t type2; /* cvt's source type; setp/set/slct's comparison type */
    uint8_t space; /* ld/st/atom/red/cvta */
    uint8_t vec;   /* 1, 2 or 4 */
    uint8_t rnd;   /* ptx_rnd */
    uint8_t sub;   /* per opcode: comparison, atomic operation, shfl mode, vote mode */
    uint8_t sub2;  /* setp/set: combining boolean operation (0 none) */
    uint8_t nops;
    uint16_t mods; /* PM_* */
    int32_t pred;  /* guard predicate register, or -1 */
    bool pred_neg;
    ptx_opnd o[PTX_MAX_OPS];
    uint32_t line;    /* in the PTX text, for messages */
    const char *text; /* PI_UNSUPPORTED: the instruction as written (owned by the module) */
} ptx_insn;

/* Comparisons (setp, set, slct's sign test). */
typedef enum ptx_cmp {
    PC_EQ = 1,
    PC_NE,
    PC_LT,
    PC_LE,
    PC_GT,
    PC_GE,
    PC_LO,
    PC_LS,
    PC_HI,
    PC_HS,
    PC_EQU,
    PC_NEU,
    PC_LTU,
    PC_LEU,
    PC_GTU,
    PC_GEU,
    PC_NUM,
    PC_NAN,
} ptx_cmp;

/* Atomic operations. */
typedef enum ptx_aop {
    PA_ADD = 1,
    PA_MIN,
    PA_MAX,
    PA_INC,
    PA_DEC,
    PA_EXCH,
    PA_CAS,
    PA_AND,
    PA_OR,
    PA_XOR,
} ptx_aop;

/* shfl modes; vote modes. */
typedef enum ptx_shfl { PSH_UP = 1, PSH_DOWN, PSH_BFLY, PSH_IDX } ptx_shfl;
typedef enum ptx_vote { PV_ALL = 1, PV_ANY, PV_UNI, PV_BALLOT } ptx_vote;

/* A module variable. */
typedef struct ptx_var {
    char *name;
    uint8_t space; /* PS_GLOBAL, PS_CONST or PS_SHARED */
    uint32_t align;
    uint64_t size;       /* 0 for an extern .shared array (the launch's dynamic bytes) */
    unsigned char *init; /* size bytes, or NULL for zeros */
    bool is_extern;      /* declared, defined elsewhere (not allocated) */
} ptx_var;

/* A parameter of a function (in its frame, or for a kernel in the parameter block). */
typedef struct ptx_param {
    uint64_t offset, size;
} ptx_param;

/* PB_SETCOND: cudaGraphSetConditional(handle, value) stores value in the handle's 4-byte cell (graph.c). */
typedef enum ptx_builtin { PB_NONE, PB_VPRINTF, PB_ASSERTFAIL, PB_MALLOC, PB_FREE, PB_SETCOND } ptx_builtin;

typedef struct ptx_func {
    char *name;
    bool entry;
    uint8_t builtin; /* ptx_builtin: an .extern function fakecuda supplies */
    bool defined;    /* has a body */
    ptx_insn *insn;
    uint32_t ninsn;
    uint32_t nregs;
    ptx_sym *sym;
    uint32_t nsym;
    ptx_param *param; /* the parameters: kernel block offsets, or frame offsets */
    uint32_t nparams;
    ptx_param *ret; /* .func return values (frame offsets) */
    uint32_t nret;
    uint64_t param_bytes;   /* kernel: the parameter block's size */
    uint64_t frame_bytes;   /* per-thread frame: .local variables, .param slots */
    uint64_t shared_static; /* not used per function: module-wide */
    char *error;            /* why the function cannot run, or NULL */
} ptx_func;

typedef struct fc_ptx_module {
    ptx_var *var;
    uint32_t nvars;
    ptx_func *func;
    uint32_t nfuncs;
    uint64_t *var_addr;     /* global/const: the device address; shared: the offset in the block */
    uint64_t shared_static; /* bytes of static shared memory */
    uint64_t shared_align;  /* where the dynamic shared memory starts (aligned) */
    char **strings;         /* owned texts of unsupported instructions */
    uint32_t nstrings;
} fc_ptx_module;

/* Function addresses (ptx_call.c): function index's address, and the
   .func an address names (-1: none). */
uint64_t ptx_func_address(unsigned index);
int32_t ptx_func_at(const fc_ptx_module *m, uint64_t address);

#endif
