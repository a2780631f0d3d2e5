#!/usr/bin/env python3
"""Generate a synthetic torch.compile cache (inductor_cache + triton_cache) for benchmarks.

Why: the real fixture (shared/fixtures/real-cache-h200.tar.xz, 3,601 files, 363 MB) has one fixed
size. To see how ccpack scales with bytes and with file counts we need caches of any size that look
like the real one to a compressor: same layout, similar file sizes and compressibility, and FX-graph
pickles that embed verbatim copies of Triton kernel files (so long-range matching matters).

How: every file is built from a seeded random.Random, so output is byte-identical for a given
--seed and --embed-root (the absolute root written into __grp__ json files and IR `loc` paths;
default: the absolute OUTDIR).
  * Text IR (.source .ttir .ttgir .llir .ptx, inductor .py) is made of short runs of consecutive
    lines from a per-seed pool of template lines (cross-file redundancy, as in real IR), mixed with
    freshly generated lines holding random numbers. Per-kind zstd -3 ratios land near the real ones.
  * .cubin is an ELF-like header plus runs copied from a per-seed "instruction stream" with some
    random words and zero padding mixed in.
  * fxgraph pickles are a pickle-like header, the text of an inductor module, then verbatim copies of
    the files of ~58% of the kernels, each behind a small pickle-like separator, streamed to disk while
    the kernels are generated (memory stays small).
Sizes: --scale S gives ~410*S kernel folders with real-like (heavy-tailed) sizes, normalised to
229.5 MB*S of Triton files, plus ~133 MB*S of pickles (~363 MB at S=1). --files N gives ~N files,
mostly small kernel folders (~25-30 KB each), pickles scaled in proportion to the Triton bytes.

--tiny (with --files) makes every file small (kernel folders of ~3.5 KB, .py files of ~300 bytes), so that a
million files take about 0.5 GB of bytes (4 GB of 4 KiB blocks): for memory and per-file cost at scale.

Usage: gen_synthetic_cache.py OUTDIR [--scale S | --files N [--tiny]] [--seed K] [--embed-root DIR]
"""
import argparse
import base64
import hashlib
import json
import math
import os
import random
import struct
import sys
import time

TRITON_BYTES_S1 = 229_500_000     # triton_cache bytes of the real fixture
KERNELS_S1 = 410                  # kernel folders of the real fixture (8 files each)
PY_S1, BEST_CONFIG_S1 = 301, 15   # inductor .py files and .best_config files of the real fixture
EMBED_P = 0.58                    # share of kernels whose files are copied into an FX-graph pickle
PICKLE_TARGET = 66_000_000        # about one pickle per this many embedded bytes
# Share of a kernel's bytes per file kind (real fixture), and a floor per kind.
SHARE = {"source": .043, "ttir": .021, "ttgir": .034, "llir": .47, "ptx": .174, "cubin": .25}
FLOOR = {"source": 2000, "ttir": 1500, "ttgir": 2000, "llir": 4000, "ptx": 3000, "cubin": 4000}
FRESH = {"source": .1, "ttir": .2, "ttgir": .2, "llir": .25, "ptx": .5, "py": .2}  # per run of pool lines
RUN = {"source": 14, "ttir": 10, "ttgir": 10, "llir": 8, "ptx": 4, "py": 10}  # longest run of pool lines
POW2 = ["1", "2", "4", "8", "16", "32", "64", "128", "256", "512", "1024", "2048", "4096", "8192"]
OPS = ["gelu", "view", "add", "mul", "div", "expand", "native_layer_norm", "convert_element_type",
       "clone", "transpose", "_to_copy", "sum", "mean", "rsqrt", "sub", "pow", "silu", "sigmoid",
       "exp", "permute", "unsqueeze", "cat", "where", "embedding", "softmax", "_log_softmax"]

# Line templates. Fields: {0},{1} 0..511, {2} 0..63, {3} power of two, {4} 8 hex digits, {5} name.
TEMPLATES = {
    "source": [
        "    tmp{0} = tl.load(in_ptr{2} + (x{1} + {3}*x{2}), xmask, eviction_policy='evict_last').to(tl.float32)",
        "    tmp{0} = tmp{1} * tmp{2}",
        "    tmp{0} = tmp{1} + tmp{2}",
        "    tmp{0} = tl.full([1], {3}, tl.int32)",
        "    tmp{0} = libdevice.erf(tmp{1})",
        "    tmp{0} = tl.broadcast_to(tmp{1}, [XBLOCK, R0_BLOCK])",
        "    tmp{0} = triton_helpers.maximum(tmp{1}, tmp{2})",
        "    x{0} = (xindex % {3})",
        "    x{0} = xindex // {3}",
        "    tl.store(out_ptr{2} + (x{1} + {3}*x{0}), tmp{1}, xmask)",
        "    r0_{0} = r0_index",
        "    acc += tl.dot(a, b, allow_tf32=False, out_dtype=tl.float32)",
        "    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)  # {4}",
        "    xoffset = tl.program_id(0) * XBLOCK",
        "    xmask = xindex < xnumel",
        "def {5}(in_out_ptr0, in_ptr{2}, xnumel, XBLOCK : tl.constexpr):",
    ],
    "ttir": [
        "    %tmp{0} = arith.constant dense<{3}> : tensor<{3}xf32> loc(#loc{1})",
        "    %tmp{0}_{2} = arith.mulf %tmp{1}, %tmp{2} : tensor<{3}xf32> loc(#loc{1})",
        "    %tmp{0}_{2} = arith.addf %tmp{1}, %tmp{2} : tensor<{3}xf32> loc(#loc{1})",
        "    %xindex_{0} = tt.splat %xoffset_{1} : i32 -> tensor<{3}xi32> loc(#loc{2})",
        "    %xindex_{0} = arith.addi %xindex_{1}, %xindex : tensor<{3}xi32> loc(#loc{2})",
        "    %tmp{0}_{1} = tt.addptr %tmp{0}, %xindex_{2} : tensor<{3}x!tt.ptr<bf16>>, tensor<{3}xi32> loc(#loc{1})",
        "    %tmp{0}_{1} = tt.load %tmp{0}_{2} : tensor<{3}x!tt.ptr<bf16>> loc(#loc{1})",
        "    %c{3}_i32 = arith.constant {3} : i32 loc(#loc{2})",
        "    %{0} = arith.cmpi slt, %{1}, %c{3}_i32 : i32 loc(#loc{2})",
        "#loc{0} = loc(\"tmp{1}\"(#loc{2}))",
        "#loc{0} = loc(unknown)",
        "#loc{0} = loc(\"{6}\":{1}:{2})",
        "    tt.store %{0}, %{1}, %{2} : tensor<{3}x!tt.ptr<bf16>> loc(#loc{1})",
    ],
    "ttgir": [
        "    %cst_{0} = arith.constant dense<{3}> : tensor<{3}x1xi32, #blocked{2}> loc(#loc1)",
        "    %{0} = arith.mulf %{1}, %{2} : tensor<{3}xf32, #ttg.slice<{{dim = 1, parent = #blocked}}>> loc(#loc{1})",
        "    %{0} = tt.load %{1}, %{2} : tensor<{3}x{3}x!tt.ptr<bf16>, #blocked{2}> loc(#loc{1})",
        "    %{0} = ttg.local_alloc %{1} : (tensor<{3}x{3}xbf16, #blocked>) -> !ttg.memdesc<{3}x{3}xbf16, #shared, #smem> loc(#loc{2})",
        "    %{0} = ttng.warp_group_dot %{1}, %{2}, %acc {{inputPrecision = 0 : i32}} : !ttg.memdesc<{3}x{3}xbf16> loc(#loc{1})",
        "#blocked{2} = #ttg.blocked<{{sizePerThread = [1, {2}], threadsPerWarp = [{2}, 32], warpsPerCTA = [4, 1], order = [1, 0]}}>",
        "    %pid_m_{0} = arith.remsi %pid, %group_size_{1} : i32 loc(#loc{2})",
        "    %{0} = arith.cmpi sge, %pid_m_{1}, %c0_i32 : i32 loc(#loc{2})",
        "#loc{0} = loc(\"{6}\":{1}:{2})",
    ],
    "llir": [
        "  %{0} = getelementptr bfloat, ptr addrspace(1) %{1}, i64 %{2}, !dbg !{1}",
        "  %{0} = fmul float %{1}, 0x3FE6{4}0000000, !dbg !{2}",
        "  %{0} = fadd float %{1}, %{2}, !dbg !{1}",
        "  %{0} = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.x(), !dbg !{1}",
        "  %{0} = and i32 %{1}, {3}, !dbg !{2}",
        "  %{0} = or disjoint i32 %{1}, %{2}, !dbg !{1}",
        "  %{0} = tail call i16 asm sideeffect \"mov.u16 $0, 0x0;\\0A\\09ld.global.b16 {{ $0 }}, [ $1 + 0 ];\", \"=c,l\"(ptr addrspace(1) %{1}) #4, !dbg !{2}",
        "  %{0} = select i1 %{1}, float %{2}, float %{0}, !dbg !{2}",
        "  %{0} = icmp slt i32 %{1}, {3}, !dbg !{2}",
        "  br i1 %{0}, label %__nv_erff.exit{2}, label %{1}, !dbg !{2}",
        "!{0} = !DILocation(line: {1}, column: {2}, scope: !4)",
        "!{0} = !DILocation(line: {1}, column: {2}, scope: !{0}, inlinedAt: !{1})",
        "  %{0} = tail call float @llvm.nvvm.fma.rn.f(float %{1}, float %{2}, float 0x3F{4}00000000), !dbg !{1}",
        "  store <4 x i32> %{0}, ptr addrspace(3) %{1}, align 16, !dbg !{2}",
    ],
    "ptx": [
        "\tld.global.v4.b32 {{ %r{0}, %r{1}, %r{2}, %r{0} }}, [ %rd{2} + 0 ];",
        "\tmul.f32 \t%r{0}, %r{1}, 0f{4};",
        "\tadd.s32 \t%r{0}, %r{1}, {3};",
        "\t.loc\t1 {1} {2}                          // {6}:{1}:{2}",
        "\tfma.rn.f32 \t%r{0}, %r{1}, %r{2}, 0f{4};",
        "\tsetp.lt.s32 \t%p{2}, %r{1}, {3};",
        "\tmov.b32 \t%r{0}, {3};",
        "$L__BB0_{2}:",
        "\tshfl.sync.bfly.b32\t%r{0}, %r{1}, {2}, 31, -1;",
        "\tcvt.rn.bf16x2.f32 \t%r{0}, %r{1}, %r{2};",
        "\tst.global.v2.b32 [ %rd{2} + 0 ], {{ %r{0}, %r{1} }};",
        "\twgmma.mma_async.sync.aligned.m64n{3}k16.f32.bf16.bf16 {{%r{0}, %r{1}}}, %rd{2}, %rd{2}, p, 1, 1, 0, 1;",
        "\tand.b32 \t%r{0}, %r{1}, {3};",
    ],
    "py": [
        "    tmp{0} = tl.load(in_ptr{2} + (x{1}), xmask).to(tl.float32)",
        "    tmp{0} = tmp{1} * tmp{2}",
        "    x{0} = xindex % {3}",
        "    tl.store(out_ptr{2} + (x{1}), tmp{0}, xmask)",
        "    buf{0} = empty_strided_cuda(({3}, {3}), ({3}, 1), torch.bfloat16)",
        "    extern_kernels.mm(reinterpret_tensor(buf{0}, ({3}, {3}), ({3}, 1), 0), buf{1}, out=buf{2})",
        "    triton_poi_fused_{5}_{2}.run(buf{0}, primals_{1}, {3}, stream=stream0)",
        "    del buf{0}",
        "triton_meta={{'signature': {{'in_out_ptr0': '*bf16', 'xnumel': 'i32', 'XBLOCK': 'constexpr'}}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {{}}, 'configs': [{{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]]}}]}},",
        "inductor_meta={{'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_poi_fused_{5}_{2}', 'mutated_arg_names': ['in_out_ptr0'], 'backend_hash': '{4}{4}', 'num_load': {2}, 'num_reduction': 0}},",
    ],
}
PY_HEADER = """
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.pointwise(
"""


def b32name(*parts, n=52, lower=False):
    """A Triton/Inductor-style base32 hash name, derived from parts (deterministic)."""
    s = base64.b32encode(hashlib.sha256("/".join(map(str, parts)).encode()).digest()).decode()[:n]
    return s.lower() if lower else s


def hexname(*parts):
    return hashlib.sha256("/".join(map(str, parts)).encode()).hexdigest()


class TextGen:
    """Pseudo-IR text: lines from a per-seed pool, with a share of freshly randomised lines."""

    def __init__(self, seed, paths):
        self.paths = paths  # names substituted for {6} (source file names)
        self.pools = {}
        for kind, tpls in TEMPLATES.items():
            rng = random.Random(f"{seed}/pool/{kind}")
            self.pools[kind] = [self.line(rng, tpls) for _ in range(4096)]

    def line(self, rng, tpls, name="kernel"):
        r = rng.getrandbits(32)
        return rng.choice(tpls).format(r & 511, (r >> 9) & 511, (r >> 18) & 63, POW2[(r >> 24) % 14],
                                       "%08X" % rng.getrandbits(32), name, rng.choice(self.paths))

    def text(self, rng, kind, nbytes, head="", name="kernel"):
        """About nbytes of text: runs of consecutive pool lines, some followed by a fresh line."""
        pool, tpls = self.pools[kind], TEMPLATES[kind]
        fresh, maxrun = FRESH[kind], RUN[kind]
        top = len(pool) - maxrun
        out, total = [head], len(head)
        while total < nbytes:
            start = rng.randrange(top)
            run = pool[start:start + rng.randrange(1, maxrun + 1)]
            if rng.random() < fresh:
                run.append(self.line(rng, tpls, name))
            out.append("\n".join(run) + "\n")
            total += len(out[-1])
        return "".join(out).encode()


class BinGen:
    """cubin-like bytes: ELF header, string table, runs from a per-seed instruction stream."""

    def __init__(self, seed):
        rng = random.Random(f"{seed}/pool/cubin")
        ops = [rng.randbytes(8) for _ in range(96)]
        self.stream = b"".join(rng.choice(ops) + rng.randbytes(4) + bytes(4) for _ in range(32768))

    def cubin(self, rng, nbytes, name):
        nb = name.encode()
        head = (b"\x7fELF\x02\x01\x013\x07" + bytes(7) + b"\x02\x00\xbe\x00\x80" + bytes(43)
                + b"\x00.shstrtab\x00.strtab\x00.symtab\x00.symtab_shndx\x00.nv.info\x00"
                + b"".join(b".%s.%s\x00" % (s, nb) for s in (b"text", b"nv.info", b"nv.shared",
                                                               b"nv.constant0", b"rel.text")))
        out, total, s = [head], len(head), self.stream
        while total < nbytes:
            r = rng.getrandbits(32)
            if r & 7 < 2:
                chunk = rng.randbytes(16 * (1 + (r >> 3) % 12))
            elif r & 7 == 2:
                chunk = bytes(16 * (1 + (r >> 3) % 32))
            else:
                off = (r >> 3) % (len(s) // 16 - 64) * 16
                chunk = s[off:off + 16 * (4 + (r >> 20) % 48)]
            out.append(chunk)
            total += len(chunk)
        return b"".join(out)


def kernel_name(rng, kbytes):
    if kbytes > 700_000:
        return rng.choice(["triton_mm", "triton_mm", "triton_bmm", f"triton_tem_fused_addmm_{rng.randrange(8)}",
                           f"triton_tem_fused_mm_t_{rng.randrange(8)}"])
    kind = rng.choice(["poi", "poi", "red", "per"])
    ops = "_".join(sorted(rng.sample(OPS, rng.randrange(1, 4))))
    return f"triton_{kind}_fused_{ops}_{rng.randrange(40)}"


TINY = False  # --tiny: every floor / 20, kernels of 1-3 KB, .py files of ~300 bytes (a million files on few GB)


def file_sizes(k):
    return {t: max(FLOOR[t] // (20 if TINY else 1), int(SHARE[t] * k)) for t in SHARE}


def plan_kernels(rng, args):
    """Return the list of per-kernel byte budgets."""
    if args.files:
        n = max(1, round(args.files * 0.91 / 8))
        if TINY:
            return [rng.uniform(1_000, 3_000) for _ in range(n)]
        return [min(300_000, max(4_000, rng.lognormvariate(math.log(12_000), 0.6))) for _ in range(n)]
    n = max(1, round(KERNELS_S1 * args.scale))
    ks = [min(2_800_000, max(20_000, rng.lognormvariate(math.log(260_000), 1.2))) for _ in range(n)]
    target = TRITON_BYTES_S1 * args.scale
    for _ in range(6):  # normalise so that the triton bytes hit the target (floors make it nonlinear)
        cur = sum(sum(file_sizes(k).values()) + 2300 for k in ks)
        ks = [k * target / cur for k in ks]
    return ks


def write(path, data, mkdir=True):
    if mkdir:
        os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    return len(data)


def kernel_meta(rng, name):
    return {"hash": hexname(name, rng.getrandbits(64)), "target": {"backend": "cuda", "arch": 90, "warp_size": 32},
            "num_warps": rng.choice([2, 4, 8]), "num_ctas": 1, "num_stages": rng.choice([1, 2, 3, 4, 5]),
            "warp_size": 32, "maxnreg": None, "ptx_version": None, "ptx_options": None, "ir_override": None,
            "enable_fp_fusion": True, "enable_reflect_ftz": True, "launch_cooperative_grid": False,
            "launch_pdl": False, "supported_fp8_dtypes": ["fp8e4b15", "fp8e4nv", "fp8e5"],
            "deprecated_fp8_dot_operand_dtypes": ["fp8e4b15"], "default_dot_input_precision": "tf32",
            "allowed_dot_input_precisions": ["tf32", "tf32x3", "ieee", "bf16x3", "bf16x6"],
            "max_num_imprecise_acc_default": 1073741824,
            "extern_libs": [["libdevice", "/opt/torch/.venv/lib/python3.12/site-packages/triton/backends/nvidia/lib/libdevice.10.bc"]],
            "debug": True, "backend_name": "cuda", "sanitize_overflow": False, "arch": "sm90",
            "instrumentation_mode": "", "triton_version": "3.6.0", "tensordesc_meta": [],
            "shared": rng.choice([0, 0, 16384, 65536, 131072]), "tmem_size": 0, "global_scratch_size": 0,
            "global_scratch_align": 1, "profile_scratch_size": 0, "profile_scratch_align": 1, "name": name}


def pickle_entry(fname, data):
    """A separator mimicking how CompiledFxGraph pickles hold Triton files (bytes object B<len>)."""
    n = fname.encode()
    return (b"\x94ubj\xfe\x02\x00\x00)\x81\x94}\x94(j\x01\x03\x00\x00\x8c" + bytes([len(n)]) + n
            + b"\x94j\x03\x03\x00\x00B" + struct.pack("<I", len(data)) + data)


def generate(args):
    t0 = time.time()
    out = os.path.abspath(args.outdir)
    root = os.path.abspath(args.embed_root or out)
    ind, tri = os.path.join(out, "inductor_cache"), os.path.join(out, "triton_cache")
    for d in (ind, tri):
        if os.path.exists(d):
            sys.exit(f"error: {d} exists; pick an empty OUTDIR")
    rng = random.Random(f"{args.seed}/plan")
    ks = plan_kernels(rng, args)
    frac = (args.files / 3601) if args.files else args.scale
    n_py, n_best = max(2, round(PY_S1 * frac)), max(1, round(BEST_CONFIG_S1 * frac))
    nfiles = nbytes = 0

    # inductor .py files (a few large "output code" modules, many ~4.5 KB kernel files; some duplicates)
    py_names = [b32name(args.seed, "py", i, n=51, lower=True) for i in range(n_py)]
    py_paths = [f"{root}/inductor_cache/{p[:2]}/c{p}.py" for p in py_names]
    tg = TextGen(args.seed, [p.rsplit("/", 1)[1] for p in py_paths[:64]])
    bg = BinGen(args.seed)
    texts, module = [], b""
    for i, p in enumerate(py_names):
        r = random.Random(f"{args.seed}/py/{i}")
        if texts and r.random() < 0.25:
            data = r.choice(texts)
        else:
            size = r.randrange(60_000, 130_000) if r.random() < 0.01 else int(4500 * r.lognormvariate(0, 0.2))
            size = min(size, int(300 * r.lognormvariate(0, 0.2))) if TINY else size
            data = tg.text(r, "py", size, PY_HEADER)
            module = max(module, data, key=len)
            texts.append(data)
        nbytes += write(f"{ind}/{p[:2]}/c{p}.py", data)
    for i in range(n_best):
        r = random.Random(f"{args.seed}/best/{i}")
        cfg = {"XBLOCK": r.choice([64, 128, 256, 1024]), "R0_BLOCK": r.choice([8, 32, 64]), "num_warps": r.choice([4, 8]),
               "num_stages": 1, "configs_hash": hexname(args.seed, "cfg", i), "found_by_coordesc": True,
               "time_taken_ms": r.randrange(300, 5000), "triton_cache_hash": None}
        nbytes += write(f"{ind}/{py_names[i % n_py][:2]}/{hexname(args.seed, 'best', i)}.best_config", json.dumps(cfg).encode())
    r = random.Random(f"{args.seed}/cache")
    sysinfo = json.dumps({"system": {"device": {"name": "NVIDIA H200"}, "version": {"triton": hexname(args.seed, "v") * 40}},
                          "cache": {hexname(args.seed, "c", i): [r.randrange(10**6) for _ in range(4)] for i in range(max(1, int(150 * min(frac, 4))))}},
                         indent=4).encode()
    nbytes += write(f"{ind}/cache/{hexname(args.seed, 'cache')}", sysinfo)
    nfiles += n_py + n_best + 1

    # FX-graph pickles (streamed) and aotautograd entries
    n_pk = max(1, round(sum(sum(file_sizes(k).values()) for k in ks) * EMBED_P / PICKLE_TARGET))
    pickles = []
    for j in range(n_pk):
        a, b = b32name(args.seed, "fx", j, lower=True), b32name(args.seed, "fxf", j, n=51, lower=True)
        path = f"{ind}/fxgraph/{a[1:3]}/f{a[1:]}/{b}"
        os.makedirs(os.path.dirname(path), exist_ok=True)
        f = open(path, "wb")
        f.write(b"\x80\x04\x95\xcc\x00\x00\x00\x00\x00\x00\x00\x8c\x1btorch._inductor.output_code\x94\x8c\x0f"
                b"CompiledFxGraph\x94\x93\x94)\x81\x94}\x94(\x8c\x0bsource_code\x94X"
                + struct.pack("<I", len(module)) + module)
        pickles.append(f)
    for j in range(max(1, n_pk // 2)):
        a, b = b32name(args.seed, "aot", j, lower=True), b32name(args.seed, "aotf", j, n=51, lower=True)
        r = random.Random(f"{args.seed}/aot/{j}")
        data = (b"\x80\x04\x95w\x00\x01\x00\x00\x00\x00\x00\x8c2torch._functorch._aot_autograd.aot_autograd_result\x94"
                + tg.text(r, "py", int(150_000 * min(frac, 1)) + 1000) + r.randbytes(int(60_000 * min(frac, 1)) + 100))
        nbytes += write(f"{ind}/aotautograd/a{a[1:]}/{b}", data)
        nfiles += 1

    # triton kernel folders
    os.makedirs(tri)
    for i, k in enumerate(ks):
        r = random.Random(f"{args.seed}/kernel/{i}")
        h = b32name(args.seed, "kernel", i)
        name = kernel_name(r, k)
        sz = file_sizes(k)
        kdir = f"{tri}/{h}"
        os.mkdir(kdir)
        loc = f'#loc = loc("{r.choice(py_paths)}":18:0)\n'
        files = {
            f"{name}.source": tg.text(r, "source", sz["source"], f"@triton.jit\ndef {name}(in_out_ptr0, xnumel, XBLOCK : tl.constexpr):\n", name),
            f"{name}.ttir": tg.text(r, "ttir", sz["ttir"], loc + f"module {{\n  tt.func public @{name}(%in_out_ptr0: !tt.ptr<bf16>)\n", name),
            f"{name}.ttgir": tg.text(r, "ttgir", sz["ttgir"], loc + '#blocked = #ttg.blocked<{sizePerThread = [1, 8]}>\nmodule attributes {"ttg.num-warps" = 4 : i32, ttg.target = "cuda:90"} {\n', name),
            f"{name}.llir": tg.text(r, "llir", sz["llir"], f"; ModuleID = 'LLVMDialectModule'\nsource_filename = \"LLVMDialectModule\"\ndefine ptx_kernel void @{name}(ptr addrspace(1) %0, i32 %1) local_unnamed_addr #0 !dbg !5 {{\n", name),
            f"{name}.ptx": tg.text(r, "ptx", sz["ptx"], f"//\n// Generated by LLVM NVPTX Back-End\n//\n\n.version 8.7\n.target sm_90a\n.address_size 64\n\n.visible .entry {name}(\n", name),
            f"{name}.cubin": bg.cubin(r, sz["cubin"], name),
            f"{name}.json": json.dumps(kernel_meta(r, name)).encode(),
        }
        grp = {"child_paths": {fn: f"{root}/triton_cache/{h}/{fn}" for fn in files}}
        files[f"__grp__{name}.json"] = json.dumps(grp).encode()
        for fn, data in files.items():
            nbytes += write(f"{kdir}/{fn}", data, mkdir=False)
        nfiles += len(files)
        if r.random() < EMBED_P:
            f = pickles[r.choices(range(n_pk), weights=[1.4 if j % 2 == 0 else 1.0 for j in range(n_pk)])[0]]
            for fn, data in files.items():
                if not fn.startswith("__grp__"):
                    f.write(pickle_entry(fn, data))

    # one launcher .so, then close the pickles with some non-kernel tail bytes
    r = random.Random(f"{args.seed}/so")
    so = b"\x7fELF\x02\x01\x01" + bytes(9) + r.randbytes(20_000) + bytes(8_000) + b"cuda_utils\x00PyInit_cuda_utils\x00" * 64
    nbytes += write(f"{tri}/{b32name(args.seed, 'so')}/cuda_utils.cpython-312-x86_64-linux-gnu.so", so)
    nfiles += 1
    for j, f in enumerate(pickles):
        r = random.Random(f"{args.seed}/pickletail/{j}")
        tail = tg.text(r, "py", int(f.tell() * 0.01) + 1000) + r.randbytes(int(f.tell() * 0.005)) + b"\x94ub."
        f.write(tail)
        nbytes += f.tell()
        nfiles += 1
        f.close()
    print(f"generated {nfiles} files, {nbytes / 1e6:.1f} MB ({len(ks)} kernels, {n_pk} fxgraph pickles) "
          f"in {out} [{time.time() - t0:.1f} s]", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir", help="creates OUTDIR/inductor_cache and OUTDIR/triton_cache (must not exist)")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--scale", type=float, default=1.0, help="1.0 ~ 363 MB / 3,600 files like the real cache")
    g.add_argument("--files", type=int, help="target about N files (many small kernel folders)")
    ap.add_argument("--tiny", action="store_true", help="with --files: every file small (see above)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--embed-root", help="absolute root written into __grp__ json and IR paths (default: OUTDIR)")
    args = ap.parse_args()
    if args.scale <= 0 or (args.files is not None and args.files < 50):
        ap.error("--scale must be > 0 and --files >= 50")
    if args.tiny and not args.files:
        ap.error("--tiny needs --files")
    global TINY
    TINY = args.tiny
    generate(args)


if __name__ == "__main__":
    main()
