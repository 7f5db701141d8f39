#!/usr/bin/env bash
# Debian's ffmpeg, an unmodified third-party loader of libcuda.so.1, moves
# frames through its CUDA hwcontext (hwupload, hwdownload) on fakecuda:
#   ffmpeg.sh SHIM FAKECUDA_DIR
# - without and with the shim, the frames come back byte-identical;
# - with the first upload injected to fail (CUTAINT_INJECT='api:cuMemcpy2DAsync*#1'),
#   the download of that plane is refused and poisoned (0xff), the later
#   frames are correct, and the report names the failed copy and the refusal.
# Skipped (77) where ffmpeg is not installed (scripts/setup.sh installs it).
set -euo pipefail
shim=$1 fakecuda=$2
if ! command -v ffmpeg >/dev/null; then
    echo "skipped: ffmpeg is not installed (Debian package ffmpeg)"
    exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

w=320 h=240 frames=3
luma=$((w * h)) frame=$((w * h * 3 / 2))
ffmpeg -nostdin -hide_banner -loglevel error -f lavfi -i "testsrc=size=${w}x${h}:rate=5" \
    -frames:v $frames -pix_fmt yuv420p -f rawvideo in.yuv

roundtrip() { # OUT [env...]: upload and download every frame through CUDA
    local out=$1; shift
    env LD_LIBRARY_PATH="$fakecuda" "$@" ffmpeg -nostdin -hide_banner -loglevel error \
        -init_hw_device cuda=cu -filter_hw_device cu \
        -f rawvideo -pix_fmt yuv420p -s ${w}x${h} -i in.yuv \
        -vf format=yuv420p,hwupload,hwdownload,format=yuv420p -f rawvideo "$out" -y
}
fail() { echo "FAIL: $*"; exit 1; }

roundtrip plain.yuv || fail "ffmpeg on fakecuda without the shim"
cmp -s in.yuv plain.yuv || fail "frames changed on fakecuda without the shim"
roundtrip shim.yuv LD_PRELOAD="${CT_PRELOAD_FIRST:+$CT_PRELOAD_FIRST }$shim" || fail "ffmpeg under the shim"
cmp -s in.yuv shim.yuv || fail "frames changed under the shim"
echo "ok: $frames frames byte-identical without and with the shim"

roundtrip injected.yuv LD_PRELOAD="${CT_PRELOAD_FIRST:+$CT_PRELOAD_FIRST }$shim" CUTAINT_REPORT="$work/report.jsonl" \
    CUTAINT_INJECT='api:cuMemcpy2DAsync*#1' 2>stderr.txt || true
[ "$(stat -c %s injected.yuv)" -eq $((frame * frames)) ] || fail "ffmpeg wrote $(stat -c %s injected.yuv) bytes"
poisoned=$(head -c $luma injected.yuv | tr -d '\377' | wc -c)
[ "$poisoned" -eq 0 ] || fail "$poisoned bytes of frame 1's luma plane are not the poison byte"
cmp -s <(tail -c +$((frame + 1)) in.yuv) <(tail -c +$((frame + 1)) injected.yuv) ||
    fail "the frames after the failed upload differ"
grep -q '"event":"failure".*"api":"cuMemcpy2DAsync_v2".*"injected":true' report.jsonl ||
    fail "the report does not name the failed upload"
grep -q "\"event\":\"refused_read\".*\"api\":\"cuMemcpy2DAsync_v2\".*\"bytes\":$luma,.*\"poisoned\":true" report.jsonl ||
    fail "the report has no refused $luma-byte download"
grep -q 'cutaint: refused read: cuMemcpy2DAsync_v2' stderr.txt || fail "no refusal line on stderr"
echo "ok: the failed upload's plane was refused and poisoned, later frames intact"
