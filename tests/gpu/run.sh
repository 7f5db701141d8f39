#!/usr/bin/env bash
# tests/gpu/run.sh: cutaint on a real NVIDIA driver, CUDA runtime and PyTorch.
#
#   tests/gpu/run.sh OUT_DIR             build, compile, run every scenario
#   tests/gpu/run.sh --dry-run [OUT_DIR] print every command; compile the
#                                        programs for real (no GPU needed)
#   tests/gpu/run.sh --driver fakecuda OUT_DIR
#                                        the same programs and checks on
#                                        fakecuda, the CPU driver (no GPU)
#
# Builds cutaint with meson + ninja into OUT_DIR/build, compiles the programs
# in tests/gpu/programs with nvcc -arch=sm_90 (or the -gencode targets a
# program names) into OUT_DIR/bin, runs each
# scenario without and with the shim (LD_PRELOAD), and writes
# OUT_DIR/summary.txt ending with "N passed, M failed". Each run's stdout,
# stderr, exit status, command line, report and health file land in
# OUT_DIR/<scenario>/. See tests/gpu/README.md.
#
# It must never hang and must always leave a summary: every command runs
# under timeout, the whole suite under a time budget, no failure stops it,
# and summary.txt is rewritten after every scenario (scenarios not reached
# count as failed), so even a suite killed from outside leaves one.
#
# With --driver fakecuda every run finds fakecuda's libcuda.so.1 first and
# the programs' kernels in a fakecuda kernel plugin
# (programs/fakecuda_kernels.c); the scenarios that need real hardware
# (PyTorch, overhead figures) are skipped there, and counted as skipped.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
PROGS=$HERE/programs

# The whole suite must end within 8 minutes: no run may outlast this budget
# (seconds since the script started); a scenario started later is skipped.
BUDGET_S=${GPU_SUITE_BUDGET_S:-450}

# Programs: output name | source in programs/ | nvcc arguments beyond
# "-arch=sm_90 -O2 -o OUT SRC" ({CUDA_LIB} is the toolkit's library folder);
# arguments that name -gencode targets replace -arch=sm_90 (nvcc would build
# for both).
PROGRAMS=(
    "happy|happy.cu|"
    "badconfig|badconfig.cu|"
    "badconfig_ptsz|badconfig.cu|--default-stream per-thread"
    "badconfig_shared|badconfig.cu|-cudart shared -Xlinker -rpath={CUDA_LIB}"
    "wildptr|wildptr.cu|"
    "empty_launch|empty_launch.cu|"
    "driver_api|driver_api.cpp|-cudart none -lcuda"
    "driver_api_ptds|driver_api.cpp|-cudart none -DCUDA_API_PER_THREAD_DEFAULT_STREAM=1 -lcuda"
    "driver_kernels.cubin|driver_kernels.cu|-cubin"
    "driver_kernels.ptx|driver_kernels.cu|-ptx"
    "wrong_arch|wrong_arch.cu|-gencode arch=compute_80,code=sm_80 -lcuda"
    "driver_kernels_sm80.fatbin|driver_kernels.cu|-fatbin -gencode arch=compute_80,code=sm_80"
    "arch_read|arch_read.cu|-gencode arch=compute_80,code=sm_80"
    "arch_read_shared|arch_read.cu|-gencode arch=compute_80,code=sm_80 -cudart shared -Xlinker -rpath={CUDA_LIB}"
)

# The pattern for the PyTorch fault injection: the first launch of the kernel
# behind Tensor.fill_ fails with an error that, unlike a real launch failure,
# leaves the context usable, so the reads that follow show taint, not death.
INJECT='CUTAINT_INJECT=launch:*FillFunctor*#1=CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES'

# torch_pool.py's fourth fill (tensor 3 of a pool) fails.
POOL_INJECT='CUTAINT_INJECT=launch:*FillFunctor*#4=CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES'

# badconfig.cu's scale(const float* in, float* out, ...) overwrites out: a
# non-const pointer is read and written by default.  Its corrected relaunch
# has as many threads in all as the refused one, so it is a retry and runs
# either way (rt_retry); with this it runs as a plain launch over a
# write-only output (the rt_refused_read scenarios).
SCALE_ROLES='CUTAINT_ARGS=scale=r,w'

# Scenarios, run in this order: name | command ({BIN}: compiled programs,
# {PROGS}: tests/gpu/programs) | environment for every run | environment for
# the shim run only | check function | timeout per run (s) | runs.
# Runs: base (no shim), shim (LD_PRELOAD), sanitizer (compute-sanitizer, no
# shim; only where it is installed).
SCENARIOS=(
    "rt_happy|{BIN}/happy||CUTAINT_LOG=debug|check_same|60|base shim"
    "rt_refused_read|{BIN}/badconfig||CUTAINT_LOG=debug $SCALE_ROLES|check_refused|60|base shim"
    "rt_refused_read_ptsz|{BIN}/badconfig_ptsz||CUTAINT_LOG=debug $SCALE_ROLES|check_refused|60|base shim"
    "rt_shared_refused_read|{BIN}/badconfig_shared||CUTAINT_LOG=debug $SCALE_ROLES|check_refused|60|base shim"
    "rt_retry|{BIN}/badconfig||CUTAINT_LOG=debug|check_retry|60|base shim"
    "rt_context_lost|{BIN}/wildptr||CUTAINT_LOG=debug|check_latched|60|base shim"
    "drv_refused_read_cubin|{BIN}/driver_api {BIN}/driver_kernels.cubin||CUTAINT_LOG=debug|check_refused|60|base shim"
    "drv_refused_read_ptx|{BIN}/driver_api {BIN}/driver_kernels.ptx||CUTAINT_LOG=debug|check_refused|60|base shim"
    "drv_refused_read_ptds|{BIN}/driver_api_ptds {BIN}/driver_kernels.cubin||CUTAINT_LOG=debug|check_refused|60|base shim"
    "arch_eager|{BIN}/wrong_arch {BIN}/driver_kernels_sm80.fatbin|CUDA_MODULE_LOADING=EAGER|CUTAINT_LOG=debug|check_arch_eager|60|base shim"
    "arch_lazy|{BIN}/wrong_arch {BIN}/driver_kernels_sm80.fatbin|CUDA_MODULE_LOADING=LAZY|CUTAINT_LOG=debug|check_arch_lazy|60|base shim"
    "arch_refused_read|{BIN}/arch_read|CUDA_MODULE_LOADING=LAZY|CUTAINT_LOG=debug|check_arch_refused|60|base shim"
    "arch_shared_refused_read|{BIN}/arch_read_shared|CUDA_MODULE_LOADING=LAZY|CUTAINT_LOG=debug|check_arch_refused|60|base shim"
    "torch_same|python3 {PROGS}/torch_same.py|||check_torch_same|120|base shim"
    "torch_inject|python3 {PROGS}/torch_inject.py||CUTAINT_LOG=debug $INJECT|check_torch_inject|120|base shim"
    "torch_inject_async|python3 {PROGS}/torch_inject.py|PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync|CUTAINT_LOG=debug $INJECT|check_torch_inject_async|120|base shim"
    "torch_pool|python3 {PROGS}/torch_pool.py pool||$POOL_INJECT|check_torch_pool|120|base shim"
    "torch_regions|python3 {PROGS}/torch_pool.py regions||$POOL_INJECT|check_torch_regions|120|base shim"
    "torch_trace|python3 {PROGS}/torch_pool.py trace||$POOL_INJECT|check_torch_trace|300|base shim"
    "overhead_launch|{BIN}/empty_launch 200000||CUTAINT_LOG=warn|check_overhead_launch|60|base shim"
    "overhead_torch|python3 {PROGS}/torch_infer.py||CUTAINT_LOG=warn|check_overhead_torch|120|base shim sanitizer"
)

# Scenarios that need a real GPU: skipped with --driver fakecuda.
GPU_ONLY=(torch_same torch_inject torch_inject_async torch_pool torch_regions torch_trace overhead_launch overhead_torch)

# ---------------------------------------------------------------- state

DRIVER=nvidia       # or fakecuda
DRIVER_ENV=()       # what every run needs to find the driver
DRY_RUN=0
OUT=
BIN=
BUILD=
SHIM=
BUILD_ERR=          # why the shim could not be built, empty when it was
TORCH_ERR=          # why PyTorch cannot run, empty when it can
NVCC=
CUDA_HOME=
SANITIZER=
MESON=()
DEPS_ENV=()         # CPATH=... LIBRARY_PATH=... for headers/libs the system lacks
DEPS_NOTES=()
declare -A VERDICT=() REASON=() TOOK=()
FIGURES=()
NOTES=()
FAILS=()            # the current scenario's failed checks

# ---------------------------------------------------------------- helpers

usage() {
    sed -n '4,9p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

say() { printf '%s\n' "$*"; }

# Print a command the way a shell would read it back.
show() {
    local w line=+
    for w in "$@"; do line+=" $(printf '%q' "$w")"; done
    say "$line"
}

elapsed() { say $((SECONDS)); }

# Seconds a command started now may run: its own limit, cut to what the
# suite's budget has left.
limit_for() {
    local want=$1 left=$((BUDGET_S - SECONDS))
    ((left < want)) && want=$left
    say "$want"
}

fail() { FAILS+=("$*"); }

# ---------------------------------------------------------------- setup

find_tools() {
    local c
    NVCC=$(command -v nvcc || true)
    for c in /usr/local/cuda/bin/nvcc /usr/local/cuda-*/bin/nvcc; do
        [[ -z $NVCC && -x $c ]] && NVCC=$c
    done
    [[ -n $NVCC ]] && CUDA_HOME=$(toolkit_home)
    SANITIZER=$(command -v compute-sanitizer || true)
    for c in "$CUDA_HOME/bin/compute-sanitizer" "$CUDA_HOME/compute-sanitizer/compute-sanitizer"; do
        [[ -z $SANITIZER && -n $CUDA_HOME && -x $c ]] && SANITIZER=$c
    done
    if command -v meson >/dev/null; then
        MESON=(meson)
    elif python3 -c 'import mesonbuild' 2>/dev/null; then
        MESON=(python3 -m mesonbuild.mesonmain)  # pip's meson without its script on PATH
    fi
}

# The toolkit's folder as nvcc itself knows it (its TOP): the nvcc on PATH
# may be a wrapper script outside the toolkit (/usr/local/bin/nvcc), where
# the folder above it holds no include/cuda.h.
toolkit_home() {
    local top
    top=$(timeout 60 "$NVCC" --dryrun -x cu /dev/null 2>&1 | sed -n 's/^#\$ TOP=//p' | head -n 1)
    [[ -n $top && -d $top ]] || top=$(dirname "$(readlink -f "$NVCC")")/..
    (cd "$top" && pwd -P)
}

cuda_lib() {
    if [[ -d $CUDA_HOME/lib64 ]]; then say "$CUDA_HOME/lib64"; else say "$CUDA_HOME/lib"; fi
}

# Does the C compiler find HEADER / link -lLIB with the extra dirs found so far?
have_header() { printf '#include <%s>\n' "$1" | env "${DEPS_ENV[@]}" timeout 30 gcc -E -x c - >/dev/null 2>&1; }
have_lib() {
    printf 'int main(void){return 0;}\n' |
        env "${DEPS_ENV[@]}" timeout 30 gcc -x c - -l"$1" -o /dev/null >/dev/null 2>&1
}

# The build needs uthash.h and libiberty, which the GPU machine's image may
# lack and where nothing can be installed. Look for copies carried in the
# tree (stage-deps.sh's .gpu-deps, or a vendored third_party/ or subprojects/)
# and pass them to gcc through CPATH / LIBRARY_PATH, which meson's checks honour.
find_deps() {
    local deps=${GPU_SUITE_DEPS:-$REPO/.gpu-deps} inc=() lib=() h d
    [[ -d $deps/include ]] && inc+=("$deps/include")
    [[ -d $deps/lib ]] && lib+=("$deps/lib")
    while IFS= read -r h; do
        inc+=("$(dirname "$h")")
    done < <(find "$REPO/third_party" "$REPO/subprojects" -maxdepth 4 -name uthash.h 2>/dev/null)
    DEPS_ENV=()
    if ! have_header uthash.h || ! have_header libiberty/demangle.h || ! have_lib iberty; then
        if ((${#inc[@]} || ${#lib[@]})); then
            d=$(IFS=:; say "${inc[*]}")
            DEPS_ENV=("CPATH=$d${CPATH:+:$CPATH}")
            d=$(IFS=:; say "${lib[*]}")
            DEPS_ENV+=("LIBRARY_PATH=$d${LIBRARY_PATH:+:$LIBRARY_PATH}")
            DEPS_NOTES+=("build uses carried headers/libraries: ${DEPS_ENV[*]}")
        fi
    fi
    have_header uthash.h ||
        DEPS_NOTES+=("MISSING uthash.h: not in the system nor in $deps/include, third_party/, subprojects/ (run tests/gpu/stage-deps.sh where uthash-dev is installed and carry .gpu-deps)")
    have_header libiberty/demangle.h ||
        DEPS_NOTES+=("MISSING libiberty/demangle.h: not in the system nor in $deps/include (run tests/gpu/stage-deps.sh where libiberty-dev is installed and carry .gpu-deps)")
    have_lib iberty ||
        DEPS_NOTES+=("MISSING libiberty.a: gcc cannot link -liberty, not even from $deps/lib (run tests/gpu/stage-deps.sh and carry .gpu-deps)")
}

# One line per tool/fact, into environment.txt: who ran what, where.
describe_environment() {
    say "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    say "host: $(uname -srm)"
    say "repo: $REPO ($(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || say '?'))"
    say "nvcc: ${NVCC:-MISSING} $([[ -n $NVCC ]] && timeout 30 "$NVCC" --version | tail -n 2 | head -n 1)"
    say "compute-sanitizer: ${SANITIZER:-not present}"
    say "meson: ${MESON[*]:-MISSING} $([[ ${#MESON[@]} -gt 0 ]] && timeout 30 "${MESON[@]}" --version)"
    say "ninja: $(command -v ninja || say MISSING) $(timeout 30 ninja --version 2>/dev/null)"
    say "gcc: $(timeout 30 gcc --version 2>/dev/null | head -n 1)"
    say "python3: $(command -v python3) $(timeout 30 python3 --version 2>&1)"
    [[ $DRIVER == fakecuda ]] && { say "gpu: none: fakecuda, the CPU driver ($BUILD/subprojects/fakecuda)"; return; }
    say "gpu: $(timeout 30 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -n 2 | tr '\n' ' ')"
    local d
    for d in "${DEPS_NOTES[@]}"; do say "deps: $d"; done
}

# PyTorch with CUDA is a prerequisite of four scenarios; find out once.
check_torch() {
    local probe='import torch; assert torch.cuda.is_available(), "torch.cuda.is_available() is False"; print(torch.__version__, "CUDA", torch.version.cuda, torch.cuda.get_device_name(0))'
    local outp
    if outp=$(timeout 120 python3 -c "$probe" 2>&1); then
        say "torch: $outp"
    else
        TORCH_ERR="PyTorch with CUDA unavailable: $(tail -n 1 <<<"$outp")"
        say "torch: $TORCH_ERR"
    fi
}

# ---------------------------------------------------------------- build

build_cutaint() {
    local log=$OUT/build.log
    BUILD=$OUT/build
    local setup=("${MESON[@]}" setup "$BUILD" "$REPO" -Dtests=disabled
        "-Dtoolkit_include=${CUDA_HOME:-/usr/local/cuda}/include")
    local compile=(ninja -C "$BUILD" -k 0)
    if ((DRY_RUN)); then
        show env "${DEPS_ENV[@]}" timeout 180 "${setup[@]}"
        show env "${DEPS_ENV[@]}" timeout 300 "${compile[@]}"
        return 0
    fi
    rm -rf "$BUILD"
    if ((${#MESON[@]} == 0)); then
        BUILD_ERR="meson not found"
    elif ! command -v ninja >/dev/null; then
        BUILD_ERR="ninja not found"
    else
        {
            show env "${DEPS_ENV[@]}" "${setup[@]}"
            env "${DEPS_ENV[@]}" timeout 180 "${setup[@]}" </dev/null 2>&1 || BUILD_ERR="meson setup failed"
            if [[ -z $BUILD_ERR ]]; then
                show env "${DEPS_ENV[@]}" "${compile[@]}"
                env "${DEPS_ENV[@]}" timeout 300 "${compile[@]}" </dev/null 2>&1 || say "ninja failed (a target other than the shim may be at fault)"
            fi
        } >"$log"
    fi
    SHIM=$BUILD/shim/libcutaint.so
    [[ -f $SHIM ]] || SHIM=$(find "$BUILD" -name libcutaint.so -print -quit 2>/dev/null)
    if [[ -z $BUILD_ERR && -z $SHIM ]]; then
        BUILD_ERR="libcutaint.so was not built"
    fi
    if [[ -n $BUILD_ERR ]]; then
        BUILD_ERR+=" (see build.log$( ((${#DEPS_NOTES[@]})) && say "; ${DEPS_NOTES[*]}"))"
        grep -m 3 -iE 'error|not found' "$log" 2>/dev/null | sed 's/^/  build.log: /'
        return 1
    fi
    say "build: $SHIM"
}

# Compile every program in parallel (nvcc is slow, the machine has cores);
# each leaves BIN/NAME.log, and BIN/NAME only on success.
compile_programs() {
    local row name src extra args targets pids=() p bad=0 w
    mkdir -p "$BIN"
    if [[ -z $NVCC ]]; then
        say "nvcc not found (not on PATH, not in /usr/local/cuda*/bin)"
        return 1
    fi
    for row in "${PROGRAMS[@]}"; do
        IFS='|' read -r name src extra <<<"$row"
        read -ra args <<<"$extra"
        for w in "${!args[@]}"; do args[w]=${args[w]//\{CUDA_LIB\}/$(cuda_lib)}; done
        targets=(-arch=sm_90)
        [[ " ${args[*]} " == *" -gencode "* ]] && targets=()
        local cmd=(timeout 300 "$NVCC" "${targets[@]}" -O2 -o "$BIN/$name" "$PROGS/$src" "${args[@]}")
        show "${cmd[@]}"
        ("${cmd[@]}" >"$BIN/$name.log" 2>&1 </dev/null || { rm -f "$BIN/$name"; exit 1; }) &
        pids+=($!)
    done
    [[ $DRIVER == fakecuda ]] && { compile_plugin & pids+=($!); }
    for p in "${pids[@]}"; do wait "$p" || bad=1; done
    for row in "${PROGRAMS[@]}"; do
        name=${row%%|*}
        [[ -f $BIN/$name ]] || say "nvcc FAILED for $name: $(tail -n 3 "$BIN/$name.log" | tr '\n' ' ')"
    done
    return "$bad"
}

# fakecuda runs the programs' kernels from a plugin of host implementations.
compile_plugin() {
    local cmd=(timeout 120 gcc -std=c11 -O2 -Wall -shared -fPIC -I"$REPO/subprojects/fakecuda"
        -o "$BIN/fakecuda_kernels.so" "$PROGS/fakecuda_kernels.c")
    show "${cmd[@]}"
    "${cmd[@]}" >"$BIN/fakecuda_kernels.so.log" 2>&1 </dev/null || {
        say "gcc FAILED for fakecuda_kernels.so: $(tail -n 3 "$BIN/fakecuda_kernels.so.log" | tr '\n' ' ')"
        rm -f "$BIN/fakecuda_kernels.so"
        return 1
    }
}

# The Python programs must at least compile (their bytecode goes under OUT,
# not into the tree).
check_python() {
    local cmd=(timeout 60 env "PYTHONPYCACHEPREFIX=$OUT/pycache" python3 -m py_compile
        "$PROGS"/*.py "$HERE"/*.py)
    show "${cmd[@]}"
    "${cmd[@]}"
}

# ---------------------------------------------------------------- running

# run_mode SCENARIO MODE LIMIT ENV_ALL ENV_SHIM WORD...: one run of the
# scenario's command, its output and exit status into OUT/SCENARIO/MODE.*.
run_mode() {
    local scn=$1 mode=$2 limit=$3 env_all=$4 env_shim=$5
    shift 5
    local dir=$OUT/$scn envs prefix=() extra
    envs=(PYTHONUNBUFFERED=1 "${DRIVER_ENV[@]}")
    read -ra extra <<<"$env_all"
    envs+=("${extra[@]}")
    case $mode in
        shim)
            envs+=("LD_PRELOAD=$SHIM" "CUTAINT_REPORT=$dir/report.jsonl"
                "CUTAINT_HEALTH_FILE=$dir/health" CUTAINT_LOG=info
                "CUTAINT_LOG_FILE=$dir/cutaint.log")
            read -ra extra <<<"$env_shim"
            envs+=("${extra[@]}")
            ;;
        sanitizer)
            # compute-sanitizer runs programs 20-50x slower: far fewer steps.
            envs+=(GPU_SUITE_ITERS=10 GPU_SUITE_WARMUP=2)
            prefix=("${SANITIZER:-compute-sanitizer}" --tool memcheck --print-limit 20)
            ;;
    esac
    local cmd=(timeout -k 10 "$limit" env "${envs[@]}" "${prefix[@]}" "$@")
    if ((DRY_RUN)); then
        [[ $mode == sanitizer ]] && say "# only where compute-sanitizer is installed (here: ${SANITIZER:-not present})"
        show "${cmd[@]}"
        return 0
    fi
    show "${cmd[@]}" >"$dir/$mode.cmd"
    # A health file left by "an earlier process" (cutaint's: it starts with
    # the marker, docs/REPORT.md): the shim must remove it at start, and a
    # latch must replace it.
    [[ $mode == shim ]] && printf '# cutaint health file\nstale: written by run.sh before the run\n' >"$dir/health"
    local t0=$SECONDS rc
    "${cmd[@]}" >"$dir/$mode.stdout" 2>"$dir/$mode.stderr" </dev/null
    rc=$?
    say "$rc" >"$dir/$mode.rc"
    say "$mode: exit $rc after $((SECONDS - t0)) s" >>"$dir/verdict.txt"
}

# run_scenario ROW: run the scenario's modes, then its check.
run_scenario() {
    local name tmpl env_all env_shim check limit modes words=() w mode lim
    IFS='|' read -r name tmpl env_all env_shim check limit modes <<<"$1"
    read -ra words <<<"$tmpl"
    for w in "${!words[@]}"; do
        words[w]=${words[w]//\{BIN\}/$BIN}
        words[w]=${words[w]//\{PROGS\}/$PROGS}
    done
    FAILS=()
    local t0=$SECONDS dir=$OUT/$name
    if [[ $DRIVER == fakecuda ]] && needs_gpu "$name"; then
        ((DRY_RUN)) && say "# scenario $name: skipped on fakecuda (needs a GPU)"
        VERDICT[$name]=SKIP
        REASON[$name]="needs a GPU"
        TOOK[$name]=0
        return 0
    fi
    if ((DRY_RUN)); then
        say "# scenario $name ($check)"
        for mode in $modes; do
            run_mode "$name" "$mode" "$limit" "$env_all" "$env_shim" "${words[@]}"
        done
        return 0
    fi
    rm -rf "$dir"
    mkdir -p "$dir"
    if [[ -n $BUILD_ERR ]]; then
        fail "build failed"
    elif [[ ${words[0]} == python3 && -n $TORCH_ERR ]]; then
        fail "$TORCH_ERR"
    fi
    for w in "${words[@]}"; do
        [[ $w == "$BIN"/* && ! -f $w ]] && fail "not compiled: ${w#"$BIN"/} (see bin/${w#"$BIN"/}.log)"
    done
    if ((${#FAILS[@]} == 0)); then
        for mode in $modes; do
            [[ $mode == sanitizer && -z $SANITIZER ]] && continue
            lim=$(limit_for "$limit")
            if ((BUDGET_S - SECONDS < 15)); then
                fail "not run ($mode): the suite's ${BUDGET_S} s budget is spent"
                break
            fi
            run_mode "$name" "$mode" "$lim" "$env_all" "$env_shim" "${words[@]}"
        done
        ((${#FAILS[@]} == 0)) && "$check" "$name"
    fi
    record "$name" $((SECONDS - t0))
}

needs_gpu() {
    local g
    for g in "${GPU_ONLY[@]}"; do [[ $g == "$1" ]] && return 0; done
    return 1
}

# record SCENARIO SECONDS: the verdict from FAILS.
record() {
    local scn=$1 reasons
    TOOK[$scn]=$2
    if ((${#FAILS[@]} == 0)); then
        VERDICT[$scn]=PASS
        REASON[$scn]=
    else
        VERDICT[$scn]=FAIL
        reasons=$(printf '%s; ' "${FAILS[@]}")
        REASON[$scn]=${reasons%; }
    fi
    {
        say "verdict: ${VERDICT[$scn]}"
        ((${#FAILS[@]} == 0)) || printf '  %s\n' "${FAILS[@]}"
    } >>"$OUT/$scn/verdict.txt"
    say "$(printf '%-4s %-24s %4s s' "${VERDICT[$scn]}" "$scn" "$2") ${REASON[$scn]}"
}

# ---------------------------------------------------------------- checks

# Every check reads OUT/SCENARIO/* and calls fail for what is wrong.

rc_of() { cat "$OUT/$1/$2.rc" 2>/dev/null || say missing; }

# The value of "RESULT KEY=VALUE" in a run's stdout, empty if none.
result() { sed -n "s/^RESULT $3=//p" "$OUT/$1/$2.stdout" 2>/dev/null | tail -n 1; }

# The last non-empty line a run wrote, stderr first: what a reader needs to
# see why it failed.
last_line() {
    local f line
    for f in "$OUT/$1/$2.stderr" "$OUT/$1/$2.stdout"; do
        line=$(grep -v '^[[:space:]]*$' "$f" 2>/dev/null | tail -n 1 | cut -c1-200)
        [[ -n $line ]] && { say "$line"; return; }
    done
    say "none"
}

# expect_rc SCENARIO MODE STATUS
expect_rc() {
    local rc
    rc=$(rc_of "$1" "$2")
    [[ $rc == "$3" ]] && return 0
    case $rc in
        124 | 137) fail "$2: timed out" ;;
        *) fail "$2: exit status $rc, expected $3 (last output: $(last_line "$1" "$2"))" ;;
    esac
}

# expect SCENARIO MODE KEY ALLOWED...: RESULT KEY must be one of ALLOWED.
expect() {
    local scn=$1 mode=$2 key=$3 got a
    shift 3
    got=$(result "$scn" "$mode" "$key")
    for a in "$@"; do [[ $got == "$a" ]] && return 0; done
    fail "$mode: $key=${got:-<none>}, expected $(IFS=/; say "$*")"
}

# expect_not SCENARIO MODE KEY FORBIDDEN...: RESULT KEY must be present and not one of them.
expect_not() {
    local scn=$1 mode=$2 key=$3 got a
    shift 3
    got=$(result "$scn" "$mode" "$key")
    [[ -z $got ]] && { fail "$mode: no $key in the output"; return; }
    for a in "$@"; do [[ $got == "$a" ]] && fail "$mode: $key=$got, expected anything else"; done
}

# check_report_of SCENARIO ARGS...: the shim run's report, by check_report.py
# (each call's findings appended to report-check.txt).
check_report_of() {
    local scn=$1 outp line
    shift
    outp=$(timeout 60 python3 "$HERE/check_report.py" "$OUT/$scn/report.jsonl" "$@" 2>&1)
    local rc=$?
    say "$outp" >>"$OUT/$scn/report-check.txt"
    ((rc == 0)) && return 0
    # The first line describes the report; each later one is a failed check.
    while IFS= read -r line; do
        fail "$line"
    done < <(tail -n +2 <<<"$outp")
    [[ -z $outp ]] && fail "report: check_report.py failed ($rc)"
}

same_output() {
    local d
    d=$(diff "$OUT/$1/base.stdout" "$OUT/$1/shim.stdout" 2>&1) && return 0
    fail "stdout differs with the shim: $(grep -m 2 '^[<>]' <<<"$d" | tr '\n' ' ')"
}

# same_output_except SCENARIO REGEX: stdout is identical but for the lines
# matching REGEX (grep -E) in either run.
same_output_except() {
    local d
    d=$(diff <(grep -Ev "$2" "$OUT/$1/base.stdout") <(grep -Ev "$2" "$OUT/$1/shim.stdout") 2>&1) && return 0
    fail "stdout differs with the shim beyond /$2/: $(grep -m 2 '^[<>]' <<<"$d" | tr '\n' ' ')"
}

health_removed() {
    [[ -e $OUT/$1/health ]] && fail "the stale health file planted before the run is still there"
}

check_same() {
    local s=$1
    expect_rc "$s" base 0
    expect_rc "$s" shim 0
    same_output "$s"
    check_report_of "$s" --only start,exit --require start --exit-status 0
    health_removed "$s"
}

check_refused() {
    local s=$1
    expect_rc "$s" base 0
    expect_rc "$s" shim 0  # an isolated failure must not latch
    # Without the shim: the bug, stale bytes served as a result.
    expect "$s" base memcpy cudaSuccess CUDA_SUCCESS
    expect "$s" base host stale
    # With it: refused, poisoned, named; the fixed retry reads correctly.
    expect_not "$s" shim launch cudaSuccess CUDA_SUCCESS
    expect_not "$s" shim memcpy cudaSuccess CUDA_SUCCESS
    expect "$s" shim host poisoned
    expect "$s" shim retry_memcpy cudaSuccess CUDA_SUCCESS
    expect "$s" shim retry_host correct
    check_report_of "$s" --require failure --require refused_read --kernel failure:scale \
        --path scale --forbid context_lost --exit-status 0
    health_removed "$s"
}

# badconfig without CUTAINT_ARGS: the relaunch with 256 threads per block is
# a retry of the refused one (the same parameters, as many threads in all),
# so it runs and its read is served (docs/DESIGN.md, "Retries").
check_retry() {
    local s=$1
    expect_rc "$s" shim 0
    expect "$s" shim host poisoned
    expect "$s" shim retry_memcpy cudaSuccess CUDA_SUCCESS
    expect "$s" shim retry_host correct
    check_report_of "$s" --require failure --require refused_read --require retry --forbid skip \
        --forbid context_lost --exit-status 0
    health_removed "$s"
}

check_latched() {
    local s=$1 health=$OUT/$1/health
    expect_rc "$s" base 0  # the bug: a dead context, and exit status 0
    expect "$s" base sync cudaErrorIllegalAddress
    expect_rc "$s" shim 70
    # The faulting kernel, wildptr.cu's only launch, is the prime suspect
    # (fakecuda runs it as programs/fakecuda_kernels.c's write_results,
    # which faults on the null slot as the GPU does).
    check_report_of "$s" --require context_lost --prime-suspect write_results --exit-status 70
    if [[ ! -s $health ]]; then
        fail "no health file written"
    elif grep -q '^stale: written by run.sh' "$health"; then
        fail "the health file is still the stale one planted before the run"
    elif ! grep -q ILLEGAL_ADDRESS "$health"; then
        fail "the health file does not name CUDA_ERROR_ILLEGAL_ADDRESS: $(head -c 200 "$health")"
    elif ! grep -q '^prime suspect: write_results' "$health"; then
        fail "the health file names no prime suspect write_results: $(grep -m 1 suspect "$health" || echo none)"
    fi
}

# wrong_arch.cu under one loading mode: the build for sm_80 must be refused
# by the driver (CUDA_ERROR_NO_BINARY_FOR_GPU) and the runtime
# (cudaErrorNoKernelImageForDevice), no kernel may run, and the shim must
# see the same calls fail. Which call said so goes to the notes: it is what
# fakecuda's emulation must match (FAKECUDA_LAZY_IMAGE_ERRORS).
check_wrong_arch() {
    local s=$1 mode=$2 m key point
    expect_rc "$s" base 0
    expect_rc "$s" shim 0
    for m in base shim; do
        expect "$s" "$m" loading_mode "$mode"
        expect "$s" "$m" drv_code CUDA_ERROR_NO_BINARY_FOR_GPU
        expect "$s" "$m" rt_code cudaErrorNoKernelImageForDevice
        expect "$s" "$m" drv_ran no
        expect "$s" "$m" rt_ran no
    done
    for key in drv_point rt_point; do
        [[ $(result "$s" base "$key") == "$(result "$s" shim "$key")" ]] ||
            fail "shim: $key=$(result "$s" shim "$key"), base: $(result "$s" base "$key")"
    done
    check_report_of "$s" --require start --forbid context_lost --exit-status 0
    local where=fakecuda
    [[ $DRIVER == nvidia ]] && where="this GPU"
    point=$(reached "$s" drv_point)
    NOTES+=("$s: CUDA_MODULE_LOADING=$mode on $where:"
        "  driver API: load $(reached "$s" drv_load), lookup $(reached "$s" drv_lookup) (function $(reached "$s" drv_loaded)), cuFuncLoad $(reached "$s" drv_funcload), launch $(reached "$s" drv_launch), sync $(reached "$s" drv_sync): reported at $point ($(reached "$s" drv_code))"
        "  runtime API: cudaMalloc $(reached "$s" rt_malloc), launch $(reached "$s" rt_launch), sync $(reached "$s" rt_sync): reported at $(reached "$s" rt_point) ($(reached "$s" rt_code))")
    if [[ $mode == LAZY && $DRIVER == nvidia ]]; then
        NOTES+=("  fakecuda matches this driver with FAKECUDA_LAZY_IMAGE_ERRORS=$point (its default is load)")
    fi
}

# A base run's RESULT, or "not reached" for a call the program did not make.
reached() {
    local v
    v=$(result "$1" base "$2")
    say "${v:-not reached}"
}

# EAGER loads the module at cuModuleLoad, which must say so.
check_arch_eager() {
    check_wrong_arch "$1" EAGER
    expect "$1" base drv_point load
}

check_arch_lazy() {
    check_wrong_arch "$1" LAZY
}

# arch_read.cu, built for sm_80 only: the runtime cannot use its kernel.
# Without the shim both launches fail (cudaErrorNoKernelImageForDevice) and
# the copy back serves stale bytes; with it the copy is refused and poisoned,
# every other answer stays the same, and the report leads from the refusal
# to the failure of scale to the refused read. Where the driver reported it
# goes to the notes: the runtime's load or the lookup (cutaint answers with
# a stand-in, whose every launch fails as it would have), or, lazily, the
# launch itself. Then the first launch is a plain failure and the second,
# reading its tainted output, is skipped and returns cudaSuccess
# (docs/DESIGN.md, "A skipped launch or copy returns CUDA_SUCCESS").
check_arch_refused() {
    local s=$1 key where differ='^(RESULT (memcpy|host)=|cudaMemcpy back: )'
    expect_rc "$s" base 0
    expect_rc "$s" shim 0  # an isolated failure must not latch
    check_report_of "$s" --require failure --require refused_read --kernel failure:scale \
        --path scale --unusable scale:CUDA_ERROR_NO_BINARY_FOR_GPU --forbid context_lost --exit-status 0
    where=$(sed -n '1s/.* reported at: //p' "$OUT/$s/report-check.txt")
    for key in launch launch_kernel last_error; do
        expect "$s" base "$key" cudaErrorNoKernelImageForDevice
    done
    expect "$s" shim launch cudaErrorNoKernelImageForDevice
    if [[ $where == launch* ]]; then
        expect "$s" shim launch_kernel cudaSuccess
        expect "$s" shim last_error cudaSuccess
        check_report_of "$s" --require skip --kernel skip:scale
        differ='^(RESULT (memcpy|host|launch_kernel|last_error)=|cudaMemcpy back: |cudaLaunchKernel\(scale\): |cudaGetLastError: )'
    else
        expect "$s" shim launch_kernel cudaErrorNoKernelImageForDevice
        expect "$s" shim last_error cudaErrorNoKernelImageForDevice
    fi
    expect "$s" base fill cudaSuccess
    expect "$s" base memcpy cudaSuccess
    expect "$s" base host stale
    expect "$s" shim memcpy cudaErrorNoKernelImageForDevice
    expect "$s" shim host poisoned
    same_output_except "$s" "$differ"
    health_removed "$s"
    local on=fakecuda
    [[ $DRIVER == nvidia ]] && on="this GPU"
    NOTES+=("$s: CUDA_MODULE_LOADING=LAZY on $on: the driver refused the runtime's sm_80 scale at ${where:-<no report>}; with the shim the cudaLaunchKernel launch returned $(result "$s" shim launch_kernel)")
    if [[ $DRIVER == nvidia ]]; then
        case $where in
            cuLibraryLoadData*) key=load ;;
            cuLibraryGetKernel*) key=lookup ;;
            launch*) key=launch ;;
            *) return ;;
        esac
        NOTES+=("  fakecuda matches this driver with FAKECUDA_LAZY_IMAGE_ERRORS=$key (its default is load)")
    fi
}

check_torch_same() {
    local s=$1
    expect_rc "$s" base 0
    expect_rc "$s" shim 0
    expect "$s" base cpu_match 1
    same_output "$s"
    check_report_of "$s" --require start --forbid failure --forbid skip \
        --forbid refused_read --forbid context_lost --exit-status 0
    health_removed "$s"
}

check_torch_inject() {
    local s=$1 mode
    expect_rc "$s" base 0
    expect_rc "$s" shim 0
    for mode in launch derived_launch; do expect "$s" base "$mode" ok; done
    for mode in read_out read_derived read_other; do expect "$s" base "$mode" correct; done
    expect "$s" shim launch raised
    expect "$s" shim read_out raised
    expect "$s" shim read_derived raised
    check_report_of "$s" --require failure --require skip --require refused_read \
        --kernel failure:FillFunctor --injected --forbid context_lost --exit-status 0
    health_removed "$s"
    NOTES+=("$s: with the shim, a tensor the failed kernel never wrote read back: $(result "$s" shim read_other) (allocator $(result "$s" shim allocator))")
}

check_torch_inject_async() {
    local s=$1
    check_torch_inject "$s"
    expect "$s" base allocator cudaMallocAsync
    expect "$s" shim read_other correct
}

# 16 tensors of one caching-allocator segment, tensor 3's fill failing
# (torch_pool.py): without regions cutaint refuses tensor 3 and what
# follows it in the segment, and says the allocation looks like a pool.
check_torch_pool() {
    local s=$1
    expect_rc "$s" base 0
    expect_rc "$s" shim 0
    expect "$s" base refused 0
    expect "$s" shim segments 1
    check_report_of "$s" --require failure --require pool --kernel failure:FillFunctor --injected \
        --forbid context_lost --exit-status 0
    NOTES+=("$s: without regions, $(result "$s" shim refused) of 16 tensors refused")
}

# The same with each tensor declared a region through ctypes: exactly
# tensor 3 is refused, and nothing looks like a pool.
check_torch_regions() {
    local s=$1
    expect_rc "$s" base 0
    expect_rc "$s" shim 0
    expect "$s" base refused 0
    expect "$s" base regions "2:16"
    expect "$s" shim regions "0:16"
    expect "$s" shim refused 1
    check_report_of "$s" --require failure --forbid pool --kernel failure:FillFunctor --injected \
        --forbid context_lost --exit-status 0
}

# The same with the blocks declared by tools/python's allocator-trace
# tracker (compiled on first use: hence the longer limit): exactly tensor
# 3 is refused; without the shim nothing is tracked or compiled.
check_torch_trace() {
    local s=$1
    expect_rc "$s" base 0
    expect_rc "$s" shim 0
    expect "$s" base tracking 0
    expect "$s" shim tracking 1
    expect "$s" base refused 0
    expect "$s" shim refused 1
    check_report_of "$s" --require failure --forbid pool --kernel failure:FillFunctor --injected \
        --forbid context_lost --exit-status 0
}

check_overhead_launch() {
    local s=$1 base shim
    expect_rc "$s" base 0
    expect_rc "$s" shim 0
    check_report_of "$s" --require start --forbid failure --forbid refused_read --exit-status 0
    base=$(result "$s" base launches_per_sec)
    shim=$(result "$s" shim launches_per_sec)
    [[ -n $base && -n $shim ]] || { fail "no launches_per_sec figure"; return; }
    FIGURES+=("$(awk -v b="$base" -v s="$shim" 'BEGIN {
        printf "empty kernel launches/s: %.0f without, %.0f with cutaint (%.1f%% of baseline, %+.3f us per launch)",
            b, s, 100 * s / b, 1e6 / s - 1e6 / b }')")
    # A loose bar, to catch a broken hot path rather than to grade noise.
    awk -v b="$base" -v s="$shim" 'BEGIN { exit !(s >= 0.5 * b) }' ||
        fail "with cutaint, launches/s fell below half the baseline"
}

check_overhead_torch() {
    local s=$1 base shim san rc
    expect_rc "$s" base 0
    expect_rc "$s" shim 0
    [[ $(result "$s" base token_sum_per_iter) == "$(result "$s" shim token_sum_per_iter)" ]] ||
        fail "the loop chose different tokens with the shim"
    check_report_of "$s" --require start --forbid failure --forbid refused_read --exit-status 0
    base=$(result "$s" base ms_per_iter)
    shim=$(result "$s" shim ms_per_iter)
    [[ -n $base && -n $shim ]] || { fail "no ms_per_iter figure"; return; }
    FIGURES+=("$(awk -v b="$base" -v s="$shim" 'BEGIN {
        printf "PyTorch inference loop: %.3f ms/iteration without, %.3f with cutaint (%+.1f%%)", b, s, 100 * (s - b) / b }')")
    if [[ -z $SANITIZER ]]; then
        FIGURES+=("compute-sanitizer: not present")
        return
    fi
    rc=$(rc_of "$s" sanitizer)
    san=$(result "$s" sanitizer ms_per_iter)
    if [[ $rc == 0 && -n $san ]]; then
        FIGURES+=("$(awk -v b="$base" -v z="$san" 'BEGIN {
            printf "PyTorch inference loop under compute-sanitizer memcheck: %.3f ms/iteration (%.1fx the baseline)", z, z / b }')")
    else
        # Informational only: on some machines (gVisor) the sanitizer refuses the device.
        FIGURES+=("compute-sanitizer: no figure (exit $rc: $(cat "$OUT/$s/sanitizer.stdout" "$OUT/$s/sanitizer.stderr" 2>/dev/null | grep -m 1 -iE 'error|not supported' | cut -c1-200))")
    fi
}

# ---------------------------------------------------------------- summary

# Rewritten after every scenario: a suite killed from outside still leaves
# one, in which the scenarios not reached count as failed.
write_summary() {
    local row name reason passed=0 failed=0 skipped=0 f tmp=$OUT/.summary.tmp
    {
        say "cutaint GPU suite: $REPO"
        sed 's/^/  /' "$OUT/environment.txt"
        if [[ -n $BUILD_ERR ]]; then say "build: FAILED: $BUILD_ERR"; else say "build: ${SHIM:-not yet}"; fi
        say ""
        for row in "${SCENARIOS[@]}"; do
            name=${row%%|*}
            if [[ -z ${VERDICT[$name]:-} ]]; then
                printf '%-4s %-24s %s\n' FAIL "$name" "not run: the suite stopped before it"
                failed=$((failed + 1))
                continue
            fi
            reason=${REASON[$name]}
            ((${#reason} > 400)) && reason="${reason:0:400}... (all in $name/verdict.txt)"
            printf '%-4s %-24s %4s s  %s\n' "${VERDICT[$name]}" "$name" "${TOOK[$name]}" "$reason"
            case ${VERDICT[$name]} in
                PASS) passed=$((passed + 1)) ;;
                SKIP) skipped=$((skipped + 1)) ;;
                *) failed=$((failed + 1)) ;;
            esac
        done
        say ""
        say "figures:"
        ((${#FIGURES[@]})) || say "  (none yet)"
        for f in "${FIGURES[@]}"; do say "  $f"; done
        ((${#NOTES[@]})) && say "notes:"
        for f in "${NOTES[@]}"; do say "  $f"; done
        say "suite time: $(elapsed) s"
        say ""
        say "$passed passed, $failed failed, $skipped skipped"
    } >"$tmp"
    mv -f "$tmp" "$OUT/summary.txt"
}

# Everything but the build tree and the binaries, in one file: the device
# tool brings back only a few files per run.
pack_results() {
    # Written outside OUT: a tarball growing in the folder tar reads makes
    # GNU tar report "file changed as we read it" and exit 1.
    local tmp
    tmp=$(mktemp "${TMPDIR:-/tmp}/cutaint-gpu-results.XXXXXX") || return 1
    if timeout 60 tar -czf "$tmp" -C "$OUT" --exclude=./build --exclude=./bin \
        --exclude=./pycache --exclude=./results.tar.gz .; then
        mv -f "$tmp" "$OUT/results.tar.gz"
    else
        rm -f "$tmp"
        say "could not pack the results into results.tar.gz"
    fi
}

# ---------------------------------------------------------------- main

dry_run() {
    say "== prerequisites"
    describe_environment
    say "torch: $(timeout 60 python3 -c 'import torch; print(torch.__version__)' 2>/dev/null || say 'not importable here (needed on the GPU machine)')"
    say "== build (not run in a dry run)"
    build_cutaint
    say "== compile the programs (run for real: nvcc needs no GPU)"
    local ok=0
    compile_programs || ok=1
    say "== check the Python programs parse"
    check_python || ok=1
    say "== scenarios (not run in a dry run): shim = $BUILD/shim/libcutaint.so"
    SHIM=$BUILD/shim/libcutaint.so
    local row
    for row in "${SCENARIOS[@]}"; do run_scenario "$row"; done
    say "== results: $OUT/summary.txt, $OUT/results.tar.gz"
    if ((ok)); then say "dry run: FAILED (see above)"; else say "dry run: ok ($(elapsed) s)"; fi
    return "$ok"
}

full_run() {
    local row
    rm -rf "${OUT:?}/build" "${OUT:?}/bin" "$OUT/summary.txt" "$OUT/results.tar.gz"
    describe_environment >"$OUT/environment.txt"
    [[ $DRIVER == nvidia ]] && check_torch >>"$OUT/environment.txt"  # not in a pipe: it sets TORCH_ERR
    cat "$OUT/environment.txt"
    write_summary
    say "== build"
    build_cutaint
    say "== compile"
    compile_programs >"$OUT/compile.log" 2>&1 || grep -v '^+' "$OUT/compile.log"
    say "== scenarios"
    for row in "${SCENARIOS[@]}"; do
        run_scenario "$row"
        write_summary
    done
    pack_results
    say ""
    tail -n 1 "$OUT/summary.txt"
    say "summary: $OUT/summary.txt"
    grep -q ' 0 failed, ' "$OUT/summary.txt"
}

main() {
    if [[ ${1:-} == --driver ]]; then
        DRIVER=${2:-}
        [[ $DRIVER == nvidia || $DRIVER == fakecuda ]] || usage
        shift 2
    fi
    case ${1:-} in
        --dry-run)
            DRY_RUN=1
            OUT=${2:-$(mktemp -d /tmp/cutaint-gpu-dry.XXXXXX)}
            ;;
        -h | --help | "") usage ;;
        -*) usage ;;
        *) OUT=$1 ;;
    esac
    mkdir -p "$OUT" || exit 2
    OUT=$(cd "$OUT" && pwd)
    BIN=$OUT/bin
    BUILD=$OUT/build
    # The suite decides what the shim sees: nothing from the caller leaks in.
    unset LD_PRELOAD
    local v
    for v in $(compgen -e); do [[ $v == CUTAINT_* ]] && unset "$v"; done
    find_tools
    find_deps
    if [[ $DRIVER == fakecuda ]]; then
        # The programs' kernels come from fakecuda_kernels.so; the checks were
        # written for a fakecuda without device code, so its PTX executor
        # stays off here (subprojects/fakecuda/README.md, FAKECUDA_PTX).
        DRIVER_ENV=("LD_LIBRARY_PATH=$BUILD/subprojects/fakecuda${CUDA_HOME:+:$(cuda_lib)}"
            "FAKECUDA_KERNELS=$BIN/fakecuda_kernels.so" "FAKECUDA_PTX=off")
    fi
    if ((DRY_RUN)); then dry_run; else full_run; fi
}

# Sourcing the file (to try a check function by hand) runs nothing.
[[ ${BASH_SOURCE[0]} == "$0" ]] && main "$@"
